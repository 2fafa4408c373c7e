// The read loop of one task (its own thread): consumes in batches, routes
// each record to the first sequence that takes it (RecordRouter), parses it,
// adds it to the index of its (sequence, interval) (OpenSegments) and checks
// the triggers:
// - persist (Persister) at maxRowsInMemory, maxBytesInMemory or
//   intermediatePersistPeriod, before a closed sequence goes to the
//   publisher, and when the task stops. A closed sequence goes to the
//   publisher, which reads its files once they are on disk: the segments
//   whose rows are all still in memory then are built straight into their
//   segment files by that persist (the direct build: no spill of those rows
//   written and read back), the rest spilled as usual;
// - checkpoint (TaskControl::RequestCheckpoint) when a segment of the latest
//   sequence reaches maxRowsPerSegment, the unpublished rows reach
//   maxTotalRows, or intermediateHandoffPeriod elapsed.
// It parks between two records when a pause is requested (TaskControl::Park)
// and picks up the sequence list (SequenceStore) after each park and publish.
//
// The loop touches shared state once per batch (offsets, counters), never
// per record. Parse errors past maxParseExceptions, an offset going
// backwards, a failed persist or publish fail the task with the reason.
//
// Restore: a task directory with a sequence list and a restore point resumes
// at the restore point's offsets with its spills; records before them are
// never read again.
//
// The loop delegates each job to a part it owns: PartitionReader (the
// consumer and the offsets), RecordIngester (a record into its segment),
// CheckpointTriggers (checkpoint requests and parking), PersistPlanner
// (persist triggers and jobs); it keeps the order of things and the hand-over
// of closed sequences to the publisher.
//
// Not thread-safe: Run() is the thread's body; everything else it touches
// is behind TaskControl, SequenceStore and SequencePublisher.
#ifndef SLUICE_TASK_READ_LOOP_H_
#define SLUICE_TASK_READ_LOOP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sluice/v1/task.pb.h"
#include "common/offsets.h"
#include "task/checkpoint_triggers.h"
#include "task/kafka_consumer.h"
#include "task/open_segments.h"
#include "task/partition_reader.h"
#include "task/persist_planner.h"
#include "task/record_ingester.h"
#include "task/record_router.h"
#include "task/segment_sink.h"
#include "task/sequence_publisher.h"
#include "task/sequence_store.h"
#include "task/supervisor_client.h"
#include "task/task_control.h"
#include "task/task_files.h"
#include "task/task_metrics.h"
#include "task/task_spec.h"

namespace sluice::task {

// Timing and size tuning with production defaults; tests make them short.
struct TaskTuningOptions {
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
  // A segment (or the sequence) at this fraction of maxRowsPerSegment
  // (maxTotalRows) asks for its checkpoint and reads on; it parks only if it
  // fills up before the end offsets come. intermediateHandoffPeriod asks
  // without parking too. <= 0 or >= 1: ask only when full, and park (the
  // classic round).
  double early_checkpoint_fraction = 0.9;
  // Records claimed (TaskControl::Claim) at a time: the claims run at most
  // this far ahead of the records routed, which the supervisor's margin
  // must cover.
  size_t claim_chunk_records = 64;
  // The worker's ingestion memory per task slot (--ingestion_memory_bytes /
  // --capacity, as Druid's Indexer divides globalIngestionHeapLimitBytes);
  // 0: none. A task's maxBytesInMemory is at most this. (Its consumer's
  // prefetch queue is held to a quarter of its maxBytesInMemory either way:
  // KafkaConsumerOptions::max_prefetch_bytes.)
  int64_t ingestion_memory_per_task = 0;
};

struct ReadLoopOptions {
  // Checked (CheckTaskSpec gave `settings`).
  const v1::TaskSpec* spec = nullptr;
  const TaskSettings* settings = nullptr;
  std::string task_dir;
  TaskTuningOptions tuning;
  TaskMetrics metrics;
  std::string log_prefix;
  // Not owned; outlive the loop.
  SupervisorClient* supervisor = nullptr;
  SegmentEngine* engine = nullptr;
  TaskControl* control = nullptr;
  SequenceStore* sequences = nullptr;
  SequencePublisher* publisher = nullptr;
  // Allocates the segments (SupervisorSegmentAllocator in production).
  SegmentAllocator* allocator = nullptr;
  // The worker's build slots, taken by the persister's direct builds (null:
  // no limit).
  BuildSlots* build_slots = nullptr;
  // After every state change, without locks held.
  std::function<void()> notify;
  // Ends the task with its final state and error (the loop has released
  // its resources and published its last offsets).
  std::function<void(v1::TaskState, std::string)> end;
};

class ReadLoop {
 public:
  explicit ReadLoop(ReadLoopOptions options);
  ReadLoop(const ReadLoop&) = delete;
  ReadLoop& operator=(const ReadLoop&) = delete;

  // The thread's body: reads until the final end is published, a stop, or a
  // failure, then ends the task (options.end) unless the worker shuts down.
  void Run();

 private:
  absl::Status RunLoop();
  absl::Status Initialize();
  absl::Status Restore(const state::RestorePoint& point);
  // Records of the batch from *next on, claimed chunk by chunk, until the
  // batch ends or a pause or stop is requested.
  absl::Status ProcessRecords(const KafkaBatch& batch, size_t* next);
  // A persist of everything read since the last one (PersistPlanner::Submit,
  // after waiting for the previous persist).
  absl::Status StartPersist(const std::vector<Sequence>& closed = {});
  // StartPersist + wait until it is on disk.
  absl::Status Persist();
  // Hands the sequences fully read to the publisher, after the persist that
  // puts their rows on disk.
  absl::Status EnqueueClosedSequences();
  // A new snapshot of the sequence list into the router.
  void RefreshRoutes();
  void PrunePublished();
  void PublishProgress();
  void SetState(v1::TaskState state);
  void Finish(absl::Status outcome);
  // Persists what was read since the last persist (errors are logged).
  void PersistAtEnd(const char* when);

  const ReadLoopOptions options_;
  const v1::TaskSpec& spec_;
  const TaskSettings& settings_;
  const TaskFiles files_;

  RecordRouter router_;
  OpenSegments segments_;
  PartitionReader reader_;
  RecordIngester ingester_;
  CheckpointTriggers checkpoints_;
  PersistPlanner persists_;

  bool initialized_ = false;
  // What PublishProgress last added to the metrics.
  IngestCounters exported_;
  // Highest sequence id given to the publisher.
  int32_t enqueued_through_ = -1;
  // Sequences up to this id were read before a restart (may be published).
  int32_t restored_through_ = -1;
  int32_t pruned_through_ = -1;
  // The sequence list generation the routes reflect (TaskControl::Claim).
  int64_t routes_generation_ = 0;
  // Reused per chunk (TaskControl::Claim).
  OffsetMap claim_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_READ_LOOP_H_
