// The workers' task reports of one datasource, noted and applied
// (task_reports.h).
#include "supervisor/task_reports.h"

#include <glog/logging.h>

#include <iterator>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {

TaskReports::TaskReports(TaskReportsOptions options) : options_(std::move(options)) {}

bool TaskReports::Note(const v1::TaskStatus& status) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = reports_.emplace(status.task_id(), status);
  if (inserted) return true;
  const bool changed = it->second.state() != status.state() ||
                       it->second.awaiting_checkpoint() != status.awaiting_checkpoint();
  it->second = status;
  return changed;
}

void TaskReports::Apply(TaskGroups& groups) {
  std::map<std::string, v1::TaskStatus> reports;
  {
    absl::MutexLock lock(&mu_);
    reports = reports_;
  }
  TaskActions* actions = options_.actions;
  WorkerRegistry* registry = options_.registry;
  const absl::Time now = options_.clock->Now();
  auto update = [&](Group& group) {
    for (auto& [id, task] : group.tasks) {
      if (!IsLive(task)) continue;
      auto report = reports.find(id);
      if (report != reports.end()) {
        task.status = report->second;
        task.reported = true;
        if (task.state != report->second.state()) {
          VLOG(1) << Prefix() << "task " << id << " is "
                  << v1::TaskState_Name(report->second.state());
        }
        task.state = report->second.state();
        if (!IsLive(task)) {
          registry->Release(id);
          options_.note_outcome(task.state);
          continue;
        }
      }
      if (!registry->IsAlive(task.worker_id)) {
        actions->KillTask(task, absl::StrCat("its worker ", task.worker_id, " was lost"));
        continue;
      }
      std::optional<WorkerView> worker = registry->Get(task.worker_id);
      if (worker && worker->registered && !worker->reported_tasks.count(id) &&
          worker->reported_at > task.created_at + 2 * registry->heartbeat_interval() &&
          now > task.created_at + 2 * registry->heartbeat_interval()) {
        actions->KillTask(task, absl::StrCat("worker ", task.worker_id, " no longer reports it"));
      }
    }
  };
  for (auto& [id, group] : groups.reading) update(group);
  for (auto& [id, list] : groups.publishing) {
    for (Group& group : list) update(group);
  }
  // Forget reports of tasks no group holds any more.
  std::set<std::string> tracked;
  for (const auto& [id, group] : groups.reading) {
    for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
  }
  for (const auto& [id, list] : groups.publishing) {
    for (const Group& group : list) {
      for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
    }
  }
  absl::MutexLock lock(&mu_);
  for (auto it = reports_.begin(); it != reports_.end();) {
    it = tracked.count(it->first) ? std::next(it) : reports_.erase(it);
  }
}

std::string TaskReports::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

}  // namespace sluice::supervisor
