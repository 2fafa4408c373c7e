#include "tools/audit/kafka_record_counter.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/kafka/errors.h"
#include "common/status_macros.h"

namespace sluice::audit {

absl::StatusOr<std::unique_ptr<KafkaRecordCounter>> KafkaRecordCounter::Create(
    KafkaRecordCounterOptions options) {
  if (options.properties.count("bootstrap.servers") == 0) {
    return absl::InvalidArgumentError("the record counter needs bootstrap.servers");
  }
  if (options.batch_size < 1) return absl::InvalidArgumentError("batch_size must be >= 1");
  kafka::KafkaProperties properties = options.properties;
  // Partition EOF events tell a range that ends past the partition's end at
  // once, instead of after the idle timeout.
  properties["enable.partition.eof"] = "true";
  properties.emplace("group.id", "sluice-audit");
  SLUICE_ASSIGN_OR_RETURN(
      kafka::ConfPtr conf,
      kafka::BuildConf(kafka::WithConsumerDefaults(properties, options.cluster), "audit"));
  SLUICE_ASSIGN_OR_RETURN(kafka::HandlePtr rk,
                          kafka::NewHandle(RD_KAFKA_CONSUMER, std::move(conf)));
  kafka::QueuePtr queue(rd_kafka_queue_get_consumer(rk.get()));
  if (queue == nullptr) {
    rd_kafka_consumer_close(rk.get());
    return absl::InternalError("librdkafka gave no consumer queue");
  }
  return std::unique_ptr<KafkaRecordCounter>(
      new KafkaRecordCounter(std::move(options), std::move(rk), std::move(queue)));
}

KafkaRecordCounter::~KafkaRecordCounter() {
  queue_.reset();
  if (rk_ != nullptr) rd_kafka_consumer_close(rk_.get());
}

absl::StatusOr<int64_t> KafkaRecordCounter::CountRecords(const std::string& topic,
                                                         int32_t partition, int64_t start,
                                                         int64_t end) {
  SLUICE_ASSIGN_OR_RETURN(RangeCount range, Read(topic, partition, start, end));
  return range.records;
}

absl::StatusOr<RangeCount> KafkaRecordCounter::CountRange(const std::string& topic,
                                                          int32_t partition, int64_t start,
                                                          int64_t end) {
  return Read(topic, partition, start, end);
}

absl::StatusOr<RangeCount> KafkaRecordCounter::Read(const std::string& topic, int32_t partition,
                                                    int64_t start, int64_t end) {
  RangeCount range;
  if (options_.parses) range.unparseable = 0;
  if (start < 0 || end < start) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad range [", start, ", ", end, ") of ", topic, "[", partition, "]"));
  }
  if (end == start) return range;
  const std::string where = absl::StrCat(topic, "[", partition, "] [", start, ", ", end, ")");
  kafka::TopicPartitionListPtr assignment(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), partition)->offset = start;
  // Replaces the previous range's assignment; librdkafka drops what it had
  // fetched for it (and offsets below `next` are skipped anyway).
  SLUICE_RETURN_IF_ERROR(kafka::KafkaErrorToStatus(rd_kafka_assign(rk_.get(), assignment.get()),
                                                   absl::StrCat("assign ", where)));
  absl::Status status;
  int64_t count = 0;
  int64_t next = start;  // Every offset below it has been seen.
  absl::Time last_progress = absl::Now();
  std::vector<rd_kafka_message_t*> batch(static_cast<size_t>(options_.batch_size));
  task::KafkaEnvelope envelope;  // Reused per record (its header vector).
  while (status.ok() && next < end) {
    // Asking for no more than the range still needs returns as soon as they
    // are there (a batch call otherwise waits for a full batch).
    const size_t want = static_cast<size_t>(
        std::min<int64_t>(options_.batch_size, std::max<int64_t>(1, end - next)));
    const ssize_t n = rd_kafka_consume_batch_queue(queue_.get(), 100, batch.data(), want);
    if (n < 0) {
      status = kafka::KafkaErrorToStatus(rd_kafka_last_error(), absl::StrCat("read ", where));
      break;
    }
    for (ssize_t i = 0; i < n; ++i) {
      kafka::MessagePtr message(batch[static_cast<size_t>(i)]);
      if (!status.ok() || message->partition != partition) continue;
      if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        // The partition's end (for read_committed, its last stable offset)
        // is at or past the range's end: every record of the range has been
        // seen. The offsets between the last record and the end hold no
        // record a reader gets (transaction markers, aborted or compacted
        // records); without this the count waited for the idle timeout on
        // any range whose last offset is a commit marker.
        if (message->offset >= end) {
          next = end;
        } else if (next < end) {
          status = absl::DataLossError(
              absl::StrCat("read ", where, ": the partition ends at offset ", message->offset,
                           ", before the end of the range (records were lost or never written)"));
        }
        continue;
      }
      if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        status = kafka::KafkaErrorToStatus(message->err, absl::StrCat("read ", where),
                                           rd_kafka_message_errstr(message.get()));
        continue;
      }
      if (message->offset < next) continue;  // Seen already.
      if (message->offset >= end) {
        next = end;  // Past the range: the records at [next, end) do not exist.
        continue;
      }
      ++count;
      if (options_.parses) {
        const task::KafkaRecord record{
            message->partition, message->offset,
            absl::string_view(static_cast<const char*>(message->payload),
                              message->payload == nullptr ? 0 : message->len)};
        if (options_.read_envelope) task::ReadMessageEnvelope(*message, &envelope);
        if (!options_.parses(record, envelope)) ++range.unparseable;
      }
      next = message->offset + 1;
    }
    if (n > 0) {
      last_progress = absl::Now();
    } else if (absl::Now() - last_progress > options_.idle_timeout) {
      status = absl::UnavailableError(absl::StrCat("read ", where, ": no record for ",
                                                   absl::FormatDuration(options_.idle_timeout),
                                                   " at offset ", next));
    }
  }
  records_read_ += count;
  if (!status.ok()) return status;
  range.records = count;
  return range;
}

absl::StatusOr<int64_t> KafkaRecordCounter::EarliestOffset(const std::string& topic,
                                                           int32_t partition) {
  int64_t low = 0;
  int64_t high = 0;
  SLUICE_RETURN_IF_ERROR(kafka::KafkaErrorToStatus(
      rd_kafka_query_watermark_offsets(rk_.get(), topic.c_str(), partition, &low, &high,
                                       static_cast<int>(absl::ToInt64Milliseconds(
                                           options_.idle_timeout))),
      absl::StrCat("watermarks of ", topic, "[", partition, "]")));
  return low;
}

}  // namespace sluice::audit
