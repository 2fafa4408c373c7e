// Builds a final segment file: merges the spills of one (sequence, interval)
// and optionally the live in-memory index, writes the file atomically, and
// reports what the task publishes (rows, size, checksum, provenance).
//
//   BuildOptions options;
//   options.path = "/data/task/segments/<id>.seg";
//   options.schema = schema;
//   options.metadata = {datasource, interval, version, partition_num, segment_id,
//                       {topic, {{partition, start, end}, ...}}};
//   options.spill_paths = {...};
//   options.live_index = index.get();  // or nullptr
//   SLUICE_ASSIGN_OR_RETURN(SegmentInfo info, BuildSegment(options));
//
// Replicas that read the same offsets produce byte-identical files (so equal
// checksums), however they spilled.
#ifndef SLUICE_COMMON_SEGMENT_SEGMENT_BUILDER_H_
#define SLUICE_COMMON_SEGMENT_SEGMENT_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/segment/column_codec.h"
#include "common/segment/format.h"
#include "common/segment/incremental_index.h"
#include "common/segment/schema.h"
#include "common/segment/segment_writer.h"

namespace sluice {
namespace segment {

struct BuildOptions {
  std::string path;  // the segment file to create (replaced if it exists)
  Schema schema;
  // Datasource, interval, version, partition number, segment id, and the
  // provenance topic and [start, end) range of every partition of the
  // sequence (rows are counted by the build).
  SegmentMetadata metadata;
  std::vector<std::string> spill_paths;
  // Rows not persisted yet; read, not changed.
  const IncrementalIndex* live_index = nullptr;
  // LZ4, as Druid's default indexSpec: a published segment is built once per
  // sequence on the ingest path, where zstd level 1 cost about a fifth of
  // the worker's instructions per record for files 16-30% smaller; compaction
  // rewrites segments with zstd (CompactionOptions) off that path.
  Compression compression = Compression::kLz4;
  int zstd_level = 1;  // when `compression` is kZstd
  uint32_t rows_per_block = 8192;
};

struct SegmentInfo {
  std::string path;
  uint64_t num_rows = 0;
  uint64_t input_records = 0;
  uint64_t size_bytes = 0;
  uint32_t crc = 0;
  std::string checksum;  // "crc32c:1a2b3c4d"
  Provenance provenance;  // ranges sorted by partition, with rows filled in
  int64_t min_time = 0;
  int64_t max_time = 0;
};

// What a merge wrote, as a segment's summary.
SegmentInfo SegmentInfoOf(const WrittenFile& written);

// Errors: as MergeRuns (FAILED_PRECONDITION for no rows, mismatched spills,
// records outside the provenance ranges), DATA_LOSS for a damaged spill,
// INVALID_ARGUMENT for bad metadata, I/O errors from the file system.
absl::StatusOr<SegmentInfo> BuildSegment(const BuildOptions& options);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SEGMENT_BUILDER_H_
