#include <algorithm>
#include <optional>
#include <string>

#include <glog/logging.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include "common/kafka/auth_failure.h"
#include "common/kafka/metadata_client.h"
#include "common/kafka/property_policy.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "common/topic_pattern.h"
#include "supervisor/shared_kafka_clients.h"
#include "supervisor/stream_metadata.h"

namespace sluice::supervisor {
namespace {

// One spec's Kafka connection: the shared client of its resolved
// properties. After an authentication failure the secret references are
// resolved again, and when their values changed (a ${file:} secret fixed on
// disk, a rotated ${env:} one after a restart) the next query uses the
// client of the new values. Every authentication failure is counted.
class KafkaConnection {
 public:
  KafkaConnection(kafka::KafkaProperties unresolved, kafka::KafkaProperties resolved,
                  std::shared_ptr<kafka::MetadataClient> client, kafka::PropertyPolicyOptions policy,
                  std::shared_ptr<SharedKafkaClients> clients, metrics::Registry* metrics,
                  std::string datasource)
      : unresolved_(std::move(unresolved)),
        policy_(std::move(policy)),
        clients_(std::move(clients)),
        metrics_(metrics),
        datasource_(std::move(datasource)),
        resolved_(std::move(resolved)),
        client_(std::move(client)) {}

  std::shared_ptr<kafka::MetadataClient> client() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return client_;
  }

  // `result` as it is, after noting an authentication failure.
  template <typename T>
  absl::StatusOr<T> Note(absl::StatusOr<T> result) ABSL_LOCKS_EXCLUDED(mu_) {
    if (!result.ok() && kafka::IsAuthFailure(result.status())) NoteAuthFailure();
    return result;
  }

 private:
  void NoteAuthFailure() ABSL_LOCKS_EXCLUDED(mu_) {
    // The series appears with the first failure (none for datasources that
    // never had one).
    if (metrics_ != nullptr) {
      metrics_
          ->GetCounter(metrics::kSupervisorKafkaAuthFailures,
                       {{"datasource", datasource_}, {"mechanism", kafka::AuthMechanism(unresolved_)}})
          ->Increment();
    }
    absl::StatusOr<kafka::KafkaProperties> resolved =
        kafka::ResolveSecretReferences(unresolved_, policy_);
    if (!resolved.ok()) {
      LOG_EVERY_N(WARNING, 20) << "resolving the secret references again: " << resolved.status();
      return;
    }
    absl::MutexLock lock(&mu_);
    if (*resolved == resolved_) return;
    absl::StatusOr<std::shared_ptr<kafka::MetadataClient>> client = clients_->Get(*resolved);
    if (!client.ok()) {
      LOG(WARNING) << "a Kafka client with the secrets read again: " << client.status();
      return;
    }
    LOG(INFO) << "the secret references of a Kafka connection ("
              << kafka::PropertyOr(unresolved_, "bootstrap.servers", "")
              << ") resolve to new values after an authentication failure: the next query "
                 "connects with them";
    resolved_ = *std::move(resolved);
    client_ = *std::move(client);
  }

  const kafka::KafkaProperties unresolved_;
  const kafka::PropertyPolicyOptions policy_;
  const std::shared_ptr<SharedKafkaClients> clients_;
  metrics::Registry* const metrics_;
  const std::string datasource_;
  absl::Mutex mu_;
  kafka::KafkaProperties resolved_ ABSL_GUARDED_BY(mu_);
  // Shared with the other datasources on the same cluster and properties.
  std::shared_ptr<kafka::MetadataClient> client_ ABSL_GUARDED_BY(mu_);
};

class KafkaStreamMetadata : public StreamMetadata {
 public:
  KafkaStreamMetadata(std::string topic, std::shared_ptr<KafkaConnection> connection)
      : topic_(std::move(topic)), connection_(std::move(connection)) {}

  absl::StatusOr<std::vector<int32_t>> ListPartitions(absl::Duration timeout) override {
    return connection_->Note(connection_->client()->ListPartitions(topic_, timeout));
  }

  absl::StatusOr<std::map<int32_t, PartitionWatermarks>> QueryWatermarks(
      const std::vector<int32_t>& partitions, absl::Duration timeout) override {
    SLUICE_ASSIGN_OR_RETURN(auto marks, connection_->Note(connection_->client()->QueryWatermarks(
                                            topic_, partitions, timeout)));
    std::map<int32_t, PartitionWatermarks> out;
    for (const auto& [partition, m] : marks) out[partition] = {m.earliest, m.latest};
    return out;
  }

  absl::StatusOr<std::map<int32_t, int64_t>> QueryNewestTimestamps(
      const std::map<int32_t, int64_t>& latest_offsets, absl::Duration timeout) override {
    return connection_->Note(
        connection_->client()->NewestTimestamps(topic_, latest_offsets, timeout));
  }

 private:
  const std::string topic_;
  const std::shared_ptr<KafkaConnection> connection_;
};

// ioConfig.topicPattern: every topic of the cluster whose name matches,
// each (topic, partition) under its stream partition id.
class KafkaTopicPatternMetadata : public StreamMetadata {
 public:
  KafkaTopicPatternMetadata(TopicPattern pattern, std::shared_ptr<KafkaConnection> connection)
      : pattern_(std::move(pattern)), connection_(std::move(connection)) {}

  absl::StatusOr<std::vector<int32_t>> ListPartitions(absl::Duration timeout) override {
    SLUICE_ASSIGN_OR_RETURN(auto topics,
                            connection_->Note(connection_->client()->ListTopics(timeout)));
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
      SLUICE_ASSIGN_OR_RETURN(auto marks,
                              connection_->Note(connection_->client()->QueryWatermarks(
                                  topic, kafka_partitions, Remaining(deadline))));
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
                              connection_->Note(connection_->client()->NewestTimestamps(
                                  topic, latest, Remaining(deadline))));
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
  const std::shared_ptr<KafkaConnection> connection_;
  StreamPartitionIds ids_;
};

}  // namespace

StreamMetadataFactory KafkaStreamMetadataFactory(kafka::PropertyPolicyOptions policy,
                                                std::shared_ptr<SharedKafkaClients> clients,
                                                metrics::Registry* metrics) {
  if (clients == nullptr) clients = std::make_shared<SharedKafkaClients>();
  return [policy, clients, metrics](
             const v1::SupervisorSpec& spec) -> absl::StatusOr<std::unique_ptr<StreamMetadata>> {
    const kafka::KafkaProperties unresolved(spec.io_config().consumer_properties().begin(),
                                            spec.io_config().consumer_properties().end());
    // Specs stored before a policy change are checked again before connecting.
    SLUICE_RETURN_IF_ERROR(kafka::CheckProperties(unresolved, policy));
    SLUICE_ASSIGN_OR_RETURN(kafka::KafkaProperties properties,
                            kafka::ResolveSecretReferences(unresolved, policy));
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<kafka::MetadataClient> client,
                            clients->Get(properties));
    auto connection =
        std::make_shared<KafkaConnection>(unresolved, std::move(properties), std::move(client),
                                          policy, clients, metrics, spec.datasource());
    if (!spec.io_config().topic_pattern().empty()) {
      SLUICE_ASSIGN_OR_RETURN(TopicPattern pattern,
                              TopicPattern::Create(spec.io_config().topic_pattern()));
      return std::unique_ptr<StreamMetadata>(
          new KafkaTopicPatternMetadata(std::move(pattern), std::move(connection)));
    }
    return std::unique_ptr<StreamMetadata>(
        new KafkaStreamMetadata(spec.io_config().topic(), std::move(connection)));
  };
}

}  // namespace sluice::supervisor
