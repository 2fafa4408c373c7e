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

}  // namespace sluice::supervisor
