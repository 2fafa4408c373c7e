// Test helper for the task worker's tests: an in-process Kafka cluster
// (kafka::MockCluster: librdkafka's mock, real wire protocol on loopback)
// with a producer that reports where each batch of records landed.
//
// Keep test data small: the mock cluster keeps only the last 5 MiB / 100k
// batches of a partition (see KAFKA_DEV_BROKER.md).
#ifndef SLUICE_TESTS_TASK_MOCK_KAFKA_H_
#define SLUICE_TESTS_TASK_MOCK_KAFKA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/mock_cluster.h"
#include "common/kafka/producer.h"

namespace sluice::testing {

class MockKafka {
 public:
  static absl::StatusOr<std::unique_ptr<MockKafka>> Start(int brokers = 1);
  ~MockKafka();

  const std::string& bootstrap() const { return cluster_->bootstrap_servers(); }
  // The mock cluster itself, for its controls (racks, leaders, followers,
  // request tracking: librdkafka's rdkafka_mock.h).
  kafka::MockCluster& cluster() { return *cluster_; }
  absl::Status CreateTopic(const std::string& topic, int partitions);

  // Produces `values` to one partition and waits until every one is stored.
  // Returns the offset of the first.
  absl::StatusOr<int64_t> Produce(const std::string& topic, int32_t partition,
                                  const std::vector<std::string>& values);
  // The same for records with keys, headers and timestamps.
  absl::StatusOr<int64_t> ProduceRecords(const std::string& topic, int32_t partition,
                                         const std::vector<kafka::OutgoingRecord>& records);

 private:
  MockKafka() = default;
  std::unique_ptr<kafka::MockCluster> cluster_;
  std::unique_ptr<kafka::Producer> producer_;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TASK_MOCK_KAFKA_H_
