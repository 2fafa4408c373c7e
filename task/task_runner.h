// One reading task: its read loop (own thread), its publisher (own thread),
// and the control calls the supervisor makes (Pause, Resume, SetEndOffsets,
// Stop) and status reads.
//
// The read loop consumes in batches, routes each record to the first
// sequence that takes it, parses it, adds it to the in-memory index of its
// (sequence, interval) and checks the triggers:
// - persist (spill every index + write the restore point) at maxRowsInMemory,
//   maxBytesInMemory or intermediatePersistPeriod, before a closed sequence
//   goes to the publisher, and when the task stops. The read loop hands the
//   full indexes to the persister thread and goes on reading into new ones
//   (as Druid does with maxPendingPersists 0): one persist runs at a time, a
//   second trigger waits for it, so at most two sets of indexes are in
//   memory. A closed sequence goes to the publisher only once its rows are
//   on disk;
// - checkpoint (pause itself, then CheckpointDataSourceMetadata with the
//   latest sequence's start offsets, asked again every checkpointRetryPeriod
//   until SetEndOffsets or Resume comes) when a segment of the latest
//   sequence reaches maxRowsPerSegment, the unpublished rows reach
//   maxTotalRows, or intermediateHandoffPeriod elapsed.
// Pause guarantee: Pause answers only once the loop is parked between two
// records, with the offsets it parked at; nothing at or after them is
// ingested until Resume or SetEndOffsets. A pause the task did not ask for
// ends by itself after 2 x chatTimeout x chatRetries without news from the
// supervisor (logged), so a lost supervisor never parks a task forever.
//
// The loop touches shared state once per batch (offsets, counters), never
// per record. Parse errors past maxParseExceptions, an offset going
// backwards, a failed persist or publish fail the task with the reason.
//
// Restore: a task directory with a sequence list and a restore point resumes
// at the restore point's offsets with its spills; records before them are
// never read again and nothing is published twice (see SequencePublisher).
//
// Thread-safe. Owned by the TaskManager.
#ifndef SLUICE_TASK_TASK_RUNNER_H_
#define SLUICE_TASK_TASK_RUNNER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "sluice/v1/task.pb.h"
#include "sluice/v1/task_service.pb.h"
#include "task/kafka_consumer.h"
#include "task/offsets.h"
#include "task/segment_sink.h"
#include "task/sequence_publisher.h"
#include "task/sequences.h"
#include "task/supervisor_client.h"
#include "task/task_files.h"
#include "task/task_metrics.h"
#include "task/task_spec.h"
#include "task/task_state.pb.h"

namespace sluice::task {

// Timing and size knobs with production defaults; tests make them short.
struct TaskRunnerKnobs {
  // Which consumer defaults apply (kafka::RecommendedConsumerProperties).
  kafka::ClusterKind kafka_cluster = kafka::ClusterKind::kKafka;
  // What a task's consumerProperties may say (checked before connecting).
  kafka::PropertyPolicyOptions kafka_policy;
  size_t max_batch_records = 10000;
  // How long a partition whose offset is out of range waits before trying
  // again (a pause or stop cuts it short).
  absl::Duration offset_out_of_range_retry = absl::Seconds(5);
  absl::Duration handoff_poll_interval = absl::Seconds(1);
  // Retries of supervisor calls and deep storage pushes.
  absl::Duration min_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
};

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

  TaskRunnerKnobs knobs;
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
  absl::StatusOr<OffsetMap> Pause(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  // Resumes a paused task (and cancels a pending pause). Returns the state.
  v1::TaskState Resume() ABSL_LOCKS_EXCLUDED(mu_);
  // SequenceList::SetEndOffsets rules; the list is persisted before the
  // answer, then the task resumes.
  absl::StatusOr<v1::SetEndOffsetsResponse> SetEndOffsets(const OffsetMap& offsets, bool finish)
      ABSL_LOCKS_EXCLUDED(mu_);

  // StopTask: GRACEFUL persists and ends STOPPED (or SUCCESS when all it
  // read is published); KILL ends FAILED at once. Returns without waiting.
  void Stop(v1::StopMode mode, const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  // The worker is shutting down: persist and end the threads without a
  // final state, so that a restarted worker resumes the task. Waits.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until the task reached a final state or `timeout` passed.
  bool WaitFinished(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  v1::TaskStatus Status() const ABSL_LOCKS_EXCLUDED(mu_);
  OffsetMap CurrentOffsets() const ABSL_LOCKS_EXCLUDED(mu_);
  OffsetMap EndOffsets() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<v1::Checkpoint> Checkpoints() const ABSL_LOCKS_EXCLUDED(mu_);
  bool finished() const ABSL_LOCKS_EXCLUDED(mu_);
  const v1::TaskSpec& spec() const { return options_.spec; }
  const std::string& task_id() const { return options_.spec.task_id(); }

 private:
  enum class StopKind { kNone, kGraceful, kKill, kShutdown };

  // One segment being built: the rows of one sequence in one interval.
  struct SegmentBuild {
    state::SegmentState record;
    // Null until a row arrives (after a restore).
    std::unique_ptr<SegmentIndex> index;
    // Records of each partition slot in this segment (synced into `record`
    // when persisting or handing off).
    std::vector<int64_t> records_per_slot;
    // Spilled + in-memory rows (for maxRowsPerSegment).
    int64_t rows_total = 0;
  };
  using Counts = std::map<int32_t, state::PartitionCounts>;

  // Loop-local accounting, published to shared state once per batch.
  struct LoopCounters {
    int64_t processed = 0;
    int64_t processed_bytes = 0;
    int64_t unparseable = 0;
    int64_t thrown_away = 0;
    int64_t persists = 0;
    int64_t rows_in_memory = 0;
    int64_t bytes_in_memory = 0;
  };

  TaskRunner(TaskRunnerOptions options, TaskSettings settings);

  // ---- read loop thread ----
  void Run();
  absl::Status RunLoop();
  absl::Status Initialize();
  absl::Status LoadRestorePoint(bool* restored);
  absl::Status ProcessRecords(const KafkaBatch& batch, size_t* next);
  absl::Status ProcessRecord(const KafkaRecord& record);
  absl::Status RecordParseError(const KafkaRecord& record, const RowParseError& error);
  absl::StatusOr<SegmentBuild*> SegmentFor(int route, int64_t timestamp_ms);
  // Hands every non-empty index and the restore point naming their spills to
  // the persister thread (after waiting for the previous persist); reading
  // goes on into new indexes.
  absl::Status StartPersist();
  // Waits until the last persist is on disk; its error, if it failed.
  absl::Status WaitPersisted() ABSL_LOCKS_EXCLUDED(persist_mu_);
  // StartPersist + WaitPersisted.
  absl::Status Persist();
  // The error of a persist that failed in the background, else OK.
  absl::Status PersistFailure() ABSL_LOCKS_EXCLUDED(persist_mu_);
  void SyncRecords(SegmentBuild* build) const;
  absl::Status HandOffClosedSequences();
  void PrunePublished();
  // Assigns the partitions not yet at their final end, at the current
  // offsets, if that set changed. Returns whether it reassigned.
  absl::StatusOr<bool> Reassign();
  OffsetMap LocalOffsets() const;
  absl::Status HandleOutOfRange(const std::vector<OffsetOutOfRange>& out_of_range);
  // Parks while a pause is requested (sending checkpoint requests when it
  // asked for one). Returns true if it parked.
  bool MaybePark() ABSL_LOCKS_EXCLUDED(mu_);
  void RefreshRoutes() ABSL_LOCKS_EXCLUDED(mu_);
  void PublishProgress() ABSL_LOCKS_EXCLUDED(mu_);
  void RequestCheckpoint(const char* trigger) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves the current offset of every partition whose end the consumer
  // reached up to that end (at most the final end).
  void AdvanceToReachedEnds();
  bool ReachedFinalEnd() const;
  bool AllReadIsPublished() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Finish(absl::Status outcome) ABSL_LOCKS_EXCLUDED(mu_);
  // Sleeps up to `d` unless a pause or stop is requested; false when stopped.
  bool Wait(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- persister thread ----
  // One intermediate persist: the indexes taken from the read loop (with the
  // spill path of each) and the restore point that names their spills,
  // written once they are.
  struct PersistJob {
    std::vector<std::pair<std::string, std::unique_ptr<SegmentIndex>>> spills;
    state::RestorePoint point;
    absl::Time started;
  };
  void PersisterLoop() ABSL_LOCKS_EXCLUDED(persist_mu_);
  absl::Status WritePersist(PersistJob& job);
  void StopPersister() ABSL_LOCKS_EXCLUDED(persist_mu_);

  // ---- any thread ----
  absl::Status OnPublished(int32_t sequence_id) ABSL_LOCKS_EXCLUDED(mu_);
  void SetState(v1::TaskState state) ABSL_LOCKS_EXCLUDED(mu_);
  void UpdateInterruptLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Destroys the consumer (read loop), after UpdateInterruptLocked can no
  // longer wake it.
  void ReleaseConsumer() ABSL_LOCKS_EXCLUDED(wake_mu_);
  v1::TaskStatus StatusLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);
  bool stop_requested() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string Prefix() const;

  TaskRunnerOptions options_;
  const TaskSettings settings_;
  const TaskFiles files_;
  const absl::Duration self_resume_after_;
  const TaskMetrics metrics_;
  std::unique_ptr<SequencePublisher> publisher_;

  // ---- shared state ----
  mutable absl::Mutex mu_;
  v1::TaskState state_ ABSL_GUARDED_BY(mu_) = v1::NOT_STARTED;
  bool sequences_loaded_ ABSL_GUARDED_BY(mu_) = false;
  SequenceList sequences_ ABSL_GUARDED_BY(mu_);
  // Exact while parked; otherwise as of the last batch.
  OffsetMap current_ ABSL_GUARDED_BY(mu_);
  bool pause_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool parked_ ABSL_GUARDED_BY(mu_) = false;
  bool awaiting_checkpoint_ ABSL_GUARDED_BY(mu_) = false;
  // A pause the task did not ask for ends by itself at this time.
  absl::Time supervisor_pause_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // Bumped by Resume/SetEndOffsets: the loop resets its handoff timer.
  int64_t resume_generation_ ABSL_GUARDED_BY(mu_) = 0;
  StopKind stop_ ABSL_GUARDED_BY(mu_) = StopKind::kNone;
  std::string stop_reason_ ABSL_GUARDED_BY(mu_);
  std::string error_ ABSL_GUARDED_BY(mu_);
  v1::RowStats stats_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::ParseErrorSample> parse_errors_ ABSL_GUARDED_BY(mu_);
  int64_t start_time_ms_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t end_time_ms_ ABSL_GUARDED_BY(mu_) = 0;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  // pause_requested_ || stop_ != kNone, read by the loop between records.
  std::atomic<bool> interrupt_{false};
  std::atomic<int32_t> last_published_id_{-1};

  // ---- read loop thread only ----
  std::unique_ptr<KafkaConsumer> consumer_;
  // consumer_, for waking its poll from other threads (mu_ before wake_mu_).
  absl::Mutex wake_mu_ ABSL_ACQUIRED_AFTER(mu_);
  KafkaConsumer* wake_consumer_ ABSL_GUARDED_BY(wake_mu_) = nullptr;
  std::unique_ptr<RowParser> parser_;
  bool initialized_ = false;
  // Partition -> slot in the arrays below (-1: not ours).
  std::vector<int> slot_of_partition_;
  std::vector<int32_t> partition_of_slot_;
  std::vector<int64_t> current_offsets_;
  std::vector<int64_t> task_end_;
  bool final_end_fixed_ = false;
  OffsetMap assigned_;
  bool assignment_valid_ = false;
  // Snapshot of the sequence list: routes_[i] with its ranges per slot.
  std::vector<Sequence> routes_;
  std::vector<std::vector<int64_t>> route_start_;
  std::vector<std::vector<int64_t>> route_end_;
  std::vector<std::vector<state::PartitionCounts*>> route_counts_;
  std::vector<int64_t*> route_rows_;
  // Per slot: index in routes_ of the last sequence used.
  std::vector<int> route_hint_;
  std::map<std::pair<int32_t, int64_t>, SegmentBuild> segments_;
  SegmentBuild* last_segment_ = nullptr;
  int32_t last_segment_sequence_ = -1;
  int64_t last_segment_start_ = 0;
  int64_t last_segment_end_ = 0;
  std::map<int32_t, Counts> sequence_counts_;
  // Rows (after rollup) of each unpublished sequence.
  std::map<int32_t, int64_t> sequence_rows_;
  LoopCounters counters_;
  // What PublishProgress last added to the metrics.
  LoopCounters exported_;
  absl::Time checkpoint_requested_at_;
  int64_t next_spill_number_ = 0;
  // Highest sequence id given to the publisher.
  int32_t handed_off_through_ = -1;
  // Sequences up to this id were read before a restart (may be published).
  int32_t restored_through_ = -1;
  int32_t pruned_through_ = -1;
  bool persist_wanted_ = false;
  bool dirty_ = false;
  absl::Time last_persist_;
  absl::Time next_checkpoint_time_;
  int64_t seen_resume_generation_ = 0;
  absl::Time next_out_of_range_report_ = absl::InfinitePast();

  std::thread thread_;

  // The persister: started with the read loop, stopped when it ends.
  absl::Mutex persist_mu_;
  std::optional<PersistJob> persist_job_ ABSL_GUARDED_BY(persist_mu_);
  // A job was handed over and is not written yet.
  bool persist_running_ ABSL_GUARDED_BY(persist_mu_) = false;
  // The first persist failure (the task fails with it).
  absl::Status persist_error_ ABSL_GUARDED_BY(persist_mu_);
  bool persister_exit_ ABSL_GUARDED_BY(persist_mu_) = false;
  // Persists on disk (the restore point's count), for the status.
  std::atomic<int64_t> persists_written_{0};
  std::thread persister_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_RUNNER_H_
