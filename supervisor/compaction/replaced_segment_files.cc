#include "supervisor/compaction/replaced_segment_files.h"

#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "glog/logging.h"

namespace sluice::supervisor {

absl::StatusOr<int64_t> RemoveReplacedSegmentFiles(MetadataStore& store, DeepStorage& storage,
                                                   absl::Duration retention, absl::Time now,
                                                   int limit) {
  std::vector<std::pair<std::string, std::string>> due;
  SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(
        due, txn.ReplacedSegmentFilesToRemove(absl::ToUnixMillis(now - retention), limit));
    return absl::OkStatus();
  }));
  absl::Status first_error;
  int64_t removed = 0;
  for (const auto& file : due) {
    const std::string& id = file.first;  // named, not bound: the lambda below uses it
    const std::string& path = file.second;
    absl::Status deleted = storage.Delete(path);
    if (!deleted.ok()) {
      LOG(WARNING) << "[compaction] file of replaced segment " << id << " not removed: "
                   << deleted;
      if (first_error.ok()) first_error = deleted;
      continue;
    }
    SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) {
      return txn.SetSegmentFileRemoved(id, absl::ToUnixMillis(now));
    }));
    ++removed;
  }
  if (!first_error.ok()) return first_error;
  return removed;
}

}  // namespace sluice::supervisor
