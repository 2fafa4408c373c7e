// Removal of a compaction's pushed outputs that were never committed (the
// supervisor died, or lost its leadership, between the push and the commit
// transaction): compacted segment files under an interval's key prefix
// (<datasource>/<start>_<end>/..., named compaction_*) that no segment row
// of the datasource names, used or not. A job runs it for its interval
// before it compacts: compaction of a datasource runs one job at a time in
// the leading supervisor, so no other compaction of the interval is between
// its push and its commit then; a deposed leader's late push is not listed
// or, if listed and removed, its commit is refused by the store's leader
// fence. Published (ingested) segments are never named compaction_*.
#ifndef SLUICE_SUPERVISOR_COMPACTION_UNCOMMITTED_OUTPUTS_H_
#define SLUICE_SUPERVISOR_COMPACTION_UNCOMMITTED_OUTPUTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/deep_storage.h"
#include "sluice/v1/common.pb.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

// The key prefix of an interval's compacted segment files.
std::string CompactionKeyPrefix(const std::string& datasource, const v1::Interval& interval);

// Files removed. Errors: the listing's and the store's (nothing removed);
// a removal that fails is returned after the others were tried.
absl::StatusOr<int64_t> RemoveUncommittedCompactionOutputs(MetadataStore& store,
                                                           DeepStorage& storage,
                                                           const std::string& datasource,
                                                           const v1::Interval& interval);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_UNCOMMITTED_OUTPUTS_H_
