// Test helper: an in-process librdkafka mock cluster (real Kafka protocol on
// 127.0.0.1, ephemeral ports) for unit tests of Kafka clients.
//
// It keeps librdkafka's retention cap (each partition keeps only its last
// 5 MiB / 100,000 batches): tests that need more data than that use the dev
// broker (//tools/devbroker), which lifts it.
//
//   ASSERT_OK_AND_ASSIGN(auto cluster, kafka::MockCluster::Create(1));
//   ASSERT_TRUE(cluster->CreateTopic("wiki", 4).ok());
//   Producer::Create({{"bootstrap.servers", cluster->bootstrap_servers()}});
//
// Not copyable. Destroy it after every client connected to it.
#ifndef SLUICE_COMMON_KAFKA_MOCK_CLUSTER_H_
#define SLUICE_COMMON_KAFKA_MOCK_CLUSTER_H_

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kafka/handles.h"

namespace sluice {
namespace kafka {

class MockCluster {
 public:
  static absl::StatusOr<std::unique_ptr<MockCluster>> Create(int brokers);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  // "127.0.0.1:PORT,..." for bootstrap.servers.
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }

  // Creates `topic` with `partitions` partitions.
  absl::Status CreateTopic(absl::string_view topic, int partitions);

  // The raw cluster, for fault injection (rd_kafka_mock_broker_set_down, ...).
  rd_kafka_mock_cluster_t* get() const { return cluster_; }

 private:
  MockCluster() = default;

  HandlePtr rk_;  // The handle the mock cluster lives on.
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::string bootstrap_servers_;
};

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_MOCK_CLUSTER_H_
