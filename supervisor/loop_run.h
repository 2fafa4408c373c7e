// One run of a stream supervisor's loop, periodic or on an event: recovery
// first (until it succeeds), then in order the stream's partitions, the
// workers' task reports, the autoscaler, stalled checkpoints, what decides
// roll-over, the groups publishing and reading, creation of groups and tasks
// (or suspension, or idleness), and lag; the run's outcome goes to the
// health.
//
// Used on the loop only, on the state it shares (loop_state.h), through the
// parts that own each step (LoopRunOptions). Not copyable. Everything it
// points to must outlive it.
#ifndef SLUICE_SUPERVISOR_LOOP_RUN_H_
#define SLUICE_SUPERVISOR_LOOP_RUN_H_

#include <cstdint>

#include "absl/status/status.h"
#include "supervisor/checkpoint_coordinator.h"
#include "supervisor/group_creation.h"
#include "supervisor/idle_handling.h"
#include "supervisor/loop_state.h"
#include "supervisor/roll_over.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/stream_tracker.h"
#include "supervisor/task_actions.h"
#include "supervisor/task_client.h"
#include "supervisor/task_count_controller.h"
#include "supervisor/task_reports.h"
#include "supervisor/worker_registry.h"

namespace sluice::supervisor {

struct LoopRunOptions {
  LoopState* state = nullptr;
  // Recovery's (group_recovery.h).
  MetadataStore* store = nullptr;
  WorkerRegistry* registry = nullptr;
  TaskClient* client = nullptr;
  TaskActions* actions = nullptr;
  // The parts that own the steps.
  StreamTracker* stream = nullptr;
  TaskReports* reports = nullptr;
  TaskCountController* task_count = nullptr;
  CheckpointCoordinator* checkpoints = nullptr;
  RollOver* roll_over = nullptr;
  GroupCreation* creation = nullptr;
  IdleHandling* idle = nullptr;
};

class LoopRun {
 public:
  explicit LoopRun(LoopRunOptions options);
  LoopRun(const LoopRun&) = delete;
  LoopRun& operator=(const LoopRun&) = delete;

  // One run (nothing once stopping): a failure is recorded and counted, a
  // run still waiting for the stream's first answer is neither a success
  // nor a failure.
  void Run();
  // Takes the groups GroupRecovery finds, the idle state and the task
  // count; the state is recovered once this succeeded.
  absl::Status Recover();
  // The number of reading groups: the autoscaler's when it is on, else
  // ioConfig.taskCount.
  int32_t TaskCount() const;

 private:
  absl::Status Steps();
  // Hands the roll-over what decides which reading groups finish now.
  void CheckTaskDuration();

  const LoopRunOptions options_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_LOOP_RUN_H_
