#include "supervisor/compaction/compaction_activity.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {

void CompactionActivity::Started(const std::string& datasource, const v1::Interval& interval) {
  absl::MutexLock lock(&mu_);
  datasources_[datasource].running = interval;
}

void CompactionActivity::Finished(const std::string& datasource) {
  absl::MutexLock lock(&mu_);
  datasources_[datasource].running.reset();
}

void CompactionActivity::Committed(const std::string& datasource,
                                   const v1::CompactionRecord& record,
                                   int64_t segments_replaced) {
  absl::MutexLock lock(&mu_);
  Datasource& d = datasources_[datasource];
  ++d.compactions;
  d.segments_replaced += segments_replaced;
  d.rows_compacted += record.rows();
  d.recent.push_front(record);
  while (d.recent.size() > static_cast<size_t>(kRecentCompactions)) d.recent.pop_back();
  d.last_error.clear();
  d.last_error_ms = 0;
}

void CompactionActivity::Conflict(const std::string& datasource) {
  absl::MutexLock lock(&mu_);
  ++datasources_[datasource].conflicts;
}

void CompactionActivity::Failed(const std::string& datasource, const absl::Status& error,
                                absl::Time at) {
  std::string text = error.ToString();
  if (text.size() > kMaxCompactionErrorBytes) {
    // Cut at a UTF-8 character boundary.
    size_t cut = kMaxCompactionErrorBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
  }
  absl::MutexLock lock(&mu_);
  Datasource& d = datasources_[datasource];
  d.last_error = std::move(text);
  d.last_error_ms = absl::ToUnixMillis(at);
}

void CompactionActivity::SetPending(const std::string& datasource,
                                    std::vector<v1::PendingCompaction> pending) {
  absl::MutexLock lock(&mu_);
  datasources_[datasource].pending = std::move(pending);
}

void CompactionActivity::SnapshotsExpired(const std::string& datasource, int64_t count) {
  absl::MutexLock lock(&mu_);
  datasources_[datasource].snapshots_expired += count;
}

void CompactionActivity::Fill(const std::string& datasource,
                              v1::CompactionStatus* status) const {
  absl::MutexLock lock(&mu_);
  const auto it = datasources_.find(datasource);
  if (it == datasources_.end()) return;
  const Datasource& d = it->second;
  status->set_compactions(d.compactions);
  status->set_segments_replaced(d.segments_replaced);
  status->set_rows_compacted(d.rows_compacted);
  status->set_conflicts(d.conflicts);
  status->clear_recent();
  for (const v1::CompactionRecord& r : d.recent) *status->add_recent() = r;
  status->clear_pending();
  for (const v1::PendingCompaction& p : d.pending) *status->add_pending() = p;
  if (d.running) {
    *status->mutable_running() = *d.running;
  } else {
    status->clear_running();
  }
  status->set_last_error(d.last_error);
  status->set_last_error_ms(d.last_error_ms);
  status->set_snapshots_expired(d.snapshots_expired);
}

}  // namespace sluice::supervisor
