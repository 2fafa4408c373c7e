// The last hour of each datasource's lag, for the web console's chart: one
// point per sample (total records behind, per partition, the worst time lag,
// and the records read so far: the sum of the current offsets, whose change
// over time is the ingest rate), from the statuses the supervisor shows. Points older than the window
// are dropped; a sample closer than `min_step` to the previous one is
// skipped, so memory stays at window / min_step points per datasource.
// Thread-safe.
#ifndef SLUICE_SUPERVISOR_CONSOLE_LAG_HISTORY_H_
#define SLUICE_SUPERVISOR_CONSOLE_LAG_HISTORY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::supervisor::console {

class LagHistory {
 public:
  explicit LagHistory(absl::Duration window = absl::Hours(1),
                      absl::Duration min_step = absl::Seconds(10));

  // One point per status at `now`; datasources no longer shown are dropped.
  void Record(absl::Time now, const std::vector<v1::SupervisorStatus>& statuses)
      ABSL_LOCKS_EXCLUDED(mu_);

  // {"datasource":..., "windowSeconds":..., "points":[{"timeMs":...,
  // "lag":..., "timeLagMs":..., "read":..., "partitions":{"0":...}}, ...]},
  // oldest
  // first; no points for an unknown datasource.
  std::string Json(const std::string& datasource) const ABSL_LOCKS_EXCLUDED(mu_);

  // Points kept for `datasource` (for tests).
  size_t size(const std::string& datasource) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Point {
    int64_t time_ms = 0;
    int64_t lag = 0;
    int64_t time_lag_ms = 0;
    int64_t read = 0;
    std::map<int32_t, int64_t> partitions;
  };

  const absl::Duration window_;
  const absl::Duration min_step_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::deque<Point>> points_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor::console

#endif  // SLUICE_SUPERVISOR_CONSOLE_LAG_HISTORY_H_
