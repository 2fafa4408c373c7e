// The tasks of one worker: RunTask (idempotent by task id, bounded by the
// worker's task slots), StopTask, the control calls routed to the right
// TaskRunner, and restore of every unfinished task found under
// <data_dir>/tasks/ when the worker starts.
//
// Thread-safe (the gRPC handlers and the heartbeater call it).
#ifndef SLUICE_TASK_TASK_MANAGER_H_
#define SLUICE_TASK_TASK_MANAGER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/deep_storage.h"
#include "common/metrics/registry.h"
#include "sluice/v1/task_service.pb.h"
#include "task/segment_sink.h"
#include "task/supervisor_client.h"
#include "task/task_runner.h"

namespace sluice::task {

using SegmentEngineFactory =
    std::function<absl::StatusOr<std::unique_ptr<SegmentEngine>>(const v1::DataSchema&)>;

struct TaskManagerOptions {
  // Tasks live in <data_dir>/tasks/<task id>/.
  std::string data_dir;
  std::string worker_id;
  // Task slots: RunTask is RESOURCE_EXHAUSTED when this many tasks run.
  int capacity = 4;
  // Not owned; outlive the manager.
  SupervisorClient* supervisor = nullptr;
  DeepStorage* deep_storage = nullptr;
  SegmentEngineFactory engine_factory;
  // Called after every state change of any task (no locks held).
  std::function<void(const v1::TaskStatus&)> on_state_change;
  TaskTuningOptions tuning;
  // The worker's memory for ingestion, divided evenly over `capacity` slots
  // (tuning.ingestion_memory_per_task); 0: each task uses its spec's
  // maxBytesInMemory.
  int64_t ingestion_memory_bytes = 0;
  // Segment builds at once across the tasks (BuildSlots); at least 1.
  int concurrent_segment_builds = 1;
  // An ended task is remembered (answered, listed in heartbeats) for this
  // long after it ended, and only the newest max_ended_tasks of them; then
  // ForgetEndedTasks removes it and its directory. Heartbeats stay bounded
  // however long the worker runs.
  absl::Duration ended_task_retention = absl::Hours(1);
  int max_ended_tasks = 256;
  // Where task metrics go (and the gauge of tasks by state); null: nowhere.
  // Not owned; outlives the manager.
  metrics::Registry* metrics = nullptr;
};

class TaskManager {
 public:
  // Restores the tasks found on disk: unfinished ones start running again
  // (even beyond capacity: they were accepted before), finished ones are
  // remembered for ListTasks.
  static absl::StatusOr<std::unique_ptr<TaskManager>> Create(TaskManagerOptions options);
  // Shutdown().
  ~TaskManager();
  TaskManager(const TaskManager&) = delete;
  TaskManager& operator=(const TaskManager&) = delete;

  // INVALID_ARGUMENT for a bad spec; the same spec again returns the existing
  // task (already_running); another spec under the same id is ALREADY_EXISTS;
  // RESOURCE_EXHAUSTED when every slot is taken.
  absl::StatusOr<v1::RunTaskResponse> RunTask(const v1::TaskSpec& spec) ABSL_LOCKS_EXCLUDED(mu_);
  // Idempotent; waits briefly so the answer usually shows the final state.
  absl::StatusOr<v1::TaskStatus> StopTask(const std::string& task_id, v1::StopMode mode,
                                          const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::PauseResponse> Pause(const std::string& task_id, absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::ResumeResponse> Resume(const std::string& task_id) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::SetEndOffsetsResponse> SetEndOffsets(const std::string& task_id,
                                                          const OffsetMap& offsets, bool finish)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::TaskStatus> GetTaskStatus(const std::string& task_id) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Every task, running or finished; only `datasource`'s when not empty.
  std::vector<v1::TaskStatus> ListTasks(const std::string& datasource = "") const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Tasks not in a final state.
  int running() const ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets the ended tasks past ended_task_retention at `now` or beyond the
  // newest max_ended_tasks, removing their directories; how many.
  int ForgetEndedTasks(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  // Persists and stops every running task without a final state (they are
  // restored when the worker starts again). Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    v1::TaskSpec spec;
    // Null for a task that finished before this worker started.
    std::unique_ptr<TaskRunner> runner;
    v1::TaskStatus final_status;
  };

  explicit TaskManager(TaskManagerOptions options) : options_(std::move(options)) {}
  absl::Status Restore();
  absl::StatusOr<std::unique_ptr<TaskRunner>> NewRunner(const v1::TaskSpec& spec);
  // The runner of a task; NOT_FOUND or FAILED_PRECONDITION (finished before
  // this worker started).
  absl::StatusOr<TaskRunner*> Find(const std::string& task_id) const ABSL_LOCKS_EXCLUDED(mu_);
  std::string TaskDir(const std::string& task_id) const;

  const TaskManagerOptions options_;
  // Shared by every task's publisher; declared before the tasks (which use
  // it) so that it outlives them.
  BuildSlots build_slots_{options_.concurrent_segment_builds};
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> tasks_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  // sluice_task_tasks{state}; destroyed first (it reads tasks_).
  std::unique_ptr<metrics::Registry::CallbackHandle> tasks_gauge_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_MANAGER_H_
