// The audit's RecordCounter over a real Kafka cluster: counts the records of
// [start, end) of a partition by reading them back with an assign()-based
// consumer (no group), in batches (rd_kafka_consume_batch_queue), so that
// millions of records take seconds.
//
//   SLUICE_ASSIGN_OR_RETURN(auto counter, KafkaRecordCounter::Create(
//       {.properties = {{"bootstrap.servers", bootstrap}},
//        .cluster = kafka::ClusterKind::kDevBroker}));
//   SLUICE_ASSIGN_OR_RETURN(int64_t n, counter->CountRecords("wiki", 3, 0, 75000));
//
// A record is an offset Kafka returns: offsets of compacted-away records,
// transaction markers and (read_committed, librdkafka's default isolation
// level) records of aborted transactions are not counted. A range whose last
// offsets hold no such record ends at the partition's end (EOF event) or at
// the first record past it. A range Kafka no longer (start before
// the earliest offset) or not yet (end past the latest) holds is an error,
// never a short count. Not thread-safe (one consumer); not copyable.
#ifndef SLUICE_TOOLS_AUDIT_KAFKA_RECORD_COUNTER_H_
#define SLUICE_TOOLS_AUDIT_KAFKA_RECORD_COUNTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kafka/config.h"
#include "common/kafka/consumer_settings.h"
#include "common/kafka/handles.h"
#include "task/kafka_consumer.h"
#include "tools/audit/exactly_once_audit.h"

namespace sluice::audit {

struct KafkaRecordCounterOptions {
  // Consumer properties: "bootstrap.servers" at least. The recommended
  // consumer settings for `cluster` (common/kafka/consumer_settings.h) go
  // under them.
  kafka::KafkaProperties properties;
  kafka::ClusterKind cluster = kafka::ClusterKind::kKafka;
  // A range fails (UNAVAILABLE) when no record arrives for this long.
  absl::Duration idle_timeout = absl::Seconds(30);
  // Records taken per rd_kafka_consume_batch_queue call.
  int batch_size = 10000;
  // When set, CountRange re-parses every record with it (true: it is not
  // unparseable, whether it became a row or was thrown away) and reports how
  // many do not. It gets the record (value, offset; partition: the Kafka
  // one) and, with read_envelope, its envelope as the task's read loop reads
  // it (task::ReadMessageEnvelope: key, Kafka timestamp, headers, topic,
  // partition), for the kafka input format and the header filter; without,
  // an empty envelope.
  std::function<bool(const task::KafkaRecord& record, const task::KafkaEnvelope& envelope)>
      parses;
  // Costs a header parse per record: only when the spec needs the envelope.
  bool read_envelope = false;
};

class KafkaRecordCounter : public RecordCounter {
 public:
  // INVALID_ARGUMENT for bad properties.
  static absl::StatusOr<std::unique_ptr<KafkaRecordCounter>> Create(
      KafkaRecordCounterOptions options);
  ~KafkaRecordCounter() override;
  KafkaRecordCounter(const KafkaRecordCounter&) = delete;
  KafkaRecordCounter& operator=(const KafkaRecordCounter&) = delete;

  // OUT_OF_RANGE when `start` is before the earliest offset still stored;
  // DATA_LOSS when the partition ends before `end`; UNAVAILABLE when records
  // stop arriving for idle_timeout; NOT_FOUND for an unknown partition.
  absl::StatusOr<int64_t> CountRecords(const std::string& topic, int32_t partition, int64_t start,
                                       int64_t end) override;

  // CountRecords, and the unparseable records when options.parses is set.
  absl::StatusOr<RangeCount> CountRange(const std::string& topic, int32_t partition,
                                        int64_t start, int64_t end) override;

  // The partition's low watermark, asked of its leader (within idle_timeout).
  absl::StatusOr<int64_t> EarliestOffset(const std::string& topic, int32_t partition) override;

  // Records read so far (over every call).
  int64_t records_read() const { return records_read_; }

 private:
  KafkaRecordCounter(KafkaRecordCounterOptions options, kafka::HandlePtr rk, kafka::QueuePtr queue)
      : options_(std::move(options)), rk_(std::move(rk)), queue_(std::move(queue)) {}

  // Reads [start, end); counts records and, with options_.parses, the
  // records that do not parse.
  absl::StatusOr<RangeCount> Read(const std::string& topic, int32_t partition, int64_t start,
                                  int64_t end);

  const KafkaRecordCounterOptions options_;
  kafka::HandlePtr rk_;
  kafka::QueuePtr queue_;
  int64_t records_read_ = 0;
};

}  // namespace sluice::audit

#endif  // SLUICE_TOOLS_AUDIT_KAFKA_RECORD_COUNTER_H_
