// The supervisor's side of ioConfig.autoScalerConfig: feeding the autoscaler
// (task_autoscaler.h) and applying its decisions at a roll-over, never by
// killing a reading task (docs/operations.md "Autoscaling").
#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"
#include "supervisor/stream_supervisor.h"

namespace sluice::supervisor {

int32_t StreamSupervisor::TaskCount() const {
  if (autoscaler_ != nullptr && autoscaled_task_count_ > 0) return autoscaled_task_count_;
  return spec_.spec.io_config().task_count();
}

void StreamSupervisor::ConfigureAutoScaler(std::optional<int32_t> stored) {
  const v1::AutoScalerConfig& config = spec_.spec.io_config().auto_scaler_config();
  if (!config.enable_task_auto_scaler()) {
    if (autoscaler_ == nullptr) return;
    LOG(INFO) << Prefix() << "autoscaler off: taskCount " << spec_.spec.io_config().task_count()
              << " applies from each group's next roll-over";
    autoscaler_.reset();
    autoscaled_task_count_ = 0;
    pending_scale_in_.reset();
    regroup_.clear();
    options_.store
        ->InTransaction([&](StoreTxn& txn) { return txn.ClearAutoscaledTaskCount(datasource_); })
        .IgnoreError();  // a stale count is ignored while the autoscaler is off
    return;
  }
  if (autoscaler_ != nullptr) {
    autoscaler_->Reconfigure(config);
  } else {
    autoscaler_ = std::make_unique<TaskAutoScaler>(config, options_.clock->Now());
  }
  // The count to work with: the one applied before (a restart, a live spec
  // change), else taskCountStart, else taskCount; always within the bounds.
  int32_t count = stored.value_or(autoscaled_task_count_);
  if (count <= 0) {
    count = config.has_task_count_start() ? config.task_count_start()
                                          : spec_.spec.io_config().task_count();
  }
  autoscaled_task_count_ = std::clamp(count, config.task_count_min(), config.task_count_max());
}

void StreamSupervisor::CheckAutoScaler() {
  if (autoscaler_ == nullptr || spec_.spec.suspended() || stopping_ || idle_.idle()) return;
  const absl::Time now = options_.clock->Now();
  // Names of groups still reading under the old count.
  std::set<std::string> reading;
  for (const auto& [id, group] : active_) reading.insert(group.base_sequence_name);
  for (auto it = regroup_.begin(); it != regroup_.end();) {
    it = reading.count(*it) ? std::next(it) : regroup_.erase(it);
  }
  // A sample only from a fresh answer about every partition.
  if (!stream_unreachable_ && partitions_known_ && !watermarks_.empty() &&
      offsets_verdict_.problem == StreamProblem::kNone) {
    const OffsetMap read_to = ReadTo();
    OffsetMap lags;
    for (const auto& [p, marks] : watermarks_) {
      auto it = read_to.find(p);
      lags[p] = marks.latest - (it == read_to.end() ? marks.earliest : it->second);
    }
    autoscaler_->Observe(lags, now);
  }
  // While groups of the previous count still read, the lag describes them:
  // no new decision until the change is complete.
  if (!regroup_.empty()) return;
  // Decisions go on while a scale-in waits: a scale-out replaces it.
  std::optional<ScalingProposal> proposal =
      autoscaler_->Decide(TaskCount(), static_cast<int32_t>(partitions_.size()), now);
  if (proposal && proposal->to > proposal->from) {
    if (pending_scale_in_) {
      LOG(INFO) << Prefix() << "autoscaler: the pending scale-in to "
                << pending_scale_in_->first.to << " is dropped for a scale-out";
      pending_scale_in_.reset();
    }
    ApplyScaling(*proposal, now);  // an early roll-over, now
    return;
  }
  if (proposal && !pending_scale_in_) {
    LOG(INFO) << Prefix() << "autoscaler: " << proposal->from << " -> " << proposal->to
              << " task groups at the next roll-over (" << proposal->reason << ")";
    pending_scale_in_.emplace(*proposal, now);
  }
  if (!pending_scale_in_) return;
  // A scale-in waits for a group that is due to roll over anyway.
  for (const auto& [id, group] : active_) {
    if (now >= group.created_at + timings_.task_duration) {
      const auto [pending, decided_at] = *pending_scale_in_;
      pending_scale_in_.reset();
      ApplyScaling(pending, decided_at);
      return;
    }
  }
}

void StreamSupervisor::ApplyScaling(const ScalingProposal& proposal, absl::Time decided_at) {
  const absl::Time now = options_.clock->Now();
  v1::ScalingDecision decision;
  decision.set_from_task_count(proposal.from);
  decision.set_to_task_count(proposal.to);
  decision.set_reason(proposal.reason);
  decision.set_decided_at_ms(absl::ToUnixMillis(decided_at));
  decision.set_applied_at_ms(absl::ToUnixMillis(now));
  absl::StatusOr<int64_t> id = absl::UnknownError("not recorded");
  absl::Status stored = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(id, txn.RecordScaling(datasource_, decision));
    return absl::OkStatus();
  });
  if (!stored.ok()) {
    // Not applied: a restart would not know the count. The next period
    // decides again.
    RecordError(Annotate(stored, "recording a scaling decision"));
    return;
  }
  decision.set_decision_id(*id);
  last_scaling_ = decision;
  autoscaled_task_count_ = proposal.to;
  autoscaler_->NoteScaled(now);
  regroup_.clear();
  for (const auto& [group_id, group] : active_) regroup_.insert(group.base_sequence_name);
  LOG(INFO) << Prefix() << "autoscaler: " << proposal.from << " -> " << proposal.to
            << " task groups (" << proposal.reason << "); rolling over " << regroup_.size()
            << " reading group(s)";
  if (options_.metrics != nullptr) {
    options_.metrics
        ->GetCounter(metrics::kSupervisorScalingActions,
                     {{"datasource", datasource_},
                      {"direction", proposal.to > proposal.from ? "out" : "in"}})
        ->Increment();
  }
}

}  // namespace sluice::supervisor
