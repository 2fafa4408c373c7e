// What a stream supervisor needs to know about its topic (or the topics
// matching its pattern): the partitions and their watermarks (earliest offset still stored, latest = next to be
// written). An interface so tests script it; the real one asks Kafka.
#ifndef SLUICE_SUPERVISOR_STREAM_METADATA_H_
#define SLUICE_SUPERVISOR_STREAM_METADATA_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kafka/property_policy.h"
#include "common/metrics/registry.h"
#include "common/stream_partitions.h"
#include "sluice/v1/spec.pb.h"

namespace sluice::supervisor {

struct PartitionWatermarks {
  int64_t earliest = 0;
  int64_t latest = 0;
};

class StreamMetadata {
 public:
  virtual ~StreamMetadata() = default;

  // Partition ids of the topic, ascending. NOT_FOUND for an unknown topic,
  // UNAVAILABLE when the cluster cannot be reached in time.
  virtual absl::StatusOr<std::vector<int32_t>> ListPartitions(absl::Duration timeout) = 0;

  virtual absl::StatusOr<std::map<int32_t, PartitionWatermarks>> QueryWatermarks(
      const std::vector<int32_t>& partitions, absl::Duration timeout) = 0;

  // Partition -> Kafka timestamp (epoch millis) of the newest record of each
  // partition given with its latest offset (MetadataClient::NewestTimestamps):
  // the time lag's reference. Partitions not read in time are absent.
  virtual absl::StatusOr<std::map<int32_t, int64_t>> QueryNewestTimestamps(
      const std::map<int32_t, int64_t>& latest_offsets, absl::Duration timeout) = 0;

  // A topic-pattern stream (ioConfig.topicPattern): the stream partition ids
  // its lists and maps use, each standing for a (topic, partition), given
  // as ListPartitions first sees them. Null for a single topic, whose ids
  // are its partition numbers. Owned by the stream.
  virtual StreamPartitionIds* stream_partition_ids() { return nullptr; }
};

// Builds the StreamMetadata of a spec (its topic and consumer properties).
using StreamMetadataFactory =
    std::function<absl::StatusOr<std::unique_ptr<StreamMetadata>>(const v1::SupervisorSpec&)>;

class SharedKafkaClients;

// The Kafka implementation (common/kafka's MetadataClient). The spec's
// properties are checked against `policy` and their secret references
// resolved before each connection. Streams with the same resolved
// properties share one client from `clients` (shared_kafka_clients.h; null:
// a set of this factory's own), so datasources on one cluster share one
// librdkafka handle. After an authentication failure (auth_failure.h) the
// references are resolved again and, when their values changed (a
// ${file:} secret fixed on disk), the next query connects with the new
// ones; each such failure counts in sluice_supervisor_kafka_auth_failures_total
// of `metrics` (when not null), labelled by datasource and mechanism.
StreamMetadataFactory KafkaStreamMetadataFactory(
    kafka::PropertyPolicyOptions policy = {},
    std::shared_ptr<SharedKafkaClients> clients = nullptr, metrics::Registry* metrics = nullptr);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STREAM_METADATA_H_
