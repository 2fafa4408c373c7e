// What one supervisor's compactions did, per datasource, since it started:
// the committed ones (the newest kRecentCompactions kept), their totals, the
// conflicts (a compaction that lost a race and was planned again), the
// interval being compacted, the last error (cleared by the next success),
// the pending intervals of the last plan and the Iceberg snapshots expired.
// Thread-safe: the compaction runner writes, status reads (Fill).
#ifndef SLUICE_SUPERVISOR_COMPACTION_COMPACTION_ACTIVITY_H_
#define SLUICE_SUPERVISOR_COMPACTION_COMPACTION_ACTIVITY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::supervisor {

// Committed compactions kept per datasource (CompactionStatus.recent).
inline constexpr int kRecentCompactions = 20;
// Bytes of a last error kept (CompactionStatus.last_error).
inline constexpr size_t kMaxCompactionErrorBytes = 4096;

class CompactionActivity {
 public:
  // A compaction of `interval` starts / ends (committed or not).
  void Started(const std::string& datasource, const v1::Interval& interval)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Finished(const std::string& datasource) ABSL_LOCKS_EXCLUDED(mu_);
  // A committed compaction that replaced `segments_replaced` segments;
  // clears the last error.
  void Committed(const std::string& datasource, const v1::CompactionRecord& record,
                 int64_t segments_replaced) ABSL_LOCKS_EXCLUDED(mu_);
  void Conflict(const std::string& datasource) ABSL_LOCKS_EXCLUDED(mu_);
  void Failed(const std::string& datasource, const absl::Status& error, absl::Time at)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The pending entries of the latest plan (replacing the earlier ones).
  void SetPending(const std::string& datasource, std::vector<v1::PendingCompaction> pending)
      ABSL_LOCKS_EXCLUDED(mu_);
  void SnapshotsExpired(const std::string& datasource, int64_t count) ABSL_LOCKS_EXCLUDED(mu_);

  // Everything recorded for the datasource (newest compaction first); the
  // `enabled` field is the caller's (the spec's).
  void Fill(const std::string& datasource, v1::CompactionStatus* status) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Datasource {
    int64_t compactions = 0;
    int64_t segments_replaced = 0;
    int64_t rows_compacted = 0;
    int64_t conflicts = 0;
    std::deque<v1::CompactionRecord> recent;  // newest first
    std::vector<v1::PendingCompaction> pending;
    std::optional<v1::Interval> running;
    std::string last_error;
    int64_t last_error_ms = 0;
    int64_t snapshots_expired = 0;
  };

  mutable absl::Mutex mu_;
  std::map<std::string, Datasource> datasources_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_COMPACTION_ACTIVITY_H_
