// Where the read loop is on each partition, and the consumer that reads
// there: the next offset per partition slot, the assignment (only the
// partitions not yet at their final end), the ends the consumer reached,
// OffsetOutOfRange (reported to the supervisor, retried after a wait), the
// consumer's authentication failures (in the task's status and a metric),
// and the Kafka timestamp of the last record read per partition.
//
// Not thread-safe: owned and used by the read loop only; the control wakes
// the consumer through the waker set in Open.
#ifndef SLUICE_TASK_PARTITION_READER_H_
#define SLUICE_TASK_PARTITION_READER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/offsets.h"
#include "task/kafka_consumer.h"
#include "task/record_router.h"
#include "task/supervisor_client.h"
#include "task/task_control.h"
#include "task/task_metrics.h"

namespace sluice::task {

struct PartitionReaderOptions {
  // Not owned; outlive the reader. The router gives the slots and the
  // task's end per slot.
  const RecordRouter* router = nullptr;
  TaskControl* control = nullptr;
  SupervisorClient* supervisor = nullptr;
  // For ReportOffsetOutOfRange.
  std::string datasource;
  std::string task_id;
  bool reset_offset_automatically = false;
  // How long a partition whose offset is out of range waits before trying
  // again (a pause or stop cuts it short).
  absl::Duration offset_out_of_range_retry = absl::Seconds(5);
  TaskMetrics metrics;
  std::string log_prefix;
};

class PartitionReader {
 public:
  explicit PartitionReader(PartitionReaderOptions options);
  PartitionReader(const PartitionReader&) = delete;
  PartitionReader& operator=(const PartitionReader&) = delete;

  // Creates the consumer (nothing assigned yet) and lets the control wake it.
  absl::Status Open(KafkaConsumerOptions options);
  // Destroys the consumer, after the control can no longer wake it.
  void Release();

  // The next offset to read of each slot.
  int64_t& current(int slot) { return current_[slot]; }
  int64_t current(int slot) const { return current_[slot]; }
  // The next offsets by partition.
  OffsetMap Offsets() const;
  // Starts every slot at the first route's start (the task's end if none).
  void StartAtFirstRoute();
  // Offsets of a restore point: one per partition of the task.
  absl::Status RestoreOffsets(const OffsetMap& current);
  // DATA_LOSS if an offset is before the first route's start (published
  // records would be read again).
  absl::Status CheckNotBeforeFirstRoute() const;

  // Assigns the partitions not yet at their final end, at the current
  // offsets, if that set changed. Returns whether it reassigned.
  absl::StatusOr<bool> Reassign();
  // Unassigns every partition (the task read to its final end).
  absl::Status AssignNone();
  // A batch poll; then the consumer's authentication failures into the
  // status and the metric.
  absl::Status Poll(absl::Duration timeout, size_t max_records, KafkaBatch* batch,
                    std::vector<OffsetOutOfRange>* out_of_range);
  // Moves the current offset of every partition whose end the consumer
  // reached up to that end (at most the final end). Returns whether any moved.
  bool AdvanceToReachedEnds();
  bool ReachedFinalEnd() const;
  // Reports the partitions out of range (with their watermarks), waits,
  // then assigns them again at the same offsets.
  absl::Status HandleOutOfRange(const std::vector<OffsetOutOfRange>& out_of_range);

  // Notes the Kafka timestamp of the last record read of each partition
  // among batch records [begin, end) (TaskStatus.last_read_timestamps_ms).
  void NoteLastRead(const KafkaBatch& batch, size_t begin, size_t end);
  // By partition, those read so far.
  std::map<int32_t, int64_t> LastReadTimestamps() const;

 private:
  // A refused login shows in the task's status while it lasts (the consumer
  // keeps trying; records come again once the credentials are right) and
  // counts in the metric.
  void ShowAuthFailures();

  const PartitionReaderOptions options_;
  const RecordRouter& router_;
  std::unique_ptr<KafkaConsumer> consumer_;
  // The consumer's authentication failure the task's status shows ("": none).
  std::string shown_auth_error_;
  // Per slot: the next offset to read.
  std::vector<int64_t> current_;
  // Per slot: the Kafka timestamp of the last record read (-1: none yet),
  // and NoteLastRead's scratch.
  std::vector<int64_t> last_read_timestamps_;
  std::vector<bool> last_read_noted_;
  OffsetMap assigned_;
  bool assignment_valid_ = false;
  absl::Time next_out_of_range_report_ = absl::InfinitePast();
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_PARTITION_READER_H_
