// What workers report to the supervisor: registrations, heartbeats and
// task statuses. Checks that a worker speaks only for itself and its own
// tasks, persists state changes, keeps the latest status of every task the
// supervisor assigned (for ListTasks; statuses of unknown task ids are not
// kept, so what a worker sends cannot grow the supervisor's memory beyond its
// own task records), and hands statuses to the datasource's stream supervisor.
//
// Thread-safe (RPC threads); the latest statuses are under mu_. The manager
// owns it; everything in the options must outlive it.
#ifndef SLUICE_SUPERVISOR_WORKER_REPORTS_H_
#define SLUICE_SUPERVISOR_WORKER_REPORTS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/auth/identity.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/worker_registry.h"

namespace sluice::supervisor {

struct WorkerReportsOptions {
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  WorkerRegistry* registry = nullptr;
  // Told to workers in every answer.
  std::string instance_id;
  absl::Duration heartbeat_interval = absl::Seconds(2);
  // Hands a task's status to the running supervisor of `datasource` (none
  // running: nothing).
  std::function<void(const std::string& datasource, const v1::TaskStatus& status)> forward;
  // Asks every running supervisor for a run (a worker registered).
  std::function<void()> run_all;
};

class WorkerReports {
 public:
  // Tasks a registration or heartbeat may list (a worker lists those it
  // runs and those that ended within its retention); more is refused with
  // INVALID_ARGUMENT before anything is read or stored.
  static constexpr int kMaxReportedTasks = 1024;

  explicit WorkerReports(WorkerReportsOptions options) : options_(std::move(options)) {}
  WorkerReports(const WorkerReports&) = delete;
  WorkerReports& operator=(const WorkerReports&) = delete;

  absl::StatusOr<v1::RegisterWorkerResponse> RegisterWorker(
      const v1::RegisterWorkerRequest& request, const auth::Caller& caller)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::WorkerHeartbeatResponse> Heartbeat(const v1::WorkerHeartbeatRequest& request,
                                                        const auth::Caller& caller)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status ReportTaskStatus(const v1::ReportTaskStatusRequest& request,
                                const auth::Caller& caller) ABSL_LOCKS_EXCLUDED(mu_);

  // Routes a reported task status: persists state changes, forwards to the
  // datasource's supervisor. Returns true when the supervisor does not want
  // the task (unknown, or already ended by the supervisor).
  // A status for a task assigned to another worker than `reporting_worker`
  // is ignored (and that worker told to stop it).
  bool OnTaskStatus(const v1::TaskStatus& status, const std::string& reporting_worker)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The same for every status of one report, in one store transaction; one
  // answer per status.
  std::vector<bool> OnTaskStatuses(const std::vector<v1::TaskStatus>& statuses,
                                   const std::string& reporting_worker) ABSL_LOCKS_EXCLUDED(mu_);

  // ListTasks' answer for `tasks`, with the latest reported statuses.
  v1::SupervisorServiceListTasksResponse TaskList(const std::vector<TaskRecord>& tasks,
                                           const v1::SupervisorServiceListTasksRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the reported statuses of tasks that ended over an hour ago.
  void ForgetOld() ABSL_LOCKS_EXCLUDED(mu_);
  // The latest reported status of a task (tests).
  std::optional<v1::TaskStatus> Latest(const std::string& task_id) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  static absl::Status CheckTaskCount(const std::string& worker_id, size_t tasks);

  const WorkerReportsOptions options_;
  absl::Mutex mu_;
  // Latest reported status per task, for tasks in the store only.
  std::map<std::string, v1::TaskStatus> reported_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_WORKER_REPORTS_H_
