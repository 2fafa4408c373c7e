// Intermediate persists ("spills"): an in-memory index written as an
// immutable sorted run, so the task can free memory and, after a restart,
// restore from the spill directory alone.
//
//   SpillOptions options{.directory = dir, .name = "s0003", .caller_metadata = offsets_json};
//   SLUICE_ASSIGN_OR_RETURN(SpillDescriptor spill, PersistIndex(index, options));
//   ... after a restart:
//   SLUICE_ASSIGN_OR_RETURN(std::vector<SpillDescriptor> spills, ListSpills(dir));
//
// A spill file is self-describing (schema, interval, per-partition record
// counts and offset ranges, the caller's metadata), checksummed, and written
// atomically (temporary file, fsync, rename, fsync of the directory): after a
// crash a spill either exists whole or not at all.
#ifndef SLUICE_COMMON_SEGMENT_SPILL_H_
#define SLUICE_COMMON_SEGMENT_SPILL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/segment/column_codec.h"
#include "common/segment/format.h"
#include "common/segment/incremental_index.h"

namespace sluice {
namespace segment {

inline constexpr char kSpillSuffix[] = ".spill";

struct SpillOptions {
  // Where spill files go (must exist).
  std::string directory;
  // File name without the suffix: 1-200 characters of [A-Za-z0-9._-]; the
  // file is <directory>/<name>.spill and must not exist yet. ListSpills
  // returns spills in name order, so zero-padded sequence numbers work well.
  std::string name;
  // Opaque bytes kept in the spill (e.g. the offsets it covers, the sequence
  // and interval it belongs to); returned by ListSpills.
  std::string caller_metadata;
  Compression compression = Compression::kLz4;
  int zstd_level = 1;
  uint32_t rows_per_block = 8192;
};

struct SpillDescriptor {
  std::string path;
  std::string name;
  uint64_t rows = 0;           // after rollup
  uint64_t input_records = 0;  // records added to the index
  uint64_t size_bytes = 0;
  uint32_t crc = 0;
  Interval interval;
  std::vector<PartitionStats> partitions;  // records and offset range per partition
  std::string caller_metadata;
};

// Writes `index` as a spill and clears it. On error nothing is written and
// the index keeps its rows. FAILED_PRECONDITION for an empty index,
// ALREADY_EXISTS if the spill exists, INVALID_ARGUMENT for a bad name.
absl::StatusOr<SpillDescriptor> PersistIndex(IncrementalIndex* index, const SpillOptions& options);

// Reads a spill's header (checksum and structure verified).
absl::StatusOr<SpillDescriptor> ReadSpill(const std::string& path);

// Every spill in `directory`, in name order, each checked. Temporary files
// left by an interrupted persist are removed. DATA_LOSS if a spill is
// damaged (the caller then re-reads its records from Kafka).
absl::StatusOr<std::vector<SpillDescriptor>> ListSpills(const std::string& directory);

// The dimension columns of a spill, in order (for a datasource that
// discovers its dimensions: every name its rows discovered), from the header
// alone: no checksum pass and no dictionary (building the segment checks the
// whole file). DATA_LOSS for a damaged header, FAILED_PRECONDITION for a
// segment file.
absl::StatusOr<std::vector<std::string>> ReadSpillDimensions(const std::string& path);

// Deletes a spill (after its segment is published).
absl::Status RemoveSpill(const std::string& path);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SPILL_H_
