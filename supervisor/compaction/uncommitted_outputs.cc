#include "supervisor/compaction/uncommitted_outputs.h"

#include <glog/logging.h>

#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::supervisor {
namespace {

// Rows listed at most to know the interval's segment paths.
constexpr int kMaxIntervalSegments = 1000000;

std::string BaseName(const std::string& uri) {
  const size_t slash = uri.rfind('/');
  return slash == std::string::npos ? uri : uri.substr(slash + 1);
}

}  // namespace

std::string CompactionKeyPrefix(const std::string& datasource, const v1::Interval& interval) {
  return absl::StrCat(datasource, "/", interval.start_ms(), "_", interval.end_ms(), "/");
}

absl::StatusOr<int64_t> RemoveUncommittedCompactionOutputs(MetadataStore& store,
                                                           DeepStorage& storage,
                                                           const std::string& datasource,
                                                           const v1::Interval& interval) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<DeepStorageFileInfo> files,
                          storage.List(CompactionKeyPrefix(datasource, interval)));
  std::vector<std::string> candidates;
  for (const DeepStorageFileInfo& f : files) {
    if (absl::StartsWith(BaseName(f.uri), "compaction_")) candidates.push_back(f.uri);
  }
  if (candidates.empty()) return 0;
  std::set<std::string> named;
  SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(std::vector<v1::SegmentDescriptor> segments,
                            txn.ListSegments(datasource, &interval, /*include_unused=*/true,
                                             kMaxIntervalSegments));
    for (const v1::SegmentDescriptor& s : segments) named.insert(s.path());
    return absl::OkStatus();
  }));
  int64_t removed = 0;
  absl::Status first_error;
  for (const std::string& uri : candidates) {
    if (named.count(uri) > 0) continue;
    const absl::Status deleted = storage.Delete(uri);
    if (!deleted.ok()) {
      LOG(WARNING) << "could not remove the uncommitted compacted segment " << uri << ": "
                   << deleted;
      if (first_error.ok()) first_error = deleted;
      continue;
    }
    LOG(INFO) << "removed " << uri << ": a compaction pushed it and never committed it";
    ++removed;
  }
  if (!first_error.ok()) return first_error;
  return removed;
}

}  // namespace sluice::supervisor
