// Produces a stream of Wikipedia-edit-like JSON records (tools/produce/wiki_rows.h,
// seeded) to a Kafka topic, for the demo, the fault suite and benchmarks, and
// reports exactly how many records went to each partition, so that the
// exactly-once audit can be checked against what was really produced.
//
//   ProduceOptions options;
//   options.properties = {{"bootstrap.servers", bootstrap}};
//   options.topic = "wiki";
//   options.records = 300000;
//   options.rows.malformed_fraction = 0.0005;
//   options.rate = 20000;                          // records/s (0: as fast as possible)
//   SLUICE_ASSIGN_OR_RETURN(ProduceResult result, ProduceWikiRecords(options));
//   result.records, result.partitions[p].records, result.partitions[p].end_offset ...
//
// Records go to the topic's partitions in turn (record i to the i-th
// partition modulo their number), so the same options give the same records
// in the same partitions. The producer is idempotent (no duplicates from
// retries, order kept per partition) and batches (linger, large batches: the
// dev broker returns one batch per partition per fetch, so batch size is
// what consumers' speed depends on).
#ifndef SLUICE_TOOLS_PRODUCE_WIKI_PRODUCER_H_
#define SLUICE_TOOLS_PRODUCE_WIKI_PRODUCER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/produce/wiki_rows.h"
#include "common/kafka/config.h"

namespace sluice {
namespace produce {

// Progress of a running ProduceWikiRecords, given to the callback.
struct ProduceProgress {
  int64_t produced = 0;   // handed to the producer
  int64_t delivered = 0;  // acknowledged by the broker
  int64_t malformed = 0;  // of those produced
  absl::Duration elapsed;
};

struct ProduceOptions {
  // Producer properties: "bootstrap.servers" is required; the batching and
  // idempotence defaults (DefaultProducerProperties) go under them.
  kafka::KafkaProperties properties;
  std::string topic;
  // Records to produce; 0: no limit (then `duration` is required).
  int64_t records = 0;
  // Records per second at most; 0: as fast as the producer takes them.
  double rate = 0;
  // Stop after this long; zero: no time limit.
  absl::Duration duration = absl::ZeroDuration();
  // The generator: seed, first timestamp, time step, malformed fraction.
  bench::WikiRowOptions rows;
  // Called about every progress_interval while producing (on the calling
  // thread), and once at the end.
  std::function<void(const ProduceProgress&)> on_progress;
  absl::Duration progress_interval = absl::Seconds(1);
  // Checked between records; returning true stops producing early (what was
  // produced is still flushed and reported).
  std::function<bool()> should_stop;
  // How long the final flush may take.
  absl::Duration flush_timeout = absl::Seconds(60);
  // Timeout of the metadata requests (partitions, watermarks).
  absl::Duration metadata_timeout = absl::Seconds(15);
};

// What went to one partition.
struct PartitionCount {
  int64_t records = 0;
  int64_t malformed = 0;
  // The partition's end (latest offset) before producing, and one past the
  // highest offset a record of this run was delivered at. With no other
  // producer, end_offset - start_offset == records.
  int64_t start_offset = 0;
  int64_t end_offset = 0;
};

struct ProduceResult {
  std::string topic;
  int64_t records = 0;
  int64_t malformed = 0;
  std::map<int32_t, PartitionCount> partitions;
  absl::Duration elapsed;

  // One line per partition and a total, e.g.
  //   partition 0: 75000 records (9 malformed), offsets [0, 75000)
  //   total: 300000 records (37 malformed) to wiki in 4.1s (73000 records/s)
  std::string ToString() const;
  // {"topic":"wiki","records":N,"malformed":M,"elapsed_ms":T,
  //  "partitions":{"0":{"records":..,"malformed":..,"start_offset":..,"end_offset":..},...}}
  std::string ToJson() const;
};

// Batching and delivery defaults: linger.ms=20, batch.size=1000000,
// batch.num.messages=20000, enable.idempotence=true, acks=all,
// queue.buffering.max.messages=500000.
kafka::KafkaProperties DefaultProducerProperties();

// "name=value,name=value" (e.g. "linger.ms=5,compression.type=lz4") as
// properties. INVALID_ARGUMENT naming a pair without "=" or an empty name.
absl::StatusOr<kafka::KafkaProperties> ParseProperties(absl::string_view text);

// Produces as configured, then flushes. INVALID_ARGUMENT for bad options;
// NOT_FOUND for an unknown topic; UNAVAILABLE when Kafka cannot be reached or
// the flush times out; a delivery failure as the producer reports it. Counts
// are exact: every record counted was acknowledged.
absl::StatusOr<ProduceResult> ProduceWikiRecords(const ProduceOptions& options);

}  // namespace produce
}  // namespace sluice

#endif  // SLUICE_TOOLS_PRODUCE_WIKI_PRODUCER_H_
