// Housekeeping: the supervisor's periodic chores on one thread: worker
// liveness (every heartbeat interval; lost workers make every stream
// supervisor run), forgetting old worker reports and verifying handoff
// (every handoff period), re-verifying used segments (every reverify
// period), and every 10 minutes deleting old allocations, sweeping Iceberg
// orphans and removing the files of segments a compaction replaced. Owns the
// handoff and used-segment verifiers. Tests may drive each chore by hand.
#ifndef SLUICE_SUPERVISOR_HOUSEKEEPING_H_
#define SLUICE_SUPERVISOR_HOUSEKEEPING_H_

#include <cstdint>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/metrics/registry.h"
#include "supervisor/clock.h"
#include "supervisor/handoff_verifier.h"
#include "supervisor/iceberg_upkeep.h"
#include "supervisor/running_supervisors.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/used_segment_verifier.h"
#include "supervisor/worker_registry.h"
#include "supervisor/worker_reports.h"

namespace sluice::supervisor {

struct HousekeepingOptions {
  MetadataStore* store = nullptr;
  // Null: no handoff verification, re-verification or file removal.
  DeepStorage* deep_storage = nullptr;
  Clock* clock = Clock::Real();
  std::string scratch_dir = "/tmp";
  metrics::Registry* metrics = nullptr;  // null: none
  // The periods and budgets of SupervisorManagerOptions (supervisor_manager.h).
  absl::Duration heartbeat_interval = absl::Seconds(2);
  absl::Duration handoff_period = absl::Seconds(2);
  absl::Duration reverify_period = absl::Seconds(60);  // zero: off
  int reverify_max_segments = 200;
  int64_t reverify_max_bytes = int64_t{512} << 20;
  absl::Duration pending_segment_retention = absl::Hours(24);
  absl::Duration replaced_segment_retention = absl::Hours(24);  // zero: never
  WorkerRegistry* registry = nullptr;
  WorkerReports* reports = nullptr;
  RunningSupervisors* supervisors = nullptr;
  IcebergUpkeep* iceberg = nullptr;
};

class Housekeeping {
 public:
  explicit Housekeeping(HousekeepingOptions options);
  // Stops the thread.
  ~Housekeeping();

  HandoffVerifier* handoff_verifier() { return &handoff_; }
  UsedSegmentVerifier* used_segment_verifier() { return &reverify_; }

  // Starts the thread (once).
  void Start();
  // Stops the thread and waits for it (a chore under way finishes first).
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // One liveness check (lost workers make their supervisors run).
  void CheckWorkers();
  // Deletes the allocations of sequences committed, and of groups ended
  // (published or not), longer ago than pending_segment_retention: how many.
  absl::StatusOr<int64_t> CleanUpPendingSegments();
  // Removes the files of segments a compaction replaced longer than
  // replaced_segment_retention ago: how many.
  int64_t RemoveReplacedSegmentFilesOnce(absl::Time now);

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // The 10-minute chores.
  void CleanUp(absl::Time now);

  const HousekeepingOptions options_;
  HandoffVerifier handoff_;
  UsedSegmentVerifier reverify_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_HOUSEKEEPING_H_
