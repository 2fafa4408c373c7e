// One run of a stream supervisor's loop (loop_run.h): its steps in order,
// what decides roll-over, and recovery.
#include "supervisor/loop_run.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "common/status_macros.h"
#include "supervisor/group_recovery.h"
#include "supervisor/read_progress.h"

namespace sluice::supervisor {

LoopRun::LoopRun(LoopRunOptions options) : options_(std::move(options)) {}

void LoopRun::Run() {
  LoopState& state = *options_.state;
  if (state.stopping) return;
  state.waiting_for_stream = false;
  absl::Status status = Steps();
  if (state.waiting_for_stream) return;  // neither a success nor a failure
  state.health.NoteRun(status.ok());
  if (!status.ok()) state.RecordError(status);
}

absl::Status LoopRun::Steps() {
  LoopState& state = *options_.state;
  if (!state.recovered) {
    SLUICE_RETURN_IF_ERROR(Annotate(Recover(), "recovering from the metadata store"));
  }
  const absl::Time t0 = absl::Now();
  absl::Status partitions =
      options_.stream->UpdatePartitions(&state.detailed_state, &state.waiting_for_stream);
  if (!partitions.ok() && !options_.stream->partitions_known()) return partitions;
  const absl::Time t1 = absl::Now();
  options_.reports->Apply(state.groups);
  const absl::Time t2 = absl::Now();
  // How far reading got (asked only when needed).
  auto read_to = [&] { return ReadTo(options_.stream->StoredOffsets(), state.groups.reading); };
  // ioConfig.autoScalerConfig, before roll-over: a lag sample for the
  // controller, which decides and applies.
  if (options_.task_count->on() && !state.spec.spec.suspended() && !state.stopping &&
      !options_.idle->idle()) {
    options_.task_count->Check(
        state.spec.spec.io_config(), state.groups.reading, LagSample(*options_.stream, read_to),
        static_cast<int32_t>(options_.stream->partitions().size()), state.timings.task_duration);
  }
  options_.checkpoints->MoveStalledCheckpoints(state.groups.reading);
  CheckTaskDuration();
  options_.roll_over->CheckPublishing(state.groups,
                                      state.spec.spec.io_config().completion_timeout());
  options_.roll_over->CheckReading(state.groups);
  absl::Status created = absl::OkStatus();
  if (state.spec.spec.suspended()) {
    state.detailed_state = "SUSPENDED";
  } else if (IdleHandling::Verdict idle = options_.idle->Check(
                 state.spec.spec.io_config().idle_config(), *options_.stream, read_to);
             idle != IdleHandling::Verdict::kAwake) {
    if (idle == IdleHandling::Verdict::kWentIdle) {
      options_.roll_over->FinalizeAll(state.groups, "the stream is idle (ioConfig.idleConfig)",
                                      state.timings.completion_timeout);
    }
    state.detailed_state = "IDLE";
  } else {
    created = options_.creation->CreateGroupsAndTasks(TaskCount());
  }
  const absl::Time t3 = absl::Now();
  options_.stream->UpdateLag(state.groups.reading);
  const absl::Time t4 = absl::Now();
  if (t4 - t0 > absl::Milliseconds(50)) {
    LOG(INFO) << state.Prefix() << "slow run " << absl::ToDoubleMilliseconds(t4 - t0)
              << " ms: partitions " << absl::ToDoubleMilliseconds(t1 - t0) << ", task statuses "
              << absl::ToDoubleMilliseconds(t2 - t1) << ", groups and tasks "
              << absl::ToDoubleMilliseconds(t3 - t2) << ", lag "
              << absl::ToDoubleMilliseconds(t4 - t3);
  }
  SLUICE_RETURN_IF_ERROR(partitions);
  return created;
}

void LoopRun::CheckTaskDuration() {
  LoopState& state = *options_.state;
  RollOverRun run;
  if (state.stopping) {
    run.stop_all = "the supervisor is stopping";
  } else if (state.spec.spec.suspended()) {
    run.stop_all = "the supervisor is suspended";
  }
  run.partitions = options_.stream->partitions();
  run.task_count = TaskCount();
  run.regrouping = [this](const std::string& name) {
    return options_.task_count->Regrouping(name);
  };
  run.task_duration = state.timings.task_duration;
  run.stop_task_count = state.spec.spec.io_config().stop_task_count();
  run.completion_timeout = state.timings.completion_timeout;
  options_.roll_over->FinalizeDue(state.groups, run);
}

int32_t LoopRun::TaskCount() const {
  return options_.task_count->TaskCount(options_.state->spec.spec.io_config());
}

absl::Status LoopRun::Recover() {
  LoopState& state = *options_.state;
  GroupRecoveryOptions recovery;
  recovery.datasource = state.datasource;
  recovery.store = options_.store;
  recovery.registry = options_.registry;
  recovery.client = options_.client;
  recovery.actions = options_.actions;
  SLUICE_ASSIGN_OR_RETURN(
      RecoveredGroups recovered,
      GroupRecovery(std::move(recovery)).Recover(state.spec.spec, [this](int64_t version) {
        return options_.creation->IsPreviousSpec(version);
      }));
  options_.task_count->Configure(state.spec.spec.io_config(), recovered.autoscaled_task_count);
  if (options_.task_count->on()) {
    LOG(INFO) << state.Prefix() << "autoscaler on: " << TaskCount() << " task groups"
              << (recovered.autoscaled_task_count ? " (as last applied)" : "");
  }
  options_.idle->Restore(recovered.idle ? &*recovered.idle : nullptr);
  for (auto& [id, group] : recovered.reading) state.groups.reading[id] = std::move(group);
  for (auto& [id, list] : recovered.publishing) {
    for (Group& group : list) state.groups.publishing[id].push_back(std::move(group));
  }
  for (const auto& [p, offset] : recovered.publishing_ends) {
    auto [it, inserted] = state.groups.next_offsets.emplace(p, offset);
    if (!inserted) it->second = std::max(it->second, offset);
  }
  // A scaling action the previous leader had not finished: the groups of
  // the old count still roll over now.
  options_.task_count->Resume(state.spec.spec.io_config(), std::move(recovered.last_scaling),
                              state.groups.reading);
  state.recovered = true;
  return absl::OkStatus();
}

}  // namespace sluice::supervisor
