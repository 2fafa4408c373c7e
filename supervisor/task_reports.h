// The task statuses the workers reported for one datasource, and how the
// loop takes them: RPC threads note each report (under its own mutex); each
// run applies the latest ones to the live tasks of the groups (state,
// offsets, ended tasks released), kills the tasks whose worker was lost or
// no longer reports them, and forgets reports of tasks no group holds.
//
// Note is thread-safe; Apply runs on the stream supervisor's loop only.
// Not copyable. The registry, clock and actions must outlive it.
#ifndef SLUICE_SUPERVISOR_TASK_REPORTS_H_
#define SLUICE_SUPERVISOR_TASK_REPORTS_H_

#include <functional>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "supervisor/task_actions.h"
#include "supervisor/task_group.h"
#include "supervisor/worker_registry.h"

namespace sluice::supervisor {

struct TaskReportsOptions {
  std::string datasource;
  WorkerRegistry* registry = nullptr;
  Clock* clock = Clock::Real();
  TaskActions* actions = nullptr;
  // A task was seen ended (for the status' task outcomes).
  std::function<void(v1::TaskState)> note_outcome;
};

class TaskReports {
 public:
  explicit TaskReports(TaskReportsOptions options);
  TaskReports(const TaskReports&) = delete;
  TaskReports& operator=(const TaskReports&) = delete;

  // A worker reported a task; true when it is new or its state (or whether
  // it awaits a checkpoint) changed.
  bool Note(const v1::TaskStatus& status) ABSL_LOCKS_EXCLUDED(mu_);
  // The loop's run: the latest reports applied to `groups`.
  void Apply(TaskGroups& groups) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  std::string Prefix() const;

  const TaskReportsOptions options_;
  absl::Mutex mu_;
  std::map<std::string, v1::TaskStatus> reports_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TASK_REPORTS_H_
