// Task workers as the supervisor knows them: registration, heartbeats,
// liveness (a worker silent for `lost_after_heartbeats` intervals, and at
// least `min_lost_timeout`, is lost), the tasks each one reports, and slot
// accounting for placing new tasks (replicas of a group avoid sharing a
// worker when another one has room).
//
// Slots: a worker's used slots are its non-terminal reported tasks plus the
// tasks placed on it that no heartbeat has shown yet. Every registration
// and heartbeat rebuilds this from what the worker says: a placed task it
// reports as ended, or does not list `unreported_grace` after the
// placement, no longer holds a slot, whoever placed it and whether or not
// they call Release (a terminated datasource's supervisor is gone when its
// last tasks end).
#ifndef SLUICE_SUPERVISOR_WORKER_REGISTRY_H_
#define SLUICE_SUPERVISOR_WORKER_REGISTRY_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct WorkerRegistryOptions {
  Clock* clock = Clock::Real();
  absl::Duration heartbeat_interval = absl::Seconds(2);
  int lost_after_heartbeats = 3;
  absl::Duration min_lost_timeout = absl::Seconds(10);
  // A task the supervisor placed on a worker holds a slot until the worker
  // reports it ended, or until a heartbeat received this long after the
  // placement does not list it (the worker does not have it: it restarted
  // without it, or RunTask never reached it). Longer than a RunTask call
  // plus a heartbeat interval, so a heartbeat built before the task started
  // does not free its slot.
  absl::Duration unreported_grace = absl::Seconds(15);
  // A worker whose RunTask failed (frozen, unreachable, refusing) gets no
  // new task for this long, doubling with each further failure up to the
  // maximum; a successful RunTask or a registration resets it.
  absl::Duration placement_backoff = absl::Seconds(5);
  absl::Duration max_placement_backoff = absl::Minutes(1);
  // A worker that has not heartbeaten for this many intervals (and at least
  // min_silent) gets no new task, well before it is declared lost: a frozen
  // worker (SIGSTOP, a stuck VM) would otherwise be the first choice for a
  // replacement, with the most free slots.
  int silent_after_heartbeats = 2;
  absl::Duration min_silent = absl::Seconds(1);
};

// What the registry knows of one worker.
struct WorkerView {
  v1::WorkerInfo info;  // last_heartbeat_ms, alive, running_tasks filled in
  bool registered = false;
  absl::Time last_heartbeat;
  // Task ids in the worker's last registration or heartbeat, and when.
  std::set<std::string> reported_tasks;
  absl::Time reported_at;
};

class WorkerRegistry {
 public:
  explicit WorkerRegistry(WorkerRegistryOptions options);

  absl::Duration heartbeat_interval() const { return options_.heartbeat_interval; }
  absl::Duration lost_timeout() const;

  // A worker announced itself (again). INVALID_ARGUMENT for a bad id,
  // address or capacity; ALREADY_EXISTS when another registered, alive
  // worker holds the address.
  absl::Status Register(const v1::WorkerInfo& info, const std::vector<v1::TaskStatus>& tasks)
      ABSL_LOCKS_EXCLUDED(mu_);

  // A worker known from the metadata store after a supervisor restart: its
  // tasks are reachable at its address and it counts as alive until the lost
  // timeout, but it gets no new tasks until it registers again.
  void Seed(const WorkerRecord& record) ABSL_LOCKS_EXCLUDED(mu_);

  // NOT_FOUND when the worker must register (unknown, or known only from
  // the store after a restart).
  absl::Status Heartbeat(const std::string& worker_id, const std::vector<v1::TaskStatus>& tasks)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Marks workers silent past the lost timeout as lost and returns the ids
  // that became lost now.
  std::vector<std::string> CheckLiveness() ABSL_LOCKS_EXCLUDED(mu_);

  bool IsAlive(const std::string& worker_id) ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<std::string> Address(const std::string& worker_id) ABSL_LOCKS_EXCLUDED(mu_);
  // The worker at an address (the registered, alive one first), for the
  // supervisor's per-worker credential.
  std::optional<std::string> WorkerAt(const std::string& address) ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<WorkerView> Get(const std::string& worker_id) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<v1::WorkerInfo> List() ABSL_LOCKS_EXCLUDED(mu_);

  // A registered, alive worker with a free slot, not silent (above) and not
  // backing off after a failed RunTask: outside `avoid` when one has room (most free slots
  // first, then by id), else inside it. RESOURCE_EXHAUSTED when there is
  // none.
  absl::StatusOr<std::string> PickWorker(const std::set<std::string>& avoid)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Reserves / frees the slot of a task placed by the supervisor.
  void Assign(const std::string& task_id, const std::string& worker_id) ABSL_LOCKS_EXCLUDED(mu_);
  void Release(const std::string& task_id) ABSL_LOCKS_EXCLUDED(mu_);

  // The outcome of a RunTask on a worker (placement backoff, above).
  void NoteRunTaskFailed(const std::string& worker_id) ABSL_LOCKS_EXCLUDED(mu_);
  void NoteRunTaskSucceeded(const std::string& worker_id) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Worker {
    WorkerView view;
    // Non-terminal tasks reported in the last heartbeat.
    std::set<std::string> running_reported;
    // Placement backoff after failed RunTask calls.
    int run_task_failures = 0;
    absl::Time skip_until = absl::InfinitePast();
  };
  int RunningTasks(const std::string& worker_id, const Worker& worker) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateReported(Worker* worker, const std::vector<v1::TaskStatus>& tasks, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FillInfo(const std::string& worker_id, Worker* worker) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const WorkerRegistryOptions options_;
  absl::Mutex mu_;
  std::map<std::string, Worker> workers_ ABSL_GUARDED_BY(mu_);
  struct Placement {
    std::string worker_id;
    absl::Time at;
  };
  // Drops the placements on this worker that its report settles.
  void SettlePlacements(const std::string& worker_id, const std::vector<v1::TaskStatus>& tasks,
                        absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Tasks the supervisor placed and not released, not yet settled by a
  // report of their worker.
  std::map<std::string, Placement> assigned_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_WORKER_REGISTRY_H_
