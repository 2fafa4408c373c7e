// Writes one segment or spill file from rows handed over in sorted order.
//
// Used by the merge (merger.h); callers normally go through PersistIndex
// (spill.h) or BuildSegment (segment_builder.h). The file appears under its
// final name only when Finish() succeeds (temporary file, fsync, rename).
#ifndef SLUICE_COMMON_SEGMENT_SEGMENT_WRITER_H_
#define SLUICE_COMMON_SEGMENT_SEGMENT_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/exact_sum.h"
#include "common/segment/format.h"

namespace sluice {
namespace segment {

// One metric value of a row: an int64 (long metrics) or the bits of a double;
// for doubleSum, `exact` (when set) holds the exact sum of several inputs.
struct MetricCell {
  uint64_t bits = 0;
  const ExactSum* exact = nullptr;
};

// The double a single doubleSum input turns into: itself, except that every
// NaN becomes the canonical quiet NaN (as ExactSum::Round gives).
double CanonicalSum(const MetricCell& cell);

struct WrittenFile {
  std::string path;
  uint64_t num_rows = 0;
  uint64_t size_bytes = 0;
  uint32_t crc = 0;
  FileHeader header;  // as written (row count and time range filled in)
};

// A segment's bitmaps are built from every row's ids, kept in memory as the
// rows come (1, 2 or 4 bytes per dimension and row, by cardinality) while
// they take at most this many bytes together; past it each dimension's ids
// are read back from the blocks written, one dimension at a time. The bytes
// written are the same either way.
inline constexpr uint64_t kMaxIdBytesInMemory = 16 << 20;
// Tests: another bound (0: always read back), for every writer after.
void SetMaxIdBytesInMemoryForTesting(uint64_t bytes);

// Not thread-safe; neither copyable nor movable.
class SegmentWriter {
 public:
  // `header` describes the file; num_rows, min_time and max_time are filled
  // in by Finish. `dictionaries[d]` holds the sorted, distinct non-null values
  // of dimension d (header.dimensions[d]); Create writes them and keeps only
  // their sizes. `zstd_level` applies to Compression::kZstd.
  static absl::StatusOr<std::unique_ptr<SegmentWriter>> Create(
      const std::string& path, FileHeader header,
      const std::vector<std::vector<absl::string_view>>& dictionaries, int zstd_level = 3);
  ~SegmentWriter();
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // Appends a row: `ids[d]` in 0..cardinality of dimension d (0 = null),
  // `cells[m]` per metric; partition and offset are kept by spills with
  // rollup off. Rows must come in (time, ids) order (and, with rollup on,
  // with distinct keys): INTERNAL otherwise.
  absl::Status AddRow(int64_t time, const uint32_t* ids, const MetricCell* cells,
                      int32_t partition, int64_t offset);

  uint64_t rows() const { return rows_; }

  // Writes the rest and moves the file into place.
  absl::StatusOr<WrittenFile> Finish();

 private:
  struct State;
  explicit SegmentWriter(std::unique_ptr<State> state);
  absl::Status FlushBlock();

  std::unique_ptr<State> state_;
  uint64_t rows_ = 0;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SEGMENT_WRITER_H_
