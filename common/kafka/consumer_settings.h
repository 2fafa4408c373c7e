// Recommended consumer properties for sluice's assign()-based readers, per
// kind of cluster, merged *under* what the user configured (the user wins).
//
// Why these values (see KAFKA_DEV_BROKER.md):
// - both kinds: offsets live in the metadata store, so no auto commit and no
//   offset store; a position that is no longer available must surface as an
//   error (auto.offset.reset=error) instead of silently skipping or re-reading;
//   partition EOF events are not needed; librdkafka 2.0.2 needs a group.id
//   even for assign() (it is never joined), "sluice" unless the user sets one.
// - dev broker (librdkafka's mock cluster): an empty Fetch is held for the
//   whole fetch.wait.max.ms and not woken by new data, so wait only 10 ms; it
//   returns one record batch per partition per Fetch, so allow big fetches and
//   big local queues (librdkafka 2.0.2 otherwise stalls a partition whose
//   local queue exceeds queued.min.messages).
// - real Kafka: librdkafka's own fetch defaults are right (the broker answers
//   as soon as data arrives), and big per-partition queues would cost memory
//   with many partitions.
#ifndef SLUICE_COMMON_KAFKA_CONSUMER_SETTINGS_H_
#define SLUICE_COMMON_KAFKA_CONSUMER_SETTINGS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kafka/config.h"

namespace sluice {
namespace kafka {

enum class ClusterKind {
  // sluice-devbroker / librdkafka's mock cluster.
  kDevBroker,
  // A real Kafka (or compatible) cluster.
  kKafka,
};

// "dev" / "devbroker" / "mock" -> kDevBroker, "kafka" / "cluster" -> kKafka;
// INVALID_ARGUMENT otherwise.
absl::StatusOr<ClusterKind> ParseClusterKind(absl::string_view name);
absl::string_view ClusterKindName(ClusterKind kind);

// The recommended consumer properties for `kind` (no bootstrap.servers).
KafkaProperties RecommendedConsumerProperties(ClusterKind kind);

// `user` with every recommended property it does not set itself added.
KafkaProperties WithConsumerDefaults(const KafkaProperties& user, ClusterKind kind);

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_CONSUMER_SETTINGS_H_
