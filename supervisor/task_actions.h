// What a stream supervisor does to its tasks, through the worker registry,
// the metadata store and the task client: create a task (place it on a
// worker, record it, send RunTask off the loop), kill it, stop it
// gracefully, end a group (killing its tasks, or stopping the other replicas
// of a winner) and record how the group ended.
//
// Called from the stream supervisor's loop only (like the groups it acts
// on), except that RunTask calls run on the task-RPC pool; the count of
// those in flight is the one piece of state here, under its own mutex.
// Not copyable. Everything it points to must outlive it.
#ifndef SLUICE_SUPERVISOR_TASK_ACTIONS_H_
#define SLUICE_SUPERVISOR_TASK_ACTIONS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/spec.h"
#include "common/stream_partitions.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/strand_executor.h"
#include "supervisor/task_client.h"
#include "supervisor/task_group.h"
#include "supervisor/worker_registry.h"

namespace sluice::supervisor {

struct TaskActionsOptions {
  std::string datasource;
  WorkerRegistry* registry = nullptr;
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  // Control calls (stop, kill).
  TaskClient* client = nullptr;
  // RunTask only: one attempt with a short deadline.
  TaskClient* run_client = nullptr;
  // Where RunTask calls wait for their worker, off the loop.
  StrandExecutor* task_rpcs = nullptr;
  // A failure worth the status' recent errors.
  std::function<void(const absl::Status&)> record_error;
  // A task ended in `state` because of an action here (a kill).
  std::function<void(v1::TaskState state)> note_outcome;
  // The publisher decodes every pushed segment before committing it (it has
  // deep storage): tasks are told so (TaskSpec.supervisor_decodes_segments)
  // and skip their own full decode.
  bool publisher_decodes_segments = false;
};

// A task recorded and placed, ready for its RunTask.
struct TaskLaunch {
  std::string address;
  std::string worker_id;
  int32_t group_id = 0;
  v1::TaskSpec spec;
};

// The first task of `group` (in task id order) that succeeded, if any: the
// winner the rest of its replicas stop for.
const TaskInfo* WinnerOf(const Group& group);

// The TaskSpec of a new task of `group` (pure): the spec's schema, tuning and
// consumer properties, the group's offsets and message-time window, and the
// checkpoints it starts from. A topic-pattern spec's task gets the (topic,
// partition) of each stream partition it reads from `stream_partition_ids`.
v1::TaskSpec BuildTaskSpec(const std::string& datasource, const std::string& task_id,
                           const v1::SupervisorSpec& spec, const SpecTimings& timings,
                           const Group& group, const std::map<int32_t, OffsetMap>& checkpoints,
                           int64_t now_ms,
                           const StreamPartitionIds* stream_partition_ids = nullptr);

class TaskActions {
 public:
  explicit TaskActions(TaskActionsOptions deps);
  TaskActions(const TaskActions&) = delete;
  TaskActions& operator=(const TaskActions&) = delete;

  std::optional<std::string> AddressOf(const TaskInfo& task);

  // ---- create ----
  // The checkpoints a new task of the group starts from: every sequence not
  // yet published, so a replacement re-reads from the first unpublished one.
  absl::StatusOr<std::map<int32_t, OffsetMap>> UnpublishedCheckpoints(const Group& group);
  // A worker for a new task of the group, away from its live replicas
  // (RESOURCE_EXHAUSTED: none has a free slot).
  absl::StatusOr<std::string> PickWorker(const Group& group);
  // Records the task (NOT_STARTED, starting) in the store, the registry and
  // the group; counts it as the replacement of a lost task if one is owed.
  absl::StatusOr<TaskLaunch> CreateTask(Group& group, const std::string& worker,
                                        const std::map<int32_t, OffsetMap>& checkpoints,
                                        const v1::SupervisorSpec& spec,
                                        const SpecTimings& timings,
                                        const StreamPartitionIds* stream_partition_ids = nullptr);
  // Sends RunTask on the task-RPC pool and hands the answer to `answered`
  // there, before the call stops counting as in flight.
  void SendRunTask(TaskLaunch launch,
                   std::function<void(const absl::StatusOr<v1::RunTaskResponse>&)> answered)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until no RunTask call is in flight (or `deadline`, real time).
  bool AwaitRunTasks(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);
  // RunTask failed: the worker is avoided for a while, the task released
  // and recorded FAILED with `error`.
  void NoteRunTaskFailed(const std::string& task_id, const std::string& worker,
                         const std::string& error);
  // RunTask succeeded for a task given up meanwhile: the worker must not
  // keep it.
  void KillGivenUp(const std::string& task_id, const std::string& worker);

  // ---- stop and kill ----
  // FAILED ("killed by supervisor: <reason>"), released, recorded, counted
  // as an outcome. A task still starting gets no call (its worker may be
  // frozen).
  void KillTask(TaskInfo& task, const std::string& reason);
  // STOPPED ("stopped: <reason>"), released, recorded.
  void StopTaskGracefully(TaskInfo& task, const std::string& reason);
  void KillGroup(Group& group, const std::string& reason);
  // Records how the group ended (nothing for kReading).
  void FinishGroup(const Group& group, GroupState state, const std::string& reason);
  // The one path for a group one of whose tasks succeeded (WinnerOf): the
  // other live replicas stop gracefully, `log_line` is logged, the group is
  // recorded done.
  void FinishWonGroup(Group& group, const std::string& winner_id, const std::string& log_line);

 private:
  std::string Prefix() const;

  const TaskActionsOptions options_;
  absl::Mutex mu_;
  // RunTask calls sent and not yet answered.
  int run_tasks_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TASK_ACTIONS_H_
