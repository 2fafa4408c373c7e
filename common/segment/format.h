// Segment file format v1: the header and the column directory, shared by the
// writer and the reader. docs/segment-format.md describes the whole layout:
//
//   header | dictionaries | row blocks | bitmaps | directory | trailer
//
// Spill files (intermediate persists) use the same format with kind kSpill:
// exact doubleSum states instead of rounded doubles, (partition, offset)
// columns when rollup is off, no bitmaps, and the caller's metadata.
#ifndef SLUICE_COMMON_SEGMENT_FORMAT_H_
#define SLUICE_COMMON_SEGMENT_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/segment/column_codec.h"
#include "common/segment/format_limits.h"
#include "common/segment/schema.h"

namespace sluice {
namespace segment {

inline constexpr char kHeaderMagic[] = "SLUICESG";   // 8 bytes, no NUL
inline constexpr char kTrailerMagic[] = "SLUICEND";  // 8 bytes, no NUL
inline constexpr uint32_t kFormatVersion = 1;
// magic, version, header size.
inline constexpr size_t kPreambleSize = 16;
// directory offset (8), directory size (8), reserved (4), CRC-32C (4), magic (8).
inline constexpr size_t kTrailerSize = 32;
// The CRC covers every byte before it: [0, file size - 12).
inline constexpr size_t kCrcCoverageExclusion = 12;

// kMaxRowsPerBlock, kMaxDimensions, kMaxMetrics and the other limits of the
// format are in format_limits.h.

enum class FileKind : uint8_t { kSegment = 1, kSpill = 2 };

struct Interval {
  int64_t start_ms = 0;
  int64_t end_ms = 0;  // exclusive
};

// One Kafka partition's share of a segment: the sequence's [start, end) range
// and how many of its records landed in this segment.
struct PartitionRange {
  int32_t partition = 0;
  int64_t start_offset = 0;
  int64_t end_offset = 0;
  int64_t rows = 0;
};

struct Provenance {
  std::string topic;
  // Sorted by partition, then start offset, in files. One range per
  // partition, except in a compacted segment (compaction.h): several
  // disjoint ones, each with its rows.
  std::vector<PartitionRange> ranges;
};

// What the caller knows about a segment it builds.
struct SegmentMetadata {
  std::string datasource;
  Interval interval;
  std::string version;
  int32_t partition_num = 0;
  std::string segment_id;
  // Topic and ranges; `rows` is filled in by the merge.
  Provenance provenance;
};

// Input records of one Kafka partition in an index, spill or segment.
struct PartitionStats {
  int32_t partition = 0;
  int64_t records = 0;
  int64_t min_offset = 0;
  int64_t max_offset = 0;
};

struct FileHeader {
  FileKind kind = FileKind::kSegment;
  Compression compression = Compression::kZstd;
  uint32_t rows_per_block = 8192;
  uint64_t num_rows = 0;       // rows in the file (after rollup)
  uint64_t input_records = 0;  // input rows that built them
  int64_t min_time = 0;        // of __time; 0 when there are no rows
  int64_t max_time = 0;
  SegmentMetadata metadata;    // spills: the interval only
  Schema schema;               // as configured (dimensions empty when discovered)
  std::vector<std::string> dimensions;  // the file's dimension columns, in order
  std::vector<PartitionStats> partitions;  // sorted by partition
  std::string caller_metadata;  // spills: opaque bytes of the caller
};

enum class ColumnRole : uint8_t {
  kTime = 1,
  kDimension = 2,
  kMetric = 3,
  kPartition = 4,  // spills with rollup off: Kafka partition of each row
  kOffset = 5,     // spills with rollup off: Kafka offset of each row
};

enum class ValueType : uint8_t {
  kLong = 1,
  kDouble = 2,
  kString = 3,    // dictionary ids (0 = null, i = dictionary[i - 1])
  kExactSum = 4,  // spills only: ExactSum encodings
};

struct BlockRef {
  uint64_t offset = 0;
  uint64_t stored_size = 0;  // bytes in the file
  uint64_t raw_size = 0;     // bytes after decompression
};

struct ColumnEntry {
  ColumnRole role = ColumnRole::kTime;
  std::string name;
  ValueType type = ValueType::kLong;
  uint8_t encoding = 0;  // LongEncoding for kLong; 0 otherwise
  // Dimensions: the sorted dictionary (one compressed blob) and its size.
  BlockRef dictionary;
  uint64_t cardinality = 0;  // non-null values
  // Dimensions of segments: one Roaring bitmap per id (null first).
  uint64_t bitmaps_offset = 0;
  uint64_t bitmaps_size = 0;
  std::vector<BlockRef> blocks;
};

// The column type of a metric: long metrics are kLong; doubleSum is kExactSum
// in spills with rollup on (rows merge later) and kDouble otherwise; the
// other double metrics are kDouble.
ValueType MetricValueType(FileKind kind, bool rollup, MetricType type);

// The header bytes from the magic on (preamble included).
std::string EncodeHeader(const FileHeader& header);
// Parses the fields after the preamble; DATA_LOSS naming what is wrong.
absl::Status DecodeHeaderFields(absl::string_view fields, FileHeader* header);

std::string EncodeDirectory(const std::vector<ColumnEntry>& columns);
absl::Status DecodeDirectory(absl::string_view bytes, std::vector<ColumnEntry>* columns);

std::string EncodeTrailer(uint64_t directory_offset, uint64_t directory_size, uint32_t crc);

const char* FileKindName(FileKind kind);
const char* ColumnRoleName(ColumnRole role);
const char* ValueTypeName(ValueType type);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_FORMAT_H_
