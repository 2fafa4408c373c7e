#include "supervisor/iceberg/iceberg_table_activity.h"

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {
namespace {

// The proto's bound on last_commit_error.
constexpr size_t kMaxErrorBytes = 4096;

}  // namespace

void IcebergTableActivity::NoteCommit(const std::string& datasource, int64_t snapshot_id,
                                      int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[datasource];
  entry.last_snapshot_id = snapshot_id;
  entry.last_commit_ms = now_ms;
  entry.last_error.clear();
  entry.last_error_ms = 0;
}

void IcebergTableActivity::NoteFailure(const std::string& datasource, const absl::Status& status,
                                       int64_t now_ms) {
  std::string text = status.ToString(absl::StatusToStringMode::kWithNoExtraData);
  if (text.size() > kMaxErrorBytes) text.resize(kMaxErrorBytes);
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[datasource];
  entry.last_error = std::move(text);
  entry.last_error_ms = now_ms;
}

void IcebergTableActivity::NoteOrphansRemoved(const std::string& datasource, int64_t files) {
  absl::MutexLock lock(&mu_);
  entries_[datasource].orphan_files_removed += files;
}

void IcebergTableActivity::Fill(const std::string& datasource,
                                v1::IcebergTableStatus* status) const {
  absl::MutexLock lock(&mu_);
  const auto it = entries_.find(datasource);
  if (it == entries_.end()) return;
  const Entry& entry = it->second;
  status->set_last_snapshot_id(entry.last_snapshot_id);
  status->set_last_commit_ms(entry.last_commit_ms);
  status->set_last_commit_error(entry.last_error);
  status->set_last_commit_error_ms(entry.last_error_ms);
  status->set_orphan_files_removed(entry.orphan_files_removed);
}

}  // namespace sluice::supervisor
