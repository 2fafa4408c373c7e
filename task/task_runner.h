// One reading task: the pieces that own each of its jobs, wired together,
// behind the control calls the supervisor makes (Pause, Resume,
// SetEndOffsets, Stop) and the status reads.
//
//   TaskControl        state, pause / resume / SetEndOffsets / stop, the
//                      self-resume deadline, checkpoint re-asking, progress
//   SequenceStore      the sequence list (loaded, changed, persisted)
//   ReadLoop           its own thread: consume, route (RecordRouter), parse,
//                      index (OpenSegments), persist (Persister), checkpoint
//                      and persist triggers, pause parking
//   SegmentAllocator   AllocateSegment at the supervisor, with retries
//   SequencePublisher  its own thread: build, push, publish, handoff of the
//                      closed sequences; tells the SequenceStore
//
// Pause guarantee: Pause answers only once the loop is parked between two
// records, with the offsets it parked at; nothing at or after them is
// ingested until Resume or SetEndOffsets. A pause the task did not ask for
// ends by itself after 2 x chatTimeout x chatRetries without news from the
// supervisor (logged), so a lost supervisor never parks a task forever.
//
// Restore: a task directory with a sequence list and a restore point resumes
// at the restore point's offsets with its spills; records before them are
// never read again and nothing is published twice (see SequencePublisher).
//
// Thread-safe. Owned by the TaskManager.
#ifndef SLUICE_TASK_TASK_RUNNER_H_
#define SLUICE_TASK_TASK_RUNNER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "sluice/v1/task.pb.h"
#include "sluice/v1/task_service.pb.h"
#include "common/offsets.h"
#include "task/open_segments.h"
#include "task/build_slots.h"
#include "task/read_loop.h"
#include "task/segment_sink.h"
#include "task/sequence_publisher.h"
#include "task/sequence_store.h"
#include "task/supervisor_client.h"
#include "task/task_control.h"
#include "task/task_files.h"
#include "task/task_metrics.h"
#include "task/task_spec.h"

namespace sluice::task {

struct TaskRunnerOptions {
  // Checked with CheckTaskSpec by Create.
  v1::TaskSpec spec;
  // <data_dir>/tasks/<task id>; created if missing. An existing sequence list
  // and restore point are resumed.
  std::string task_dir;
  std::string worker_id;
  // Not owned; outlive the runner.
  SupervisorClient* supervisor = nullptr;
  DeepStorage* deep_storage = nullptr;
  // The segment engine for the spec's data schema.
  std::unique_ptr<SegmentEngine> engine;
  // Called (without locks held) after every state change.
  std::function<void(const v1::TaskStatus&)> on_state_change;
  // Where the task's metrics go; null: nowhere. Not owned.
  metrics::Registry* metrics = nullptr;
  // The worker's segment-build slots, shared by its tasks; null: no limit.
  // Not owned.
  BuildSlots* build_slots = nullptr;

  TaskTuningOptions tuning;
};

class TaskRunner {
 public:
  static absl::StatusOr<std::unique_ptr<TaskRunner>> Create(TaskRunnerOptions options);
  // Stops like Shutdown() if still running.
  ~TaskRunner();
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  // Starts the read loop.
  void Start();

  // Pauses the read loop; see task_service.proto. UNAVAILABLE if it has not
  // parked within `timeout`; FAILED_PRECONDITION once publishing or finished.
  absl::StatusOr<OffsetMap> Pause(absl::Duration timeout);
  // Resumes a paused task (and cancels a pending pause). Returns the state.
  v1::TaskState Resume();
  // SequenceList::SetEndOffsets rules; the list is persisted before the
  // answer, then the task resumes.
  absl::StatusOr<v1::SetEndOffsetsResponse> SetEndOffsets(const OffsetMap& offsets, bool finish);

  // StopTask: GRACEFUL persists and ends STOPPED (or SUCCESS when all it
  // read is published); KILL ends FAILED at once. Returns without waiting.
  void Stop(v1::StopMode mode, const std::string& reason);
  // The worker is shutting down: persist and end the threads without a
  // final state, so that a restarted worker resumes the task. Waits.
  void Shutdown();
  // Waits until the task reached a final state or `timeout` passed.
  bool WaitFinished(absl::Duration timeout);

  v1::TaskStatus Status() const;
  OffsetMap CurrentOffsets() const;
  OffsetMap EndOffsets() const;
  std::vector<v1::Checkpoint> Checkpoints() const;
  bool finished() const;
  const v1::TaskSpec& spec() const { return options_.spec; }
  const std::string& task_id() const { return options_.spec.task_id(); }

 private:
  TaskRunner(TaskRunnerOptions options, TaskSettings settings);

  // The read loop ended the task: final status file, data dropped, final
  // state shown.
  void End(v1::TaskState final_state, std::string error);
  void Notify();
  std::string Prefix() const;

  const TaskRunnerOptions options_;
  const TaskSettings settings_;
  const TaskFiles files_;
  const TaskMetrics metrics_;
  SequenceStore sequences_;
  TaskControl control_;
  std::unique_ptr<SequencePublisher> publisher_;
  std::unique_ptr<SegmentAllocator> allocator_;
  std::unique_ptr<ReadLoop> loop_;
  std::thread thread_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_RUNNER_H_
