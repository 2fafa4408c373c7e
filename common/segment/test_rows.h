// Test helpers: seeded random rows (unicode, empty strings, missing values,
// extreme numbers) and a straightforward reference rollup to compare segment
// contents against.
#ifndef SLUICE_COMMON_SEGMENT_TEST_ROWS_H_
#define SLUICE_COMMON_SEGMENT_TEST_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/segment/format.h"
#include "common/segment/input_row.h"
#include "common/segment/schema.h"
#include "common/segment/segment_builder.h"
#include "absl/status/statusor.h"
#include "common/segment/segment_reader.h"

namespace sluice {
namespace segment {
namespace testing {

struct OwnedRow {
  int64_t time = 0;
  // Listed: one per schema dimension; discovered: (name, value) pairs.
  std::vector<std::optional<std::string>> dims;
  std::vector<std::pair<std::string, std::string>> discovered;
  std::vector<MetricInput> metrics;
  int32_t partition = 0;
  int64_t offset = 0;
};

// The schema the helpers use: dimensions channel, page, user, flags (or
// discovered), every metric type; query granularity MINUTE.
Schema TestSchema(bool rollup, bool discover);
// [2026-11-30T02:00Z, 03:00Z).
Interval TestInterval();

// `n` rows over `partitions` partitions, offsets counting up per partition
// from 100. Every Kafka order of them is valid input.
std::vector<OwnedRow> RandomRows(uint64_t seed, size_t n, const Schema& schema, int partitions);

// Views into `row` (which must outlive the InputRow's use).
InputRow ToInputRow(const OwnedRow& row, const Schema& schema);

// One output row, with dimension values by name (null omitted) and metric
// values as bit patterns (doubles by their bits).
struct OutputRow {
  int64_t time = 0;
  std::vector<std::pair<std::string, std::string>> dims;  // sorted by name, non-null only
  std::vector<uint64_t> metrics;
  bool operator==(const OutputRow& o) const {
    return time == o.time && dims == o.dims && metrics == o.metrics;
  }
};
std::string ToString(const OutputRow& row);

// What a segment built from `rows` must hold, computed naively: group by
// (truncated time, values) with rollup, sort, aggregate.
std::vector<OutputRow> ReferenceRows(const std::vector<OwnedRow>& rows, const Schema& schema);

// Every row of a segment file, in file order.
std::vector<OutputRow> ReadRows(SegmentReader* reader);

// A segment of `rows` (in TestInterval()) built to `path`, with the given
// id, version, partition number and provenance ranges (topic "edits").
struct TestSegment {
  std::string path;
  std::string segment_id;
  std::string version = "v1";
  int32_t partition_num = 0;
  std::string datasource = "wiki";
  std::vector<PartitionRange> ranges;
};
absl::StatusOr<SegmentInfo> BuildTestSegment(const std::vector<OwnedRow>& rows,
                                             const Schema& schema, const TestSegment& segment);

// Records of `rows` in an order Kafka could deliver them: per partition in
// offset order, partitions interleaved at random.
std::vector<OwnedRow> Interleave(const std::vector<OwnedRow>& rows, uint64_t seed);

}  // namespace testing
}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_TEST_ROWS_H_
