#include "common/kafka/test_consumer.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kafka/consumer_settings.h"
#include "common/kafka/errors.h"
#include "common/kafka/handles.h"
#include "common/status_macros.h"

namespace sluice {
namespace kafka {

absl::StatusOr<std::map<int32_t, std::vector<ConsumedRecord>>> ReadRecords(
    const KafkaProperties& properties, absl::string_view topic,
    const std::map<int32_t, OffsetRange>& ranges, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const std::string topic_str(topic);
  std::map<int32_t, std::vector<ConsumedRecord>> result;
  std::map<int32_t, int64_t> next;  // Partitions still to finish -> next offset.
  TopicPartitionListPtr assignment(rd_kafka_topic_partition_list_new(ranges.size()));
  for (const auto& [partition, range] : ranges) {
    result[partition];
    if (range.end <= range.start) continue;
    next[partition] = range.start;
    rd_kafka_topic_partition_list_add(assignment.get(), topic_str.c_str(), partition)->offset =
        range.start;
  }
  if (next.empty()) return result;

  SLUICE_ASSIGN_OR_RETURN(
      ConfPtr conf,
      BuildConf(WithConsumerDefaults(properties, ClusterKind::kDevBroker), "test-consumer"));
  SLUICE_ASSIGN_OR_RETURN(HandlePtr rk, NewHandle(RD_KAFKA_CONSUMER, std::move(conf)));
  absl::Status status = KafkaErrorToStatus(rd_kafka_assign(rk.get(), assignment.get()),
                                           absl::StrCat("assign ", topic));
  while (status.ok() && !next.empty()) {
    if (absl::Now() >= deadline) {
      std::vector<std::string> progress;
      for (const auto& [partition, offset] : next) {
        progress.push_back(absl::StrCat(partition, "@", offset, "/", ranges.at(partition).end));
      }
      status = absl::UnavailableError(absl::StrCat(
          "read ", topic, ": timed out after ", absl::FormatDuration(timeout),
          "; unfinished partitions (partition@next/end): ", absl::StrJoin(progress, ", ")));
      break;
    }
    MessagePtr message(rd_kafka_consumer_poll(rk.get(), 100));
    if (message == nullptr) continue;
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = KafkaErrorToStatus(message->err,
                                  absl::StrCat("read ", topic, "[", message->partition, "]"),
                                  rd_kafka_message_errstr(message.get()));
      break;
    }
    auto it = next.find(message->partition);
    if (it == next.end() || message->offset < it->second) continue;  // Past the end, or old.
    const OffsetRange& range = ranges.at(message->partition);
    if (message->offset >= range.end) continue;
    ConsumedRecord record;
    record.partition = message->partition;
    record.offset = message->offset;
    if (message->key != nullptr) {
      record.key.assign(static_cast<const char*>(message->key), message->key_len);
    }
    if (message->payload != nullptr) {
      record.value.assign(static_cast<const char*>(message->payload), message->len);
    }
    result[message->partition].push_back(std::move(record));
    it->second = message->offset + 1;
    if (it->second >= range.end) next.erase(it);
  }
  rd_kafka_consumer_close(rk.get());
  if (!status.ok()) return status;
  return result;
}

}  // namespace kafka
}  // namespace sluice
