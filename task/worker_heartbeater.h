// Keeps the supervisor informed about this worker: RegisterWorker at start
// (with the tasks it restored) and whenever the supervisor forgot it
// (NOT_FOUND on a heartbeat, or a new supervisor instance), WorkerHeartbeat
// every heartbeat_interval_ms with the status of every task, and a
// ReportTaskStatus as soon as a task changes state. Tasks the supervisor no
// longer wants (stop_task_ids) are stopped gracefully.
//
// Thread-safe; one background thread. A supervisor that cannot be reached is
// retried; the worker's tasks go on meanwhile.
#ifndef SLUICE_TASK_WORKER_HEARTBEATER_H_
#define SLUICE_TASK_WORKER_HEARTBEATER_H_

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "task/supervisor_client.h"

namespace sluice::task {

struct WorkerHeartbeaterOptions {
  // Not owned.
  SupervisorClient* supervisor = nullptr;
  // worker_id, address, capacity, version, start_time_ms.
  v1::WorkerInfo info;
  // Statuses of every task of the worker.
  std::function<std::vector<v1::TaskStatus>()> list_tasks;
  // Stops a task the supervisor no longer wants.
  std::function<void(const std::string& task_id)> stop_task;
  // Until the supervisor says otherwise.
  absl::Duration default_interval = absl::Seconds(1);
  // Between failed registration attempts.
  absl::Duration retry_interval = absl::Seconds(1);
};

class WorkerHeartbeater {
 public:
  explicit WorkerHeartbeater(WorkerHeartbeaterOptions options);
  ~WorkerHeartbeater();
  WorkerHeartbeater(const WorkerHeartbeater&) = delete;
  WorkerHeartbeater& operator=(const WorkerHeartbeater&) = delete;

  void Start();
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  // Queues a status report; the thread sends it at once.
  void ReportStatus(const v1::TaskStatus& status) ABSL_LOCKS_EXCLUDED(mu_);
  bool registered() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run();
  bool Register();
  void Heartbeat();

  const WorkerHeartbeaterOptions options_;
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<v1::TaskStatus> reports_ ABSL_GUARDED_BY(mu_);
  // Heartbeater thread only.
  absl::Duration interval_;
  std::string supervisor_instance_;
  std::thread thread_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_WORKER_HEARTBEATER_H_
