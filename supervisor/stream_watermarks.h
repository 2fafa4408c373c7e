// The watermarks a stream supervisor last got from Kafka, with their time,
// each partition's production rate (records per second its latest offset
// grew between the last two answers; absent until two), and the newest
// record timestamps of partitions with records left to commit (time lag).
// Pure; used on the stream supervisor's loop (stream_tracker.h).
#ifndef SLUICE_SUPERVISOR_STREAM_WATERMARKS_H_
#define SLUICE_SUPERVISOR_STREAM_WATERMARKS_H_

#include <cstdint>
#include <map>
#include <utility>

#include "absl/time/time.h"
#include "supervisor/stream_metadata.h"

namespace sluice::supervisor {

class StreamWatermarks {
 public:
  // A watermark query's answer, taken at `now`.
  void Note(const std::map<int32_t, PartitionWatermarks>& marks, absl::Time now);
  void SetNewestTimestamps(std::map<int32_t, int64_t> newest) {
    newest_timestamps_ = std::move(newest);
  }

  const std::map<int32_t, PartitionWatermarks>& watermarks() const { return watermarks_; }
  // InfinitePast until the first answer.
  absl::Time at() const { return at_; }
  const std::map<int32_t, double>& produce_rates() const { return produce_rates_; }
  const std::map<int32_t, int64_t>& newest_timestamps() const { return newest_timestamps_; }

 private:
  std::map<int32_t, PartitionWatermarks> watermarks_;
  absl::Time at_ = absl::InfinitePast();
  // How far a pauseless end may lie past the records known.
  std::map<int32_t, double> produce_rates_;
  std::map<int32_t, int64_t> newest_timestamps_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STREAM_WATERMARKS_H_
