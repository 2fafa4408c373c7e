#include "common/kafka/consumer_settings.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace kafka {

absl::StatusOr<ClusterKind> ParseClusterKind(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "dev" || lower == "devbroker" || lower == "mock") return ClusterKind::kDevBroker;
  if (lower == "kafka" || lower == "cluster") return ClusterKind::kKafka;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown Kafka cluster kind \"", name, "\" (expected \"dev\" or \"kafka\")"));
}

absl::string_view ClusterKindName(ClusterKind kind) {
  return kind == ClusterKind::kDevBroker ? "dev" : "kafka";
}

KafkaProperties RecommendedConsumerProperties(ClusterKind kind) {
  return RecommendedConsumerProperties(kind, rd_kafka_version());
}

KafkaProperties RecommendedConsumerProperties(ClusterKind kind, int library_version) {
  KafkaProperties props = {
      // librdkafka 2.0.2 refuses rd_kafka_assign() without a group.id
      // (_UNKNOWN_GROUP) although an assign()-only consumer never joins it.
      {"group.id", "sluice"},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "error"},
      {"enable.partition.eof", "false"},
      // Once the local queue reached queued.min.messages or
      // queued.max.messages.kbytes, librdkafka (2.2 and later) postpones the
      // partition's next fetch by this much, 1 s by default: a reader slower
      // than the broker, which is every task catching up, drains the queue and
      // then starves for the rest of that second (kafka_consumer_test: polls
      // waiting 997 ms). The partition fetches again only when the queue is
      // below the limits at the end of a backoff, and a Fetch adds at most
      // max.partition.fetch.bytes per partition, so the backoff caps a fast
      // reader: with 10 ms, a task reading Kafka at ~1.7M records/s (rollup
      // on) ran at 0.56x the rate of the same binary on librdkafka 2.0.2
      // (bench/e2e, same run). 2 ms re-checks often and costs a timer wake-up
      // of the broker thread every 2 ms while the queue is full.
      {"fetch.queue.backoff.ms", "2"},
  };
  // An older library refuses the property (rd_kafka_conf_set: unknown).
  if (library_version < kFetchQueueBackoffSince) props.erase("fetch.queue.backoff.ms");
  if (kind == ClusterKind::kDevBroker) {
    props["fetch.wait.max.ms"] = "10";
    // Bounded prefetch: see the header.
    props["queued.min.messages"] = "100000";
    props["queued.max.messages.kbytes"] = "65536";
    props["fetch.max.bytes"] = "104857600";
    props["max.partition.fetch.bytes"] = "10485760";
  }
  return props;
}

KafkaProperties WithConsumerDefaults(const KafkaProperties& user, ClusterKind kind) {
  KafkaProperties merged = user;
  for (const auto& [name, value] : RecommendedConsumerProperties(kind)) {
    merged.emplace(name, value);  // Keeps the user's value when present.
  }
  return merged;
}

}  // namespace kafka
}  // namespace sluice
