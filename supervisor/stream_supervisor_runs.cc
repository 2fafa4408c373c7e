// The run steps of a stream supervisor (stream_supervisor.h): recovery
// (group_recovery.h finds the groups, the loop takes them), the
// autoscaler's sample, what decides roll-over (roll_over.h does it),
// task statuses (group_creation.h creates groups and tasks). Loop only.
#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/group_recovery.h"
#include "supervisor/naming.h"
#include "supervisor/spec_changes.h"
#include "supervisor/start_offset_policy.h"
#include "supervisor/stream_supervisor.h"

namespace sluice::supervisor {

OffsetMap StreamSupervisor::ReadTo() {
  // A finished group's end is committed once it published.
  OffsetMap read_to = stream_->StoredOffsets();
  for (const auto& [id, group] : groups_.reading) {
    for (const auto& [task_id, task] : group.tasks) {
      if (!IsLive(task)) continue;
      read_to = MaxOffsets(read_to,
                           Restrict(FromProto(task.status.current_offsets()), group.start_offsets));
    }
  }
  return read_to;
}

void StreamSupervisor::CheckTaskDuration() {
  RollOverRun run;
  if (stopping_) {
    run.stop_all = "the supervisor is stopping";
  } else if (spec_.spec.suspended()) {
    run.stop_all = "the supervisor is suspended";
  }
  run.partitions = stream_->partitions();
  run.task_count = TaskCount();
  run.regrouping = [this](const std::string& name) { return task_count_->Regrouping(name); };
  run.task_duration = timings_.task_duration;
  run.stop_task_count = spec_.spec.io_config().stop_task_count();
  run.completion_timeout = timings_.completion_timeout;
  roll_over_->FinalizeDue(groups_, run);
}

int32_t StreamSupervisor::TaskCount() const {
  return task_count_->TaskCount(spec_.spec.io_config());
}

void StreamSupervisor::CheckAutoScaler() {
  if (!task_count_->on() || spec_.spec.suspended() || stopping_ || idle_->idle()) return;
  // A sample only from a fresh answer about every partition.
  std::optional<OffsetMap> lags;
  if (!stream_->unreachable() && stream_->partitions_known() && !stream_->watermarks().empty() &&
      stream_->offsets_verdict().problem == StreamProblem::kNone) {
    const OffsetMap read_to = ReadTo();
    lags.emplace();
    for (const auto& [p, marks] : stream_->watermarks()) {
      auto it = read_to.find(p);
      (*lags)[p] = marks.latest - (it == read_to.end() ? marks.earliest : it->second);
    }
  }
  task_count_->Check(spec_.spec.io_config(), groups_.reading, lags,
                     static_cast<int32_t>(stream_->partitions().size()), timings_.task_duration);
}

absl::Status StreamSupervisor::Recover() {
  GroupRecoveryOptions options;
  options.datasource = datasource_;
  options.store = options_.store;
  options.registry = options_.registry;
  options.client = client_.get();
  options.actions = actions_.get();
  SLUICE_ASSIGN_OR_RETURN(
      RecoveredGroups recovered,
      GroupRecovery(std::move(options)).Recover(spec_.spec, [this](int64_t version) {
        return creation_->IsPreviousSpec(version);
      }));
  task_count_->Configure(spec_.spec.io_config(), recovered.autoscaled_task_count);
  if (task_count_->on()) {
    LOG(INFO) << Prefix() << "autoscaler on: " << TaskCount() << " task groups"
              << (recovered.autoscaled_task_count ? " (as last applied)" : "");
  }
  idle_->Restore(recovered.idle ? &*recovered.idle : nullptr);
  for (auto& [id, group] : recovered.reading) groups_.reading[id] = std::move(group);
  for (auto& [id, list] : recovered.publishing) {
    for (Group& group : list) groups_.publishing[id].push_back(std::move(group));
  }
  for (const auto& [p, offset] : recovered.publishing_ends) {
    auto [it, inserted] = groups_.next_offsets.emplace(p, offset);
    if (!inserted) it->second = std::max(it->second, offset);
  }
  // A scaling action the previous leader had not finished: the groups of
  // the old count still roll over now.
  task_count_->Resume(spec_.spec.io_config(), std::move(recovered.last_scaling), groups_.reading);
  recovered_ = true;
  return absl::OkStatus();
}

void StreamSupervisor::UpdateTaskStatuses() {
  std::map<std::string, v1::TaskStatus> reports;
  {
    absl::MutexLock lock(&reports_mu_);
    reports = reports_;
  }
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
          options_.registry->Release(id);
          health_.NoteTaskOutcome(task.state);
          continue;
        }
      }
      if (!options_.registry->IsAlive(task.worker_id)) {
        actions_->KillTask(task, absl::StrCat("its worker ", task.worker_id, " was lost"));
        continue;
      }
      std::optional<WorkerView> worker = options_.registry->Get(task.worker_id);
      if (worker && worker->registered && !worker->reported_tasks.count(id) &&
          worker->reported_at > task.created_at + 2 * options_.registry->heartbeat_interval() &&
          now > task.created_at + 2 * options_.registry->heartbeat_interval()) {
        actions_->KillTask(task, absl::StrCat("worker ", task.worker_id, " no longer reports it"));
      }
    }
  };
  for (auto& [id, group] : groups_.reading) update(group);
  for (auto& [id, groups] : groups_.publishing) {
    for (Group& group : groups) update(group);
  }
  // Forget reports of tasks no group holds any more.
  std::set<std::string> tracked;
  for (const auto& [id, group] : groups_.reading) {
    for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
  }
  for (const auto& [id, groups] : groups_.publishing) {
    for (const Group& group : groups) {
      for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
    }
  }
  absl::MutexLock lock(&reports_mu_);
  for (auto it = reports_.begin(); it != reports_.end();) {
    it = tracked.count(it->first) ? std::next(it) : reports_.erase(it);
  }
}

}  // namespace sluice::supervisor
