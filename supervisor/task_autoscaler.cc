#include "supervisor/task_autoscaler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {

TaskAutoScaler::TaskAutoScaler(const v1::AutoScalerConfig& config, absl::Time started)
    : config_(config), started_(started) {}

int64_t TaskAutoScaler::Aggregate(const OffsetMap& partition_lags,
                                  const std::string& lag_aggregate) {
  int64_t sum = 0;
  int64_t max = 0;
  for (const auto& [p, lag] : partition_lags) {
    const int64_t positive = std::max<int64_t>(lag, 0);
    sum += positive;
    max = std::max(max, positive);
  }
  if (lag_aggregate == "MAX") return max;
  if (lag_aggregate == "AVERAGE") {
    return partition_lags.empty() ? 0 : sum / static_cast<int64_t>(partition_lags.size());
  }
  return sum;
}

void TaskAutoScaler::DropOld(absl::Time now) {
  const absl::Duration range = absl::Milliseconds(config_.lag_collection_range_millis());
  while (!samples_.empty() && samples_.front().first < now - range) samples_.pop_front();
}

void TaskAutoScaler::Observe(const OffsetMap& partition_lags, absl::Time now) {
  const absl::Duration interval = absl::Milliseconds(config_.lag_collection_interval_millis());
  if (!samples_.empty() && now < samples_.back().first + interval) return;
  if (collecting_since_ == absl::InfiniteFuture()) collecting_since_ = now;
  samples_.emplace_back(now, Aggregate(partition_lags, config_.lag_aggregate()));
  DropOld(now);
}

std::pair<int, int> TaskAutoScaler::Counts() const {
  int above = 0;
  int below = 0;
  for (const auto& [at, lag] : samples_) {
    if (lag >= config_.scale_out_threshold()) ++above;
    if (lag <= config_.scale_in_threshold()) ++below;
  }
  return {above, below};
}

std::optional<ScalingProposal> TaskAutoScaler::Decide(int32_t current, int32_t partitions,
                                                      absl::Time now) {
  if (now < started_ + absl::Milliseconds(config_.scale_action_start_delay_millis())) {
    return std::nullopt;
  }
  if (now < last_decision_check_ + absl::Milliseconds(config_.scale_action_period_millis())) {
    return std::nullopt;
  }
  last_decision_check_ = now;
  if (now < last_action_ + absl::Milliseconds(config_.min_trigger_scale_action_frequency_millis())) {
    return std::nullopt;
  }
  DropOld(now);
  const absl::Duration range = absl::Milliseconds(config_.lag_collection_range_millis());
  if (samples_.empty() || collecting_since_ == absl::InfiniteFuture() ||
      now < collecting_since_ + range) {
    return std::nullopt;
  }
  const auto [above, below] = Counts();
  const double n = static_cast<double>(samples_.size());
  const std::string of = absl::StrCat(" of ", samples_.size(), " lag samples (",
                                      config_.lag_aggregate(), ", last ",
                                      absl::FormatDuration(range), ") ");
  if (above / n >= config_.trigger_scale_out_fraction_threshold()) {
    const int32_t ceiling = std::min(config_.task_count_max(), partitions);
    if (partitions > 0 && current < ceiling) {
      return ScalingProposal{
          current, std::min(current + config_.scale_out_step(), ceiling),
          absl::StrCat("scale out: ", above, of, ">= scaleOutThreshold ",
                       config_.scale_out_threshold(), " (trigger fraction ",
                       config_.trigger_scale_out_fraction_threshold(), ")")};
    }
    return std::nullopt;
  }
  if (below / n >= config_.trigger_scale_in_fraction_threshold() &&
      current > config_.task_count_min()) {
    return ScalingProposal{
        current, std::max(current - config_.scale_in_step(), config_.task_count_min()),
        absl::StrCat("scale in: ", below, of, "<= scaleInThreshold ", config_.scale_in_threshold(),
                     " (trigger fraction ", config_.trigger_scale_in_fraction_threshold(), ")")};
  }
  return std::nullopt;
}

void TaskAutoScaler::NoteScaled(absl::Time now) {
  last_action_ = now;
  samples_.clear();
  collecting_since_ = absl::InfiniteFuture();
}

void TaskAutoScaler::FillStatus(v1::AutoScalerStatus* status) const {
  const auto [above, below] = Counts();
  status->set_samples(static_cast<int32_t>(samples_.size()));
  status->set_samples_above_scale_out(above);
  status->set_samples_below_scale_in(below);
  if (!samples_.empty()) status->set_last_lag(samples_.back().second);
}

}  // namespace sluice::supervisor
