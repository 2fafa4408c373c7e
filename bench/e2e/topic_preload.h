// Fills a topic of the dev broker with wiki-edit-like records before the
// benchmark reads it, produced with big batches: the dev broker answers a
// Fetch with one record batch per partition, so batch size decides how fast
// every consumer can read (KAFKA_DEV_BROKER.md).
#ifndef SLUICE_BENCH_E2E_TOPIC_PRELOAD_H_
#define SLUICE_BENCH_E2E_TOPIC_PRELOAD_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/produce/wiki_rows.h"

namespace sluice {
namespace bench {

struct PreloadOptions {
  std::string bootstrap;
  std::string topic;
  // Record i goes to partition i % partitions.
  int partitions = 4;
  int64_t records = 0;
  WikiRowOptions rows;
  // > 0: produce at about this rate (a live stream) instead of as fast as
  // possible (a backlog).
  double records_per_second = 0;
};

struct PreloadResult {
  int64_t records = 0;
  int64_t malformed = 0;
  int64_t bytes = 0;
  absl::Duration elapsed;
  // Partition -> one past the last offset written (the high watermark when
  // the topic was empty before).
  std::map<int32_t, int64_t> end_offsets;
};

// Produces and waits until every record is acknowledged. Any delivery
// failure fails the preload (a benchmark over a partial topic would lie).
absl::StatusOr<PreloadResult> PreloadTopic(const PreloadOptions& options);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_TOPIC_PRELOAD_H_
