// Test helper: reads a fixed range of offsets of some partitions with an
// assign()-based consumer (no group), so tests can check exactly what a topic
// holds: nothing lost, nothing duplicated, nothing reordered.
//
//   ASSERT_OK_AND_ASSIGN(auto records, kafka::ReadRecords(
//       {{"bootstrap.servers", bootstrap}}, "wiki", {{0, {0, 500}}}, absl::Seconds(30)));
#ifndef SLUICE_COMMON_KAFKA_TEST_CONSUMER_H_
#define SLUICE_COMMON_KAFKA_TEST_CONSUMER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/kafka/config.h"

namespace sluice {
namespace kafka {

struct ConsumedRecord {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
};

// [start, end) offsets of one partition.
struct OffsetRange {
  int64_t start = 0;
  int64_t end = 0;
};

// Reads every record of `ranges` (partition -> [start, end)) of `topic`, in
// offset order per partition. `properties` need bootstrap.servers; the dev
// broker consumer defaults are added under them. UNAVAILABLE (with how far
// each partition got) if the records do not all arrive within `timeout`;
// a consumer error (e.g. OUT_OF_RANGE for offsets no longer stored) as itself.
absl::StatusOr<std::map<int32_t, std::vector<ConsumedRecord>>> ReadRecords(
    const KafkaProperties& properties, absl::string_view topic,
    const std::map<int32_t, OffsetRange>& ranges, absl::Duration timeout);

}  // namespace kafka
}  // namespace sluice

#endif  // SLUICE_COMMON_KAFKA_TEST_CONSUMER_H_
