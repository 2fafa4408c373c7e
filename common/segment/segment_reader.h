// Reads segment and spill files (format v1, docs/segment-format.md).
//
//   SLUICE_ASSIGN_OR_RETURN(auto reader, SegmentReader::Open(path));
//   reader->header().metadata.provenance ...
//   SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> times, reader->ReadTimes());
//   SLUICE_ASSIGN_OR_RETURN(Bitmap rows, reader->RowsWithValue("channel", "#en"));
//   RowCursor cursor(reader.get());
//   while (true) { SLUICE_ASSIGN_OR_RETURN(bool more, cursor.Next()); if (!more) break; ... }
//
// Open checks the checksum (optional) and the whole structure: every length
// and offset read from the file is checked before use, so a damaged file is
// a DATA_LOSS error naming what is wrong, never a crash or a read out of
// bounds. Verify() additionally decodes every block and checks the row order,
// the statistics and the bitmaps against the data.
//
// Not thread-safe (block decoding reuses buffers); use one reader per thread.
#ifndef SLUICE_COMMON_SEGMENT_SEGMENT_READER_H_
#define SLUICE_COMMON_SEGMENT_SEGMENT_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/column_codec.h"
#include "common/segment/exact_sum.h"
#include "common/segment/file_io.h"
#include "common/segment/format.h"

struct roaring_bitmap_s;

namespace sluice {
namespace segment {

// The rows of one block, decoded column by column.
struct DecodedBlock {
  size_t rows = 0;
  uint64_t first_row = 0;
  std::vector<int64_t> times;
  std::vector<std::vector<uint32_t>> ids;    // per dimension
  std::vector<std::vector<int64_t>> longs;   // per metric (long metrics)
  std::vector<std::vector<double>> doubles;  // per metric (double columns)
  std::vector<std::vector<ExactSum>> exact;  // per metric (spills: doubleSum with rollup)
  std::vector<int64_t> partitions, offsets;  // spills with rollup off
};

// A set of row numbers (a CRoaring bitmap). Move-only.
class Bitmap {
 public:
  Bitmap();
  explicit Bitmap(roaring_bitmap_s* bitmap);
  ~Bitmap();
  Bitmap(Bitmap&& other) noexcept;
  Bitmap& operator=(Bitmap&& other) noexcept;
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;

  uint64_t cardinality() const;
  bool Contains(uint32_t row) const;
  std::vector<uint32_t> ToVector() const;
  const roaring_bitmap_s* get() const { return bitmap_; }

 private:
  roaring_bitmap_s* bitmap_ = nullptr;
};

class SegmentReader {
 public:
  struct Options {
    // Check the CRC-32C of the whole file on open (one pass over the bytes).
    bool verify_checksum = true;
    // Decode every dimension's dictionary on open. False: dictionary(d) is
    // empty until LoadDictionary(d) (a merge of many spills holds one
    // dimension's dictionaries at a time).
    bool load_dictionaries = true;
  };

  // NOT_FOUND etc. for a file that cannot be opened, DATA_LOSS for a damaged
  // one.
  static absl::StatusOr<std::unique_ptr<SegmentReader>> Open(const std::string& path,
                                                               const Options& options);
  static absl::StatusOr<std::unique_ptr<SegmentReader>> Open(const std::string& path) {
    return Open(path, Options());
  }
  // Reads from bytes in memory (tests, tools).
  static absl::StatusOr<std::unique_ptr<SegmentReader>> FromBytes(std::string bytes,
                                                                    const Options& options);
  ~SegmentReader();
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  const FileHeader& header() const { return header_; }
  const std::vector<ColumnEntry>& columns() const { return columns_; }
  uint64_t num_rows() const { return header_.num_rows; }
  size_t num_blocks() const { return num_blocks_; }
  uint64_t file_size() const { return data_.size(); }
  // Every byte of the file as read (mapped or in memory), valid while the
  // reader lives: for a digest of exactly what was checked.
  absl::string_view bytes() const { return data_; }
  uint32_t crc() const { return crc_; }
  // "crc32c:1a2b3c4d".
  std::string checksum() const;

  size_t num_dimensions() const { return header_.dimensions.size(); }
  // Index of a dimension or metric by name; -1 if there is none.
  int DimensionIndex(absl::string_view name) const;
  int MetricIndex(absl::string_view name) const;
  // Sorted distinct non-null values of dimension `d`; id i > 0 is dict[i - 1].
  const std::vector<absl::string_view>& dictionary(size_t d) const { return dictionaries_[d]; }
  // Decodes and checks dimension d's dictionary (a no-op once loaded), and
  // frees it again.
  absl::Status LoadDictionary(size_t d);
  void ReleaseDictionary(size_t d);
  // The value of id `id` of dimension `d` (nullopt for 0, null).
  std::optional<absl::string_view> DimensionValue(size_t d, uint32_t id) const {
    if (id == 0) return std::nullopt;
    return dictionaries_[d][id - 1];
  }
  // The id of `value` in dimension `d` (nullopt: null), or -1 if absent.
  int64_t FindId(size_t d, std::optional<absl::string_view> value) const;
  // Bytes the column takes in the file (blocks, dictionary, bitmaps).
  uint64_t ColumnBytes(size_t column) const;

  // Decodes block `index` (0 <= index < num_blocks()).
  absl::Status ReadBlock(size_t index, DecodedBlock* block);
  // Gives back the mapped pages that hold block `index` of every column (a
  // reader going through the file once; the next read of them maps them
  // again from the page cache). No-op for a reader of bytes in memory.
  void ReleaseBlockPages(size_t index);

  // Whole columns.
  absl::StatusOr<std::vector<int64_t>> ReadTimes();
  absl::StatusOr<std::vector<uint32_t>> ReadDimensionIds(absl::string_view name);
  absl::StatusOr<std::vector<int64_t>> ReadLongMetric(absl::string_view name);
  // Double metrics (for doubleSum in spills with rollup, the rounded sums).
  absl::StatusOr<std::vector<double>> ReadDoubleMetric(absl::string_view name);

  // Rows whose dimension `name` equals `value` (nullopt: null), from the
  // dimension's bitmap index (segments only). An empty set for values not in
  // the dictionary; NOT_FOUND for an unknown dimension.
  absl::StatusOr<Bitmap> RowsWithValue(absl::string_view name,
                                       std::optional<absl::string_view> value);

  // Decodes everything and checks it: row order, times within the interval
  // and equal to the header's min/max, ids within dictionaries, partition
  // statistics, counts, and every bitmap against the ids. DATA_LOSS naming
  // the first problem found.
  absl::Status Verify();

 private:
  SegmentReader() = default;
  absl::Status Init(const Options& options);
  absl::Status CheckBlockRef(const BlockRef& ref, uint64_t max_raw, absl::string_view what) const;
  absl::Status LoadBitmapOffsets(size_t d);
  absl::StatusOr<Bitmap> BitmapOf(size_t d, uint32_t id);
  // The checked rows of bitmap `id` of dimension `d`, appended to `*rows`
  // (decoded without CRoaring, for Verify, which reads every bitmap once).
  absl::Status AppendBitmapRows(size_t d, uint32_t id, std::vector<uint32_t>* rows);
  absl::Status ReadColumnBlock(size_t column, size_t block, size_t rows, std::string* raw);

  MappedFile mapped_;
  std::string owned_;
  absl::string_view data_;
  FileHeader header_;
  std::vector<ColumnEntry> columns_;
  uint32_t crc_ = 0;
  uint64_t body_begin_ = 0;
  uint64_t body_end_ = 0;  // the directory's offset
  size_t num_blocks_ = 0;
  std::vector<std::string> dictionary_bytes_;
  std::vector<std::vector<absl::string_view>> dictionaries_;
  std::vector<bool> dictionary_loaded_;
  // Per dimension: start of each bitmap within the file (cardinality + 2
  // entries), once loaded.
  std::vector<std::vector<uint64_t>> bitmap_offsets_;
  BlockDecompressor decompressor_;
  std::string scratch_;
};

// Walks a file's rows in order, decoding one block at a time.
class RowCursor {
 public:
  explicit RowCursor(SegmentReader* reader) : reader_(reader) {}

  // Moves to the next row; false past the last one.
  absl::StatusOr<bool> Next();

  uint64_t row() const { return block_.first_row + index_; }
  int64_t time() const { return block_.times[index_]; }
  uint32_t id(size_t d) const { return block_.ids[d][index_]; }
  std::optional<absl::string_view> dimension(size_t d) const {
    return reader_->DimensionValue(d, id(d));
  }
  // For long metrics.
  int64_t long_metric(size_t m) const { return block_.longs[m][index_]; }
  // For double metrics (the rounded sum for exact doubleSum columns).
  double double_metric(size_t m) const;
  const DecodedBlock& block() const { return block_; }
  size_t index_in_block() const { return index_; }

 private:
  SegmentReader* reader_;
  DecodedBlock block_;
  size_t next_block_ = 0;
  size_t index_ = 0;
  bool started_ = false;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SEGMENT_READER_H_
