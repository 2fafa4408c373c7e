// One record from the batch into its segment: the partition and offset
// checks, routing (RecordRouter), the kafka input format's envelope and the
// header filter, parsing, the message time window, and the row added to the
// index of its (sequence, interval) (OpenSegments). Keeps the counts of the
// records (processed, unparseable, thrown away) and of what sits in memory,
// and the parse error samples (TaskControl::AddParseError) up to
// maxParseExceptions.
//
// Not thread-safe: owned and used by the read loop only.
#ifndef SLUICE_TASK_RECORD_INGESTER_H_
#define SLUICE_TASK_RECORD_INGESTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "sluice/v1/task.pb.h"
#include "task/header_filter.h"
#include "task/kafka_consumer.h"
#include "task/open_segments.h"
#include "task/partition_reader.h"
#include "task/record_envelope_builder.h"
#include "task/record_router.h"
#include "task/segment_sink.h"
#include "task/task_control.h"
#include "task/task_spec.h"
#include "task/task_state.pb.h"

namespace sluice::task {

// The read loop's record accounting (published to shared state once per
// batch).
struct IngestCounters {
  int64_t processed = 0;
  int64_t processed_bytes = 0;
  int64_t unparseable = 0;
  int64_t thrown_away = 0;
  int64_t rows_in_memory = 0;
  int64_t bytes_in_memory = 0;
};

struct RecordIngesterOptions {
  // Checked (CheckTaskSpec gave `settings`).
  const v1::TaskSpec* spec = nullptr;
  const TaskSettings* settings = nullptr;
  // Not owned; outlive the ingester.
  SegmentEngine* engine = nullptr;
  RecordRouter* router = nullptr;
  OpenSegments* segments = nullptr;
  // Where each partition is read to (moved past every record taken).
  PartitionReader* reader = nullptr;
  TaskControl* control = nullptr;
  std::string log_prefix;
};

class RecordIngester {
 public:
  // What one record did.
  struct Outcome {
    // The partition's offset moved past the record (false: past the final
    // end, skipped).
    bool read = false;
    // A row was added to this route's sequence (-1: none), making its
    // segment and its sequence this many rows.
    int route = -1;
    int64_t segment_rows = 0;
    int64_t sequence_rows = 0;
  };

  explicit RecordIngester(RecordIngesterOptions options);
  RecordIngester(const RecordIngester&) = delete;
  RecordIngester& operator=(const RecordIngester&) = delete;

  // The parser, and the envelope builder and header filter the spec sets.
  absl::Status Initialize();
  // Record `i` of `batch`. Errors: an offset going backwards, a partition or
  // offset no sequence takes, an allocation failure, maxParseExceptions.
  absl::StatusOr<Outcome> Ingest(const KafkaBatch& batch, size_t i);

  const IngestCounters& counters() const { return counters_; }
  // The counters a restore point saved (nothing in memory).
  void RestoreCounters(const state::Counters& saved);
  // The rows in memory left (a persist took them, or the task ended).
  void ClearInMemory();

 private:
  // Counts the record as thrown away; it is read.
  Outcome ThrowAway(state::PartitionCounts& counts, int64_t& current, int64_t offset);
  // Counts and samples the record as unparseable; it is read.
  absl::Status Unparseable(const KafkaRecord& record, const RowParseError& error,
                           state::PartitionCounts& counts, int64_t& current);

  const RecordIngesterOptions options_;
  const v1::TaskSpec& spec_;
  const TaskSettings& settings_;
  RecordRouter& router_;
  std::unique_ptr<RowParser> parser_;
  // The read-ahead, on the plain path (no envelope, no header filter): the
  // next record of the batch is parsed before this one's row is added, and
  // its dictionary slots are prefetched (SegmentIndex::Prefetch), so that
  // the cache misses of its lookups overlap this record's add instead of
  // stalling the next one. Rows are still added one at a time in batch
  // order; only the parse runs a record ahead, which changes nothing (a
  // parse has no effect beyond its parser's row, and its error is counted
  // when the record's own turn comes).
  void ReadAhead(const KafkaBatch& batch, size_t i, SegmentIndex& index);
  // The row (or error) of record ahead_record_ of the batch filled as
  // ahead_serial_, in ahead_parser_; taken by the Ingest of that record
  // (the parsers swap), dropped by any other.
  std::unique_ptr<RowParser> ahead_parser_;
  bool ahead_ready_ = false;
  uint64_t ahead_serial_ = 0;
  size_t ahead_record_ = 0;
  const ParsedRow* ahead_row_ = nullptr;
  RowParseError ahead_error_;
  // The kafka input format and the header filter (ioConfig), when set: only
  // then does a record's envelope get read (into envelope_meta_, reused).
  std::optional<RecordEnvelopeBuilder> envelope_builder_;
  std::optional<HeaderFilter> header_filter_;
  KafkaEnvelope envelope_meta_;
  IngestCounters counters_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_RECORD_INGESTER_H_
