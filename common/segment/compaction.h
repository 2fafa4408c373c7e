// Compaction of segments: the segment files of one datasource and interval
// (same schema, disjoint Kafka provenance) merged into one segment holding
// exactly their rows, rolled up across inputs when the schema rolls up.
//
//   CompactionOptions options;
//   options.input_paths = {"/tmp/a.seg", "/tmp/b.seg"};
//   options.path = "/tmp/compacted.seg";
//   options.version = "2026-12-05T00:00:00.000Z";
//   options.partition_num = 0;
//   options.segment_id = "...";
//   SLUICE_ASSIGN_OR_RETURN(SegmentInfo info, CompactSegments(options));
//
// The output's provenance is the union of the inputs' ranges, each range kept
// with its rows: a partition may have several disjoint ranges (one per
// sequence compacted), sorted by start offset. The output depends only on the
// set of inputs, never on their order. A library used by tests now; nothing
// schedules compaction yet.
#ifndef SLUICE_COMMON_SEGMENT_COMPACTION_H_
#define SLUICE_COMMON_SEGMENT_COMPACTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/segment/column_codec.h"
#include "common/segment/segment_builder.h"

namespace sluice {
namespace segment {

struct CompactionOptions {
  std::vector<std::string> input_paths;  // local segment files
  std::string path;                      // the compacted segment (replaced if it exists)
  std::string version;
  int32_t partition_num = 0;
  std::string segment_id;
  Compression compression = Compression::kZstd;
  int zstd_level = 1;
  uint32_t rows_per_block = 8192;
};

// FAILED_PRECONDITION naming the segments when the inputs are not all
// segments of one datasource, interval, topic and schema, or when two of them
// have overlapping provenance ranges of a partition (the same records twice);
// INVALID_ARGUMENT for no inputs or a missing id or version; DATA_LOSS for a
// damaged input; I/O errors from the file system.
//
// A doubleSum of rows combined across inputs is the sum of the inputs'
// stored (rounded) values, which may differ in the last bits from the sum a
// single build over all the records would store; every other metric is exact.
absl::StatusOr<SegmentInfo> CompactSegments(const CompactionOptions& options);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_COMPACTION_H_
