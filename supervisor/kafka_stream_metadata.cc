#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "common/kafka/metadata_client.h"
#include "common/kafka/property_policy.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "common/topic_pattern.h"
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

// ioConfig.topicPattern: every topic of the cluster whose name matches,
// each (topic, partition) under its stream partition id.
class KafkaTopicPatternMetadata : public StreamMetadata {
 public:
  KafkaTopicPatternMetadata(TopicPattern pattern, std::shared_ptr<kafka::MetadataClient> client)
      : pattern_(std::move(pattern)), client_(std::move(client)) {}

  absl::StatusOr<std::vector<int32_t>> ListPartitions(absl::Duration timeout) override {
    SLUICE_ASSIGN_OR_RETURN(auto topics, client_->ListTopics(timeout));
    std::vector<TopicPartition> found;
    for (const auto& [topic, partitions] : topics) {
      if (!pattern_.Matches(topic)) continue;
      for (int32_t partition : partitions) found.push_back({topic, partition});
    }
    if (found.empty()) {
      return absl::NotFoundError(absl::StrCat("no topic of the cluster matches topicPattern \"",
                                              pattern_.pattern(), "\""));
    }
    return ids_.IdsOf(std::move(found));
  }

  absl::StatusOr<std::map<int32_t, PartitionWatermarks>> QueryWatermarks(
      const std::vector<int32_t>& partitions, absl::Duration timeout) override {
    const absl::Time deadline = absl::Now() + timeout;
    SLUICE_ASSIGN_OR_RETURN(auto by_topic, ByTopic(partitions));
    std::map<int32_t, PartitionWatermarks> out;
    for (const auto& [topic, ids] : by_topic) {
      std::vector<int32_t> kafka_partitions;
      for (const auto& [kafka_partition, id] : ids) kafka_partitions.push_back(kafka_partition);
      SLUICE_ASSIGN_OR_RETURN(auto marks, client_->QueryWatermarks(topic, kafka_partitions,
                                                                   Remaining(deadline)));
      for (const auto& [kafka_partition, m] : marks) {
        out[ids.at(kafka_partition)] = {m.earliest, m.latest};
      }
    }
    return out;
  }

  absl::StatusOr<std::map<int32_t, int64_t>> QueryNewestTimestamps(
      const std::map<int32_t, int64_t>& latest_offsets, absl::Duration timeout) override {
    const absl::Time deadline = absl::Now() + timeout;
    std::vector<int32_t> partitions;
    for (const auto& [id, offset] : latest_offsets) partitions.push_back(id);
    SLUICE_ASSIGN_OR_RETURN(auto by_topic, ByTopic(partitions));
    std::map<int32_t, int64_t> out;
    for (const auto& [topic, ids] : by_topic) {
      std::map<int32_t, int64_t> latest;
      for (const auto& [kafka_partition, id] : ids) latest[kafka_partition] = latest_offsets.at(id);
      SLUICE_ASSIGN_OR_RETURN(auto newest,
                              client_->NewestTimestamps(topic, latest, Remaining(deadline)));
      for (const auto& [kafka_partition, ms] : newest) out[ids.at(kafka_partition)] = ms;
    }
    return out;
  }

  StreamPartitionIds* stream_partition_ids() override { return &ids_; }

 private:
  // topic -> Kafka partition -> stream partition id; NOT_FOUND for an id
  // never given.
  absl::StatusOr<std::map<std::string, std::map<int32_t, int32_t>>> ByTopic(
      const std::vector<int32_t>& partitions) const {
    std::map<std::string, std::map<int32_t, int32_t>> out;
    for (int32_t id : partitions) {
      std::optional<TopicPartition> tp = ids_.Find(id);
      if (!tp.has_value()) {
        return absl::NotFoundError(absl::StrCat("stream partition ", id, " is unknown"));
      }
      out[tp->topic][tp->partition] = id;
    }
    return out;
  }

  static absl::Duration Remaining(absl::Time deadline) {
    return std::max(deadline - absl::Now(), absl::Milliseconds(1));
  }

  const TopicPattern pattern_;
  const std::shared_ptr<kafka::MetadataClient> client_;
  StreamPartitionIds ids_;
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
    if (!spec.io_config().topic_pattern().empty()) {
      SLUICE_ASSIGN_OR_RETURN(TopicPattern pattern,
                              TopicPattern::Create(spec.io_config().topic_pattern()));
      return std::unique_ptr<StreamMetadata>(
          new KafkaTopicPatternMetadata(std::move(pattern), std::move(client)));
    }
    return std::unique_ptr<StreamMetadata>(
        new KafkaStreamMetadata(spec.io_config().topic(), std::move(client)));
  };
}

}  // namespace sluice::supervisor
