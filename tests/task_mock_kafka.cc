#include "tests/task_mock_kafka.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_macros.h"

namespace sluice::testing {

absl::StatusOr<std::unique_ptr<MockKafka>> MockKafka::Start(int brokers) {
  std::unique_ptr<MockKafka> kafka(new MockKafka());
  SLUICE_ASSIGN_OR_RETURN(kafka->cluster_, kafka::MockCluster::Create(brokers));
  SLUICE_ASSIGN_OR_RETURN(
      kafka->producer_,
      kafka::Producer::Create({{"bootstrap.servers", kafka->cluster_->bootstrap_servers()},
                               {"linger.ms", "5"},
                               // Tests produce records of several MiB.
                               {"message.max.bytes", "16777216"},
                               {"enable.idempotence", "true"}}));
  return kafka;
}

MockKafka::~MockKafka() {
  // Clients before the cluster they talk to.
  producer_.reset();
  cluster_.reset();
}

absl::Status MockKafka::CreateTopic(const std::string& topic, int partitions) {
  return cluster_->CreateTopic(topic, partitions);
}

absl::StatusOr<int64_t> MockKafka::Produce(const std::string& topic, int32_t partition,
                                           const std::vector<std::string>& values) {
  std::vector<kafka::OutgoingRecord> records(values.size());
  for (size_t i = 0; i < values.size(); ++i) records[i].value = values[i];
  return ProduceRecords(topic, partition, records);
}

absl::StatusOr<int64_t> MockKafka::ProduceRecords(
    const std::string& topic, int32_t partition,
    const std::vector<kafka::OutgoingRecord>& records) {
  for (const kafka::OutgoingRecord& record : records) {
    SLUICE_RETURN_IF_ERROR(producer_->ProduceRecord(topic, partition, record));
  }
  SLUICE_RETURN_IF_ERROR(producer_->Flush(absl::Seconds(30)));
  const auto ends = producer_->delivered_end_offsets();
  const auto end = ends.find({topic, partition});
  if (end == ends.end()) {
    return absl::InternalError(
        absl::StrCat("nothing was delivered to ", topic, "[", partition, "]"));
  }
  return end->second - static_cast<int64_t>(records.size());
}

}  // namespace sluice::testing
