// Druid's lag-based task autoscaler (ioConfig.autoScalerConfig) for one
// datasource. Pure: the loop feeds it the partitions' record lags every run
// and asks it whether the number of reading groups should change; the loop
// applies the answer at a roll-over (stream_supervisor.h).
//
// Samples: at most every lagCollectionIntervalMillis one sample (at a run of
// the supervisor, so no more often than ioConfig.period), the partitions'
// lags aggregated (lagAggregate: SUM, MAX or AVERAGE of the positive lags);
// the samples of the last lagCollectionRangeMillis are kept.
// Decisions: every scaleActionPeriodMillis, once scaleActionStartDelayMillis
// has passed since the autoscaler started and the samples span the whole
// collection range, and at least minTriggerScaleActionFrequencyMillis after
// the last action:
//   - scale out by scaleOutStep (at most taskCountMax and the partition
//     count) when at least triggerScaleOutFractionThreshold of the samples
//     are >= scaleOutThreshold;
//   - else scale in by scaleInStep (at least taskCountMin) when at least
//     triggerScaleInFractionThreshold of them are <= scaleInThreshold.
// After an action the samples start over (the old ones describe the old
// count).
#ifndef SLUICE_SUPERVISOR_TASK_AUTOSCALER_H_
#define SLUICE_SUPERVISOR_TASK_AUTOSCALER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "common/offsets.h"
#include "sluice/v1/spec.pb.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::supervisor {

// A change of the number of reading groups, with the numbers behind it.
struct ScalingProposal {
  int32_t from = 0;
  int32_t to = 0;
  std::string reason;
};

class TaskAutoScaler {
 public:
  // `config`: normalized (NormalizeSpec fills the defaults); `started`:
  // when the supervisor started (the start delay counts from it).
  TaskAutoScaler(const v1::AutoScalerConfig& config, absl::Time started);

  // A live spec change: the samples are kept (a new range or interval
  // applies to the next samples).
  void Reconfigure(const v1::AutoScalerConfig& config) { config_ = config; }

  // One observation (each run): the partitions' record lags. Takes a
  // sample when lagCollectionIntervalMillis passed since the last one.
  void Observe(const OffsetMap& partition_lags, absl::Time now);

  // Whether the count should change from `current` now (see above);
  // `partitions`: how many the topic has (0: unknown, no scale-out).
  std::optional<ScalingProposal> Decide(int32_t current, int32_t partitions, absl::Time now);

  // The loop applied an action: samples start over, the cooldown starts.
  void NoteScaled(absl::Time now);

  // The sample counts and the newest sample, for status.
  void FillStatus(v1::AutoScalerStatus* status) const;

  // The aggregate of one observation (lagAggregate), exposed for tests.
  static int64_t Aggregate(const OffsetMap& partition_lags, const std::string& lag_aggregate);

 private:
  void DropOld(absl::Time now);
  // Counts of samples beyond the scale-out threshold and within the
  // scale-in one.
  std::pair<int, int> Counts() const;

  v1::AutoScalerConfig config_;
  absl::Time started_;
  // (taken at, aggregate lag), oldest first.
  std::deque<std::pair<absl::Time, int64_t>> samples_;
  // The first sample after start or after an action: the samples span the
  // range once it is that old. Runs take the samples, so a run period longer
  // than the interval, or Kafka unreachable for a while, means fewer samples,
  // not a longer wait.
  absl::Time collecting_since_ = absl::InfiniteFuture();
  absl::Time last_decision_check_ = absl::InfinitePast();
  absl::Time last_action_ = absl::InfinitePast();
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TASK_AUTOSCALER_H_
