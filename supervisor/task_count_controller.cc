// The number of reading groups in force and the autoscaler's decisions
// applied: see task_count_controller.h.
#include "supervisor/task_count_controller.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

TaskCountController::TaskCountController(TaskCountControllerOptions options)
    : options_(std::move(options)) {}

std::string TaskCountController::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

int32_t TaskCountController::TaskCount(const v1::IoConfig& io) const {
  if (autoscaler_ != nullptr && autoscaled_task_count_ > 0) return autoscaled_task_count_;
  return io.task_count();
}

void TaskCountController::Configure(const v1::IoConfig& io, std::optional<int32_t> stored) {
  const v1::AutoScalerConfig& config = io.auto_scaler_config();
  if (!config.enable_task_auto_scaler()) {
    if (autoscaler_ == nullptr) return;
    LOG(INFO) << Prefix() << "autoscaler off: taskCount " << io.task_count()
              << " applies from each group's next roll-over";
    autoscaler_.reset();
    autoscaled_task_count_ = 0;
    pending_scale_in_.reset();
    regroup_.clear();
    options_.store
        ->InTransaction(
            [&](StoreTxn& txn) { return txn.ClearAutoscaledTaskCount(options_.datasource); })
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
    count = config.has_task_count_start() ? config.task_count_start() : io.task_count();
  }
  autoscaled_task_count_ = std::clamp(count, config.task_count_min(), config.task_count_max());
}

void TaskCountController::Resume(const v1::IoConfig& io, std::optional<v1::ScalingDecision> last,
                                 const std::map<int32_t, Group>& reading) {
  if (last) last_scaling_ = std::move(last);
  if (autoscaler_ == nullptr) return;
  for (const auto& [id, group] : reading) {
    for (int32_t p : group.partitions()) {
      if (p % TaskCount(io) != id) regroup_.insert(group.base_sequence_name);
    }
  }
}

void TaskCountController::Check(const v1::IoConfig& io, const std::map<int32_t, Group>& reading,
                                const std::optional<OffsetMap>& lags, int32_t partitions,
                                absl::Duration task_duration) {
  if (autoscaler_ == nullptr) return;
  const absl::Time now = options_.clock->Now();
  // Names of groups still reading under the old count.
  std::set<std::string> names;
  for (const auto& [id, group] : reading) names.insert(group.base_sequence_name);
  for (auto it = regroup_.begin(); it != regroup_.end();) {
    it = names.count(*it) ? std::next(it) : regroup_.erase(it);
  }
  if (lags) autoscaler_->Observe(*lags, now);
  // While groups of the previous count still read, the lag describes them:
  // no new decision until the change is complete.
  if (!regroup_.empty()) return;
  // Decisions go on while a scale-in waits: a scale-out replaces it.
  std::optional<ScalingProposal> proposal = autoscaler_->Decide(TaskCount(io), partitions, now);
  if (proposal && proposal->to > proposal->from) {
    if (pending_scale_in_) {
      LOG(INFO) << Prefix() << "autoscaler: the pending scale-in to " << pending_scale_in_->first.to
                << " is dropped for a scale-out";
      pending_scale_in_.reset();
    }
    Apply(*proposal, now, reading);  // an early roll-over, now
    return;
  }
  if (proposal && !pending_scale_in_) {
    LOG(INFO) << Prefix() << "autoscaler: " << proposal->from << " -> " << proposal->to
              << " task groups at the next roll-over (" << proposal->reason << ")";
    pending_scale_in_.emplace(*proposal, now);
  }
  if (!pending_scale_in_) return;
  // A scale-in waits for a group that is due to roll over anyway.
  for (const auto& [id, group] : reading) {
    if (now >= group.created_at + task_duration) {
      const auto [pending, decided_at] = *pending_scale_in_;
      pending_scale_in_.reset();
      Apply(pending, decided_at, reading);
      return;
    }
  }
}

void TaskCountController::Apply(const ScalingProposal& proposal, absl::Time decided_at,
                                const std::map<int32_t, Group>& reading) {
  const absl::Time now = options_.clock->Now();
  v1::ScalingDecision decision;
  decision.set_from_task_count(proposal.from);
  decision.set_to_task_count(proposal.to);
  decision.set_reason(proposal.reason);
  decision.set_decided_at_ms(absl::ToUnixMillis(decided_at));
  decision.set_applied_at_ms(absl::ToUnixMillis(now));
  absl::StatusOr<int64_t> id = absl::UnknownError("not recorded");
  absl::Status stored = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(id, txn.RecordScaling(options_.datasource, decision));
    return absl::OkStatus();
  });
  if (!stored.ok()) {
    // Not applied: a restart would not know the count. The next period
    // decides again.
    options_.record_error(Annotate(stored, "recording a scaling decision"));
    return;
  }
  decision.set_decision_id(*id);
  last_scaling_ = decision;
  autoscaled_task_count_ = proposal.to;
  autoscaler_->NoteScaled(now);
  regroup_.clear();
  for (const auto& [group_id, group] : reading) regroup_.insert(group.base_sequence_name);
  LOG(INFO) << Prefix() << "autoscaler: " << proposal.from << " -> " << proposal.to
            << " task groups (" << proposal.reason << "); rolling over " << regroup_.size()
            << " reading group(s)";
  if (options_.metrics != nullptr) {
    options_.metrics
        ->GetCounter(metrics::kSupervisorScalingActions,
                     {{"datasource", options_.datasource},
                      {"direction", proposal.to > proposal.from ? "out" : "in"}})
        ->Increment();
  }
}

void TaskCountController::FillStatus(const v1::IoConfig& io, v1::SupervisorStatus* status) const {
  if (autoscaler_ == nullptr) return;
  v1::AutoScalerStatus* scaler = status->mutable_auto_scaler();
  scaler->set_task_count(TaskCount(io));
  if (pending_scale_in_) scaler->set_pending_task_count(pending_scale_in_->first.to);
  autoscaler_->FillStatus(scaler);
  if (last_scaling_) *scaler->mutable_last_decision() = *last_scaling_;
}

}  // namespace sluice::supervisor
