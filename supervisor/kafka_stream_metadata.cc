#include <string>

#include "common/kafka/metadata_client.h"
#include "common/kafka/property_policy.h"
#include "common/status_macros.h"
#include "supervisor/shared_kafka_clients.h"
#include "supervisor/stream_metadata.h"

namespace sluice::supervisor {
namespace {

class KafkaStreamMetadata : public StreamMetadata {
 public:
  KafkaStreamMetadata(std::string topic, std::shared_ptr<kafka::MetadataClient> client)
      : topic_(std::move(topic)), client_(std::move(client)) {}

  absl::StatusOr<std::vector<int32_t>> ListPartitions(absl::Duration timeout) override {
    return client_->ListPartitions(topic_, timeout);
  }

  absl::StatusOr<std::map<int32_t, PartitionWatermarks>> QueryWatermarks(
      const std::vector<int32_t>& partitions, absl::Duration timeout) override {
    SLUICE_ASSIGN_OR_RETURN(auto marks, client_->QueryWatermarks(topic_, partitions, timeout));
    std::map<int32_t, PartitionWatermarks> out;
    for (const auto& [partition, m] : marks) out[partition] = {m.earliest, m.latest};
    return out;
  }

  absl::StatusOr<std::map<int32_t, int64_t>> QueryNewestTimestamps(
      const std::map<int32_t, int64_t>& latest_offsets, absl::Duration timeout) override {
    return client_->NewestTimestamps(topic_, latest_offsets, timeout);
  }

 private:
  const std::string topic_;
  // Shared with the other datasources on the same cluster and properties.
  const std::shared_ptr<kafka::MetadataClient> client_;
};

}  // namespace

StreamMetadataFactory KafkaStreamMetadataFactory(kafka::PropertyPolicyOptions policy,
                                                std::shared_ptr<SharedKafkaClients> clients) {
  if (clients == nullptr) clients = std::make_shared<SharedKafkaClients>();
  return [policy, clients](
             const v1::SupervisorSpec& spec) -> absl::StatusOr<std::unique_ptr<StreamMetadata>> {
    kafka::KafkaProperties properties(spec.io_config().consumer_properties().begin(),
                                      spec.io_config().consumer_properties().end());
    // Specs stored before a policy change are checked again before connecting.
    SLUICE_RETURN_IF_ERROR(kafka::CheckProperties(properties, policy));
    SLUICE_ASSIGN_OR_RETURN(properties, kafka::ResolveSecretReferences(properties, policy));
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<kafka::MetadataClient> client,
                            clients->Get(properties));
    return std::unique_ptr<StreamMetadata>(
        new KafkaStreamMetadata(spec.io_config().topic(), std::move(client)));
  };
}

}  // namespace sluice::supervisor
