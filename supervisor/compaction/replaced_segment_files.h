// Removal of the deep-storage files of segments a compaction replaced, once
// they have been replaced for `retention` (Druid's kill of unused segments'
// files): the metadata rows stay (the commit log and the audit still name
// them, segment_replacements says what replaced them), the file goes, and
// the row records when (segments.file_removed_at_ms) so it is removed once.
// Housekeeping runs it every 10 minutes.
#ifndef SLUICE_SUPERVISOR_COMPACTION_REPLACED_SEGMENT_FILES_H_
#define SLUICE_SUPERVISOR_COMPACTION_REPLACED_SEGMENT_FILES_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

// Files removed in this pass (at most `limit`). A file that cannot be
// removed (storage error) stays due and is tried again next pass; the first
// such error is returned after the others were tried.
absl::StatusOr<int64_t> RemoveReplacedSegmentFiles(MetadataStore& store, DeepStorage& storage,
                                                   absl::Duration retention, absl::Time now,
                                                   int limit = 1000);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_REPLACED_SEGMENT_FILES_H_
