#include "common/segment/segment_writer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/segment/byte_buffer.h"
#include "common/segment/byte_io.h"
#include "common/segment/column_codec.h"
#include "common/segment/crc32c.h"
#include "common/segment/file_io.h"
#include "common/segment/roaring_writer.h"

namespace sluice {
namespace segment {

double CanonicalSum(const MetricCell& cell) {
  if (cell.exact != nullptr) return cell.exact->Round();
  double v;
  std::memcpy(&v, &cell.bits, sizeof(v));
  return std::isnan(v) ? std::numeric_limits<double>::quiet_NaN() : v;
}

namespace {

size_t VarintLength(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Every row's id of one dimension, in the narrowest width its dictionary
// allows, to build its bitmap index at the end: kept as the rows come while
// the ids of every dimension fit in kMaxIdBytesInMemory, else read back from
// the file one dimension at a time.
class IdColumn {
 public:
  static int Width(uint64_t cardinality) {
    return cardinality <= 0xff ? 1 : cardinality <= 0xffff ? 2 : 4;
  }
  IdColumn(uint64_t cardinality, uint64_t rows) : width_(Width(cardinality)) {
    switch (width_) {
      case 1: narrow_.reserve(rows); break;
      case 2: medium_.reserve(rows); break;
      default: wide_.reserve(rows); break;
    }
  }

  void Append(const uint32_t* ids, size_t n) {
    switch (width_) {
      case 1: narrow_.insert(narrow_.end(), ids, ids + n); break;
      case 2: medium_.insert(medium_.end(), ids, ids + n); break;
      default: wide_.insert(wide_.end(), ids, ids + n); break;
    }
  }

  void Swap(IdColumn* other) {
    std::swap(width_, other->width_);
    narrow_.swap(other->narrow_);
    medium_.swap(other->medium_);
    wide_.swap(other->wide_);
  }

  // The bitmap section in two parts: `sizes` ([count][size of each bitmap]...)
  // and `bodies` (the bitmaps of ids 0..cardinality: for each id, the rows
  // that have it, by a counting sort on the ids).
  void Bitmaps(uint64_t cardinality, ByteBuffer* sizes, ByteBuffer* bodies) const {
    switch (width_) {
      case 1: return Build(narrow_, cardinality, sizes, bodies);
      case 2: return Build(medium_, cardinality, sizes, bodies);
      default: return Build(wide_, cardinality, sizes, bodies);
    }
  }

 private:
  template <typename T>
  static void Build(const std::vector<T>& ids, uint64_t cardinality, ByteBuffer* sizes,
                    ByteBuffer* bodies) {
    std::vector<uint32_t> start(cardinality + 2, 0);
    for (T id : ids) ++start[id + 1];
    for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    std::vector<uint32_t> rows(ids.size());
    std::vector<uint32_t> next(start.begin(), start.end() - 1);
    for (size_t row = 0; row < ids.size(); ++row) rows[next[ids[row]]++] = static_cast<uint32_t>(row);
    sizes->clear();
    bodies->clear();
    bodies->Reserve(2 * ids.size() + 8 * (cardinality + 1));
    // Every size is a varint of at most 10 bytes: room for them all at once.
    char* const sizes_begin = sizes->Extend(10 * (cardinality + 2));
    char* p = EncodeVarint64(sizes_begin, cardinality + 1);
    for (uint64_t id = 0; id <= cardinality; ++id) {
      const size_t before = bodies->size();
      AppendPortableRoaring(rows.data() + start[id], start[id + 1] - start[id], bodies);
      p = EncodeVarint64(p, bodies->size() - before);
    }
    sizes->Truncate(static_cast<size_t>(p - sizes_begin));
  }


 private:
  int width_;
  std::vector<uint8_t> narrow_;
  std::vector<uint16_t> medium_;
  std::vector<uint32_t> wide_;
};

// The ids every dimension's bitmaps are built from are kept in memory up to
// this many bytes together (8 a row for the benchmark's six wiki dimensions:
// 2M rows); past it they are read back from the blocks written.
std::atomic<uint64_t> max_id_bytes_in_memory{kMaxIdBytesInMemory};

}  // namespace

struct SegmentWriter::State {
  FileHeader header;
  std::vector<uint64_t> cardinalities;  // of the dictionaries, written by Create
  // Each dimension's ids of the rows flushed so far, for its bitmaps, while
  // they fit in kMaxIdBytesInMemory (then emptied: Finish reads them back).
  std::vector<IdColumn> id_columns;
  uint64_t id_bytes_per_row = 0;
  bool ids_in_memory = false;
  std::unique_ptr<AtomicFile> file;
  BlockCompressor compressor{Compression::kNone, 0};
  size_t header_size = 0;
  uint32_t body_crc = 0;  // CRC of every byte after the header
  std::vector<ColumnEntry> columns;
  std::vector<ValueType> metric_types;
  bool keep_provenance = false;  // spills with rollup off
  bool bitmaps = false;

  // The current block, column by column: `in_block` rows so far, each
  // column sized for a whole block (rows_per_block values) and written by
  // index, so that a row costs no capacity check per value.
  size_t rows_per_block = 0;
  size_t in_block = 0;
  std::vector<int64_t> times;
  std::vector<uint32_t> ids;  // dimension d's at [d * rows_per_block, ...)
  std::vector<std::vector<int64_t>> longs;  // by metric; empty if not a long column
  std::vector<std::vector<double>> doubles;  // by metric; empty if not a double column
  std::vector<std::string> exact;  // encoded ExactSums
  std::vector<int64_t> partitions, offsets;  // with keep_provenance only
  // What AddRow does with each metric's cell, and where it goes (the
  // columns above do not move once sized).
  enum class Store : uint8_t { kLong, kDoubleBits, kCanonicalSum, kExactSum, kNothing };
  struct MetricSlot {
    Store store;
    int64_t* longs;
    double* doubles;
    std::string* exact;
  };
  std::vector<MetricSlot> metric_slots;

  int64_t min_time = 0, max_time = 0;
  // The key of the last row of the previous block (the order check's, at a
  // block's first row).
  std::vector<uint32_t> previous_key;
  int64_t previous_time = 0;

  ByteBuffer raw, stored;  // scratch

  absl::Status Write(absl::string_view bytes) {
    body_crc = Crc32cExtend(body_crc, bytes.data(), bytes.size());
    return file->Append(bytes);
  }

  // Compresses `raw` and appends it; returns where it went.
  absl::StatusOr<BlockRef> WriteBlock() {
    if (absl::Status s = compressor.Compress(raw.view(), &stored); !s.ok()) return s;
    // The reader refuses an expansion beyond the codec's format bound; a
    // codec never produces one, and this makes sure of it.
    if (raw.size() > MaxDecompressedSize(header.compression, stored.size())) {
      return absl::InternalError(absl::StrCat("a block of ", raw.size(), " bytes compressed to ",
                                              stored.size(), ", beyond the format's bound"));
    }
    BlockRef ref;
    ref.offset = file->size();
    ref.stored_size = stored.size();
    ref.raw_size = raw.size();
    if (absl::Status s = Write(stored.view()); !s.ok()) return s;
    return ref;
  }
};

SegmentWriter::SegmentWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
SegmentWriter::~SegmentWriter() = default;

absl::StatusOr<std::unique_ptr<SegmentWriter>> SegmentWriter::Create(
    const std::string& path, FileHeader header,
    const std::vector<std::vector<absl::string_view>>& dictionaries, int zstd_level) {
  if (dictionaries.size() != header.dimensions.size()) {
    return absl::InvalidArgumentError("one dictionary per dimension is needed");
  }
  if (header.rows_per_block == 0 || header.rows_per_block > kMaxRowsPerBlock) {
    return absl::InvalidArgumentError("rows_per_block out of range");
  }
  if (header.metadata.interval.start_ms >= header.metadata.interval.end_ms) {
    return absl::InvalidArgumentError("empty interval");
  }
  // The format's limits (format_limits.h), which the reader checks: refuse
  // here rather than write a file nobody can read.
  if (header.dimensions.size() > kMaxDimensions) {
    return absl::InvalidArgumentError(absl::StrCat(header.dimensions.size(),
                                                   " dimensions, beyond the format's limit of ",
                                                   kMaxDimensions));
  }
  if (header.schema.metrics.size() > kMaxMetrics) {
    return absl::InvalidArgumentError(absl::StrCat(header.schema.metrics.size(),
                                                   " metrics, beyond the format's limit of ",
                                                   kMaxMetrics));
  }
  std::vector<uint64_t> dictionary_sizes(dictionaries.size());
  for (size_t d = 0; d < dictionaries.size(); ++d) {
    uint64_t& dictionary_bytes = dictionary_sizes[d];
    dictionary_bytes = VarintLength(dictionaries[d].size());
    for (absl::string_view v : dictionaries[d]) {
      if (v.size() > kMaxValueBytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "a value of dimension \"", header.dimensions[d], "\" is ", v.size(),
            " bytes, beyond the format's limit of ", kMaxValueBytes));
      }
      dictionary_bytes += VarintLength(v.size()) + v.size();
    }
    if (dictionary_bytes > kMaxDictionaryBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the dictionary of dimension \"", header.dimensions[d], "\" takes ", dictionary_bytes,
          " bytes, beyond the format's limit of ", kMaxDictionaryBytes));
    }
    for (size_t i = 1; i < dictionaries[d].size(); ++i) {
      if (!(dictionaries[d][i - 1] < dictionaries[d][i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dictionary of dimension \"", header.dimensions[d], "\" is not sorted and distinct"));
      }
    }
  }
  auto state = std::make_unique<State>();
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  state->file = std::move(*file);
  state->compressor = BlockCompressor(header.compression, zstd_level);
  state->keep_provenance = header.kind == FileKind::kSpill && !header.schema.rollup;
  state->bitmaps = header.kind == FileKind::kSegment;
  for (const auto& dict : dictionaries) state->cardinalities.push_back(dict.size());
  if (state->bitmaps) {
    state->ids_in_memory = true;
    for (uint64_t cardinality : state->cardinalities) {
      state->id_columns.emplace_back(cardinality, 0);
      state->id_bytes_per_row += IdColumn::Width(cardinality);
    }
  }
  state->header = std::move(header);
  const FileHeader& h = state->header;

  // Header first (rewritten with the row count by Finish; same size).
  const std::string header_bytes = EncodeHeader(h);
  state->header_size = header_bytes.size();
  if (absl::Status s = state->file->Append(header_bytes); !s.ok()) return s;

  // Columns: __time, dimensions, metrics, then partition/offset.
  ColumnEntry time;
  time.role = ColumnRole::kTime;
  time.name = kTimeColumn;
  time.type = ValueType::kLong;
  time.encoding = static_cast<uint8_t>(LongEncoding::kDeltaVarint);
  state->columns.push_back(time);
  for (size_t d = 0; d < h.dimensions.size(); ++d) {
    ColumnEntry c;
    c.role = ColumnRole::kDimension;
    c.name = h.dimensions[d];
    c.type = ValueType::kString;
    // The sorted dictionary: count, then each value with its length.
    const std::vector<absl::string_view>& dict = dictionaries[d];
    state->raw.clear();
    char* const begin = state->raw.Extend(dictionary_sizes[d]);  // the exact size
    char* p = EncodeVarint64(begin, dict.size());
    for (absl::string_view v : dict) {
      p = EncodeVarint64(p, v.size());
      if (!v.empty()) std::memcpy(p, v.data(), v.size());
      p += v.size();
    }
    absl::StatusOr<BlockRef> ref = state->WriteBlock();
    if (!ref.ok()) return ref.status();
    c.dictionary = *ref;
    c.cardinality = dict.size();
    state->columns.push_back(c);
  }
  // The dictionaries can be far larger than a block: their scratch goes.
  state->raw.Release();
  state->stored.Release();
  for (const MetricSpec& m : h.schema.metrics) {
    ColumnEntry c;
    c.role = ColumnRole::kMetric;
    c.name = m.name;
    c.type = MetricValueType(h.kind, h.schema.rollup, m.type);
    c.encoding = c.type == ValueType::kLong ? static_cast<uint8_t>(LongEncoding::kVarint) : 0;
    state->metric_types.push_back(c.type);
    state->columns.push_back(c);
  }
  if (state->keep_provenance) {
    ColumnEntry p;
    p.role = ColumnRole::kPartition;
    p.name = "__partition";
    p.type = ValueType::kLong;
    p.encoding = static_cast<uint8_t>(LongEncoding::kVarint);
    state->columns.push_back(p);
    p.role = ColumnRole::kOffset;
    p.name = "__offset";
    state->columns.push_back(p);
  }
  const size_t rows_per_block = h.rows_per_block;
  state->rows_per_block = rows_per_block;
  state->times.resize(rows_per_block);
  state->ids.resize(h.dimensions.size() * rows_per_block);
  state->longs.resize(h.schema.metrics.size());
  state->doubles.resize(h.schema.metrics.size());
  for (size_t m = 0; m < h.schema.metrics.size(); ++m) {
    if (state->metric_types[m] == ValueType::kLong) state->longs[m].resize(rows_per_block);
    if (state->metric_types[m] == ValueType::kDouble) state->doubles[m].resize(rows_per_block);
  }
  state->exact.resize(h.schema.metrics.size());
  if (state->keep_provenance) {
    state->partitions.resize(rows_per_block);
    state->offsets.resize(rows_per_block);
  }
  for (size_t m = 0; m < h.schema.metrics.size(); ++m) {
    State::MetricSlot slot{State::Store::kNothing, state->longs[m].data(),
                           state->doubles[m].data(), &state->exact[m]};
    switch (state->metric_types[m]) {
      case ValueType::kLong: slot.store = State::Store::kLong; break;
      case ValueType::kDouble:
        slot.store = h.schema.metrics[m].type == MetricType::kDoubleSum && h.kind == FileKind::kSegment
                         ? State::Store::kCanonicalSum
                         : State::Store::kDoubleBits;
        break;
      case ValueType::kExactSum: slot.store = State::Store::kExactSum; break;
      case ValueType::kString: break;
    }
    state->metric_slots.push_back(slot);
  }
  state->previous_key.assign(h.dimensions.size(), 0);
  return std::unique_ptr<SegmentWriter>(new SegmentWriter(std::move(state)));
}

absl::Status SegmentWriter::AddRow(int64_t time, const uint32_t* ids, const MetricCell* cells,
                                   int32_t partition, int64_t offset) {
  State& s = *state_;
  if (rows_ >= std::numeric_limits<uint32_t>::max()) {
    // Bitmaps hold 32-bit row numbers.
    return absl::ResourceExhaustedError("a segment file holds at most 2^32 - 1 rows");
  }
  const size_t dims = s.previous_key.size();
  const Interval& interval = s.header.metadata.interval;
  if (time < interval.start_ms || time >= interval.end_ms) {
    return absl::InvalidArgumentError(absl::StrCat("row time ", time, " is outside the interval [",
                                                   interval.start_ms, ", ", interval.end_ms, ")"));
  }
  // One pass over the ids: each checked against its dictionary, compared
  // with the previous row's while the keys are equal so far, and stored in
  // the block (past the rows the block holds, so a refused row leaves
  // nothing behind).
  const size_t k = s.in_block;
  const size_t rpb = s.rows_per_block;
  uint32_t* const block_ids = s.ids.data();
  // Rows must come sorted by (time, ids); with rollup, keys are distinct.
  const int64_t previous_time = k > 0 ? s.times[k - 1] : s.previous_time;
  int order = rows_ == 0 ? 1 : time < previous_time ? -1 : time > previous_time ? 1 : 0;
  for (size_t d = 0; d < dims; ++d) {
    const uint32_t id = ids[d];
    if (id > s.cardinalities[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("id ", id, " is not in the dictionary of \"", s.header.dimensions[d],
                       "\""));
    }
    uint32_t* column = block_ids + d * rpb;
    if (order == 0) {
      const uint32_t previous = k > 0 ? column[k - 1] : s.previous_key[d];
      order = id < previous ? -1 : id > previous ? 1 : 0;
    }
    column[k] = id;
  }
  if (order < 0 || (order == 0 && s.header.schema.rollup)) {
    return absl::InternalError(absl::StrCat("rows are not in (time, dimensions) order at row ",
                                            rows_));
  }
  if (rows_ == 0) s.min_time = time;
  s.max_time = time;

  s.times[k] = time;
  const MetricCell* cell = cells;
  for (const State::MetricSlot& slot : s.metric_slots) {
    switch (slot.store) {
      case State::Store::kLong:
        slot.longs[k] = static_cast<int64_t>(cell->bits);
        break;
      case State::Store::kDoubleBits:
        std::memcpy(&slot.doubles[k], &cell->bits, sizeof(double));
        break;
      case State::Store::kCanonicalSum:
        slot.doubles[k] = CanonicalSum(*cell);
        break;
      case State::Store::kExactSum:
        if (cell->exact != nullptr) {
          cell->exact->AppendTo(slot.exact);
        } else {
          double v;
          std::memcpy(&v, &cell->bits, sizeof(v));
          ExactSum(v).AppendTo(slot.exact);
        }
        break;
      case State::Store::kNothing:
        break;
    }
    ++cell;
  }
  if (s.keep_provenance) {
    s.partitions[k] = partition;
    s.offsets[k] = offset;
  }
  ++rows_;
  if (++s.in_block == rpb) return FlushBlock();
  return absl::OkStatus();
}

absl::Status SegmentWriter::FlushBlock() {
  State& s = *state_;
  const size_t n = s.in_block;
  if (n == 0) return absl::OkStatus();
  const size_t dims = s.previous_key.size();
  const size_t rpb = s.rows_per_block;
  size_t column = 0;
  auto emit = [&]() -> absl::Status {
    absl::StatusOr<BlockRef> ref = s.WriteBlock();
    if (!ref.ok()) return ref.status();
    s.columns[column++].blocks.push_back(*ref);
    return absl::OkStatus();
  };
  s.raw.clear();
  EncodeLongs(LongEncoding::kDeltaVarint, s.times.data(), n, &s.raw);
  if (absl::Status st = emit(); !st.ok()) return st;
  if (s.ids_in_memory) {
    if (s.id_bytes_per_row * rows_ > max_id_bytes_in_memory.load(std::memory_order_relaxed)) {  // rows_ counts this block
      s.ids_in_memory = false;
      std::vector<IdColumn>().swap(s.id_columns);
    } else {
      for (size_t d = 0; d < dims; ++d) s.id_columns[d].Append(&s.ids[d * rpb], n);
    }
  }
  for (size_t d = 0; d < dims; ++d) {
    s.raw.clear();
    EncodeIds(&s.ids[d * rpb], n, &s.raw);
    if (absl::Status st = emit(); !st.ok()) return st;
    s.previous_key[d] = s.ids[d * rpb + n - 1];
  }
  s.previous_time = s.times[n - 1];
  for (size_t m = 0; m < s.metric_types.size(); ++m) {
    s.raw.clear();
    switch (s.metric_types[m]) {
      case ValueType::kLong:
        EncodeLongs(LongEncoding::kVarint, s.longs[m].data(), n, &s.raw);
        break;
      case ValueType::kDouble:
        EncodeDoubles(s.doubles[m].data(), n, &s.raw);
        break;
      case ValueType::kExactSum:
        s.raw.Append(s.exact[m]);
        s.exact[m].clear();
        break;
      case ValueType::kString:
        break;
    }
    if (absl::Status st = emit(); !st.ok()) return st;
  }
  if (s.keep_provenance) {
    s.raw.clear();
    EncodeLongs(LongEncoding::kVarint, s.partitions.data(), n, &s.raw);
    if (absl::Status st = emit(); !st.ok()) return st;
    s.raw.clear();
    EncodeLongs(LongEncoding::kVarint, s.offsets.data(), n, &s.raw);
    if (absl::Status st = emit(); !st.ok()) return st;
  }
  s.in_block = 0;
  return absl::OkStatus();
}

void SetMaxIdBytesInMemoryForTesting(uint64_t bytes) {
  max_id_bytes_in_memory.store(bytes, std::memory_order_relaxed);
}

absl::StatusOr<WrittenFile> SegmentWriter::Finish() {
  State& s = *state_;
  if (absl::Status st = FlushBlock(); !st.ok()) return st;
  if (s.bitmaps) {
    // One dimension at a time: its ids, kept or read back from the blocks
    // just written, then its bitmaps.
    BlockDecompressor decompressor;
    std::string stored, raw;
    std::vector<uint32_t> ids;
    for (size_t d = 0; d < s.cardinalities.size(); ++d) {
      ColumnEntry& c = s.columns[1 + d];
      if (s.ids_in_memory) {
        ByteBuffer sizes, bodies;
        s.id_columns[d].Bitmaps(s.cardinalities[d], &sizes, &bodies);
        IdColumn(0, 0).Swap(&s.id_columns[d]);  // its memory goes now
        c.bitmaps_offset = s.file->size();
        c.bitmaps_size = sizes.size() + bodies.size();
        if (absl::Status st = s.Write(sizes.view()); !st.ok()) return st;
        if (absl::Status st = s.Write(bodies.view()); !st.ok()) return st;
        continue;
      }
      IdColumn column(s.cardinalities[d], rows_);
      for (size_t b = 0; b < c.blocks.size(); ++b) {
        const BlockRef& ref = c.blocks[b];
        const size_t n = static_cast<size_t>(
            std::min<uint64_t>(s.header.rows_per_block, rows_ - b * s.header.rows_per_block));
        if (absl::Status st = s.file->ReadAt(ref.offset, ref.stored_size, &stored); !st.ok()) {
          return st;
        }
        if (absl::Status st = decompressor.Decompress(s.header.compression, stored, ref.raw_size,
                                                      c.name, &raw);
            !st.ok()) {
          return st;
        }
        ids.resize(n);
        if (!DecodeIds(raw, n, static_cast<uint32_t>(s.cardinalities[d]), ids.data())) {
          return absl::InternalError(
              absl::StrCat("ids of \"", c.name, "\" block ", b, " do not decode after writing"));
        }
        column.Append(ids.data(), n);
      }
      ByteBuffer sizes, bodies;
      column.Bitmaps(s.cardinalities[d], &sizes, &bodies);
      c.bitmaps_offset = s.file->size();
      c.bitmaps_size = sizes.size() + bodies.size();
      if (absl::Status st = s.Write(sizes.view()); !st.ok()) return st;
      if (absl::Status st = s.Write(bodies.view()); !st.ok()) return st;
    }
  }
  const std::string directory = EncodeDirectory(s.columns);
  const uint64_t directory_offset = s.file->size();
  if (absl::Status st = s.Write(directory); !st.ok()) return st;
  // The trailer up to (not including) the CRC is covered by it.
  const std::string trailer_prefix =
      EncodeTrailer(directory_offset, directory.size(), 0).substr(0, kTrailerSize - kCrcCoverageExclusion);
  if (absl::Status st = s.Write(trailer_prefix); !st.ok()) return st;

  s.header.num_rows = rows_;
  s.header.min_time = rows_ > 0 ? s.min_time : 0;
  s.header.max_time = rows_ > 0 ? s.max_time : 0;
  const std::string header_bytes = EncodeHeader(s.header);
  if (header_bytes.size() != s.header_size) {
    return absl::InternalError("segment header changed size");
  }
  const uint64_t body_size = s.file->size() - s.header_size;
  const uint32_t crc = Crc32cCombine(Crc32c(header_bytes), s.body_crc, body_size);
  std::string tail;
  PutFixed32(&tail, crc);
  tail.append(kTrailerMagic, 8);
  if (absl::Status st = s.file->Append(tail); !st.ok()) return st;
  if (absl::Status st = s.file->WriteAt(0, header_bytes); !st.ok()) return st;
  const uint64_t size = s.file->size();
  if (absl::Status st = s.file->Commit(); !st.ok()) return st;
  WrittenFile result;
  result.path = s.file->path();
  result.num_rows = rows_;
  result.size_bytes = size;
  result.crc = crc;
  result.header = s.header;
  return result;
}

}  // namespace segment
}  // namespace sluice
