#include "common/kafka/mock_cluster.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/config.h"
#include "common/kafka/errors.h"
#include "common/status_macros.h"

namespace sluice {
namespace kafka {

absl::StatusOr<std::unique_ptr<MockCluster>> MockCluster::Create(int brokers) {
  if (brokers < 1) return absl::InvalidArgumentError("a mock cluster needs at least 1 broker");
  std::unique_ptr<MockCluster> cluster(new MockCluster());
  SLUICE_ASSIGN_OR_RETURN(ConfPtr conf, BuildConf({{"log_level", "4"}}, "mock-cluster"));
  SLUICE_ASSIGN_OR_RETURN(cluster->rk_, NewHandle(RD_KAFKA_PRODUCER, std::move(conf)));
  cluster->cluster_ = rd_kafka_mock_cluster_new(cluster->rk_.get(), brokers);
  if (cluster->cluster_ == nullptr) {
    return absl::InternalError("rd_kafka_mock_cluster_new failed (see the log)");
  }
  cluster->bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(cluster->cluster_);
  return cluster;
}

MockCluster::~MockCluster() {
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
}

absl::Status MockCluster::CreateTopic(absl::string_view topic, int partitions) {
  const std::string name(topic);
  return KafkaErrorToStatus(
      rd_kafka_mock_topic_create(cluster_, name.c_str(), partitions, /*replication_factor=*/1),
      absl::StrCat("create mock topic ", topic));
}

}  // namespace kafka
}  // namespace sluice
