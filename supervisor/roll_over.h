// Roll-over and the end of a stream supervisor's groups: reading groups
// due to finish (task duration elapsed, partitions added, the autoscaler's
// new count, a stop or suspension) get their final checkpoint round and
// publish, at most stopTaskCount at once; publishing groups end when a task
// succeeds, or are abandoned with the group reading after them when every
// task failed or completionTimeout passed; ended tasks of reading groups
// are dropped (the next run replaces them).
//
// The stream supervisor's loop lends it its groups (TaskGroups) at each
// call. Not copyable. Everything it points to must outlive it.
#ifndef SLUICE_SUPERVISOR_ROLL_OVER_H_
#define SLUICE_SUPERVISOR_ROLL_OVER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "supervisor/checkpoint_coordinator.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/task_actions.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

struct RollOverOptions {
  std::string datasource;
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  TaskActions* actions = nullptr;
  // The final round of a group.
  CheckpointCoordinator* checkpoints = nullptr;
  // A failure worth the status' recent errors.
  std::function<void(const absl::Status&)> record_error;
};

// What a run knows that decides which reading groups roll over.
struct RollOverRun {
  // Why every reading group finishes now (stopping, suspended); nullopt:
  // only those due.
  std::optional<std::string> stop_all;
  // The stream's partitions: one of a group's (p % task_count) that it does
  // not read was added, and the group rolls over.
  std::vector<int32_t> partitions;
  int32_t task_count = 0;
  // Whether the group of this base sequence name belongs to the count
  // before the autoscaler's last action.
  std::function<bool(const std::string&)> regrouping;
  absl::Duration task_duration = absl::InfiniteDuration();
  // How many groups may publish at once (ioConfig.stopTaskCount).
  int32_t stop_task_count = 0;
  // ioConfig.completionTimeout, parsed.
  absl::Duration completion_timeout = absl::InfiniteDuration();
};

class RollOver {
 public:
  explicit RollOver(RollOverOptions options);
  RollOver(const RollOver&) = delete;
  RollOver& operator=(const RollOver&) = delete;

  // Finalizes the reading groups due, oldest first, while fewer than
  // stopTaskCount publish (all of them for stop_all).
  void FinalizeDue(TaskGroups& groups, const RollOverRun& run);
  // Publishing groups: a winner ends its group; all tasks failed or past
  // completionTimeout (`completion_timeout`: the spec's text, for the
  // alert): abandoned, with the later ones of its id and the reading one.
  void CheckPublishing(TaskGroups& groups, const std::string& completion_timeout);
  // Reading groups: ended tasks dropped (replaced by the next run); a
  // winner ends its group, the next one starts from the stored offsets.
  void CheckReading(TaskGroups& groups);
  // The group's final round, then it publishes up to its end, before
  // now + completion_timeout; the next group of its partitions starts there.
  // A failed final round abandons it (the next group starts from the stored
  // offsets).
  void Finalize(TaskGroups& groups, int32_t group_id, const std::string& why,
                absl::Duration completion_timeout);
  // Finalizes every reading group (a graceful stop, going idle).
  void FinalizeAll(TaskGroups& groups, const std::string& why, absl::Duration completion_timeout);

 private:
  std::string Prefix() const;

  const RollOverOptions options_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ROLL_OVER_H_
