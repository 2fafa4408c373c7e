// Test helper: an in-process Kafka cluster on loopback (librdkafka's mock
// cluster, real wire protocol) and a producer for it. Used by the task
// worker's tests until the dev broker helpers of common/kafka land.
//
// Keep test data small: the mock cluster keeps only the last 5 MiB / 100k
// batches of a partition (see KAFKA_DEV_BROKER.md).
#ifndef SLUICE_TESTS_TASK_MOCK_KAFKA_H_
#define SLUICE_TESTS_TASK_MOCK_KAFKA_H_

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::testing {

class MockKafka {
 public:
  static absl::StatusOr<std::unique_ptr<MockKafka>> Start(int brokers = 1);
  ~MockKafka();
  MockKafka(const MockKafka&) = delete;
  MockKafka& operator=(const MockKafka&) = delete;

  // "127.0.0.1:port,..."
  const std::string& bootstrap() const { return bootstrap_; }

  absl::Status CreateTopic(const std::string& topic, int partitions);

  // Produces `values` to one partition and waits until every one is stored.
  // Returns the offset of the first.
  absl::StatusOr<int64_t> Produce(const std::string& topic, int32_t partition,
                                  const std::vector<std::string>& values);

  // (earliest, latest) offsets.
  absl::StatusOr<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic,
                                                         int32_t partition);

 private:
  MockKafka() = default;

  rd_kafka_t* cluster_handle_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  rd_kafka_t* producer_ = nullptr;
  std::string bootstrap_;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TASK_MOCK_KAFKA_H_
