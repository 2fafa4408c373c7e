// The number of reading groups of one datasource in force, and the
// autoscaler's decisions applied to its groups (ioConfig.autoScalerConfig,
// docs/operations.md "Autoscaling"): the split with task_autoscaler.h is
// that TaskAutoScaler decides (pure) and this class applies: it keeps the
// count the autoscaler works with, stores each decision, holds a scale-in
// until a group is due to roll over anyway, and names the groups of the old
// count that roll over now. Never kills a reading task.
//
// Used on the stream supervisor's loop only, which hands it the spec's
// ioConfig, the reading groups and the lags it samples; not copyable.
#ifndef SLUICE_SUPERVISOR_TASK_COUNT_CONTROLLER_H_
#define SLUICE_SUPERVISOR_TASK_COUNT_CONTROLLER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/metrics/registry.h"
#include "common/offsets.h"
#include "sluice/v1/spec.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/task_autoscaler.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

struct TaskCountControllerOptions {
  std::string datasource;
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  // Scaling actions (common/metrics/catalog.h); null: none.
  metrics::Registry* metrics = nullptr;
  // A failure worth the status' recent errors.
  std::function<void(const absl::Status&)> record_error;
};

class TaskCountController {
 public:
  explicit TaskCountController(TaskCountControllerOptions options);
  TaskCountController(const TaskCountController&) = delete;
  TaskCountController& operator=(const TaskCountController&) = delete;

  // Whether the autoscaler is on (Configure saw it enabled).
  bool on() const { return autoscaler_ != nullptr; }
  // The number of reading groups: the autoscaler's when it is on, else
  // io.taskCount.
  int32_t TaskCount(const v1::IoConfig& io) const;

  // Creates, reconfigures or drops the autoscaler after a spec change (and
  // at start, with `stored`: the count a previous leader applied).
  void Configure(const v1::IoConfig& io, std::optional<int32_t> stored);
  // At recovery, once the reading groups are known: the last decision (for
  // the status), and the groups of a count other than the one in force (a
  // scaling action the previous leader had not finished) roll over now.
  void Resume(const v1::IoConfig& io, std::optional<v1::ScalingDecision> last,
              const std::map<int32_t, Group>& reading);

  // Each run before roll-over, while the datasource reads: `lags` (a
  // sample from a fresh answer about every partition; nullopt: none this
  // run) go to the autoscaler, which decides; a scale-out applies now, a
  // scale-in once a group is due to roll over anyway (`task_duration`).
  // `partitions`: how many the stream has.
  void Check(const v1::IoConfig& io, const std::map<int32_t, Group>& reading,
             const std::optional<OffsetMap>& lags, int32_t partitions,
             absl::Duration task_duration);

  // Whether the reading group of this base sequence name was created under
  // the count before the last scaling action: it is due to roll over.
  bool Regrouping(const std::string& base_sequence_name) const {
    return regroup_.count(base_sequence_name) > 0;
  }
  // status.auto_scaler (nothing while off).
  void FillStatus(const v1::IoConfig& io, v1::SupervisorStatus* status) const;

 private:
  // Stores the decision, takes the new count and marks every reading group
  // to roll over (stopTaskCount still limits how many finish at once).
  void Apply(const ScalingProposal& proposal, absl::Time decided_at,
             const std::map<int32_t, Group>& reading);
  std::string Prefix() const;

  const TaskCountControllerOptions options_;
  // ioConfig.autoScalerConfig (null: off).
  std::unique_ptr<TaskAutoScaler> autoscaler_;
  // The count the autoscaler works with (0 while it is off).
  int32_t autoscaled_task_count_ = 0;
  // A scale-in decided, waiting for a group's natural roll-over.
  std::optional<std::pair<ScalingProposal, absl::Time>> pending_scale_in_;
  // The last decision applied, for status.
  std::optional<v1::ScalingDecision> last_scaling_;
  // Reading groups (by base sequence name) created under the count before
  // the last scaling action: due to roll over. Names of groups no longer
  // reading leave it at the next Check.
  std::set<std::string> regroup_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TASK_COUNT_CONTROLLER_H_
