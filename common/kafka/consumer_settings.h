// Recommended consumer properties for sluice's assign()-based readers, per
// kind of cluster, merged *under* what the user configured (the user wins).
//
// Why these values (see KAFKA_DEV_BROKER.md):
// - both kinds: offsets live in the metadata store, so no auto commit and no
//   offset store; a position that is no longer available must surface as an
//   error (auto.offset.reset=error) instead of silently skipping or re-reading;
//   partition EOF events are not needed; librdkafka 2.0.2 needed a group.id
//   even for assign() (it is never joined), "sluice" unless the user sets one;
//   a full local queue postpones the next fetch by fetch.queue.backoff.ms, 2
//   ms instead of librdkafka's 1 s (10 ms capped fast readers; see the .cc). That property exists from librdkafka 2.2
//   on: it is recommended only when rd_kafka_version() of the library linked
//   in says it has it (sluice is built with 2.12.1; the end-to-end
//   benchmark's comparison relinks the same objects with Debian's 2.0.2,
//   which would refuse it).
// - dev broker (librdkafka's mock cluster): an empty Fetch is held for the
//   whole fetch.wait.max.ms and not woken by new data, so wait only 10 ms; it
//   returns one record batch per partition per Fetch, so allow big fetches.
//   The local queue is bounded (100,000 records / 64 MiB, librdkafka's
//   defaults): for an assign() consumer every partition's queue forwards to
//   the one consumer queue, so these limits bound the whole consumer's
//   prefetch, which is part of a worker's memory budget (maxBytesInMemory +
//   100 MB). With 1,000,000 / 1 GiB a consumer slower than the broker
//   buffered most of a 3M-record topic (worker peak RSS 386 MiB instead of
//   184 MiB, same rate). Much smaller queues stall: librdkafka 2.0.2 stops
//   fetching above the limit and resumes only on its next broker wakeup
//   (5,000 records ran at a third of the rate).
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

// The first librdkafka (rd_kafka_version() format) with fetch.queue.backoff.ms.
inline constexpr int kFetchQueueBackoffSince = 0x02020000;

// The recommended consumer properties for `kind` (no bootstrap.servers), for
// the librdkafka linked in.
KafkaProperties RecommendedConsumerProperties(ClusterKind kind);
// The same for a library of `library_version` (rd_kafka_version() format):
// properties it does not know are left out.
KafkaProperties RecommendedConsumerProperties(ClusterKind kind, int library_version);

// `user` with every recommended property it does not set itself added.
KafkaProperties WithConsumerDefaults(const KafkaProperties& user, ClusterKind kind);

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_CONSUMER_SETTINGS_H_
