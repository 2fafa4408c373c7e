// The work of compacting one interval, before anything is committed: each
// input segment is read from deep storage and checked (its SHA-256 against
// the one recorded at its commit, its CRC-32C, row count and id), each group
// of inputs is merged into one segment (common/segment/compaction.h), and
// each output is pushed to deep storage and described (compacted_segment.h).
//
// Output keys: "<datasource>/<start>_<end>/<version>/<partition>/
// compaction_<16 hex of the group's input ids>_<n>.sluice", the layout a
// task's pushes have. A push never overwrites; a key that exists already (a
// run that crashed after its push) holding the same bytes counts as pushed,
// one holding other bytes moves to the next n. So a rerun with the same
// version reuses its earlier copy, and a rerun with a new version pushes
// anew (the earlier copy, never committed, is an orphan).
#ifndef SLUICE_SUPERVISOR_COMPACTION_SEGMENT_COMPACTION_H_
#define SLUICE_SUPERVISOR_COMPACTION_SEGMENT_COMPACTION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "sluice/v1/common.pb.h"
#include "supervisor/compaction/compacted_segment.h"

namespace sluice::supervisor {

struct IntervalCompactionRequest {
  std::string datasource;
  v1::Interval interval;
  // One compacted segment per group (partition numbers 0..k-1, in order).
  std::vector<std::vector<v1::SegmentDescriptor>> groups;
  // The compacted segments' version: later than every segment of the
  // interval's (CompactionVersion).
  std::string version;
};

// The version of a compaction at `now` of an interval holding `segments`:
// max(now, the newest of their versions + 1 ms), an ISO instant. Versions
// that are not ISO instants are ignored.
std::string CompactionVersion(absl::Time now, const std::vector<v1::SegmentDescriptor>& segments);

// `scratch_dir` (created if missing) receives the downloaded inputs, removed
// before this returns, and the compacted files, which stay (the outputs'
// local_path) for the caller to remove once done with them.
// INVALID_ARGUMENT for an empty or one-segment group, a missing version or
// an input of another datasource or interval; DATA_LOSS for an input whose
// copy is not what its descriptor and commit say; FAILED_PRECONDITION from
// the merge (inputs of different schemas, overlapping Kafka ranges);
// storage errors as the storage returns them (UNAVAILABLE: retry).
absl::StatusOr<IntervalCompaction> CompactInterval(DeepStorage* deep_storage,
                                                   const std::string& scratch_dir,
                                                   const IntervalCompactionRequest& request);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_SEGMENT_COMPACTION_H_
