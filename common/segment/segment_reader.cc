#include "common/segment/segment_reader.h"

#include <roaring/roaring.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/segment/byte_io.h"
#include "common/segment/crc32c.h"
#include "common/segment/roaring_check.h"

namespace sluice {
namespace segment {
namespace {

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupt segment file: ", what));
}


size_t MaxEncodedSize(ValueType type) {
  switch (type) {
    case ValueType::kLong: return kMaxEncodedLong;
    case ValueType::kDouble: return kMaxEncodedDouble;
    case ValueType::kString: return kMaxEncodedId;
    case ValueType::kExactSum: return kMaxEncodedExactSum;
  }
  return 0;
}

}  // namespace

Bitmap::Bitmap() : bitmap_(roaring_bitmap_create()) {}
Bitmap::Bitmap(roaring_bitmap_s* bitmap) : bitmap_(bitmap) {}
Bitmap::~Bitmap() {
  if (bitmap_ != nullptr) roaring_bitmap_free(bitmap_);
}
Bitmap::Bitmap(Bitmap&& other) noexcept : bitmap_(other.bitmap_) { other.bitmap_ = nullptr; }
Bitmap& Bitmap::operator=(Bitmap&& other) noexcept {
  if (this != &other) {
    if (bitmap_ != nullptr) roaring_bitmap_free(bitmap_);
    bitmap_ = other.bitmap_;
    other.bitmap_ = nullptr;
  }
  return *this;
}
uint64_t Bitmap::cardinality() const {
  return bitmap_ == nullptr ? 0 : roaring_bitmap_get_cardinality(bitmap_);
}
bool Bitmap::Contains(uint32_t row) const {
  return bitmap_ != nullptr && roaring_bitmap_contains(bitmap_, row);
}
std::vector<uint32_t> Bitmap::ToVector() const {
  std::vector<uint32_t> rows(cardinality());
  if (!rows.empty()) roaring_bitmap_to_uint32_array(bitmap_, rows.data());
  return rows;
}

absl::StatusOr<std::unique_ptr<SegmentReader>> SegmentReader::Open(const std::string& path,
                                                                   const Options& options) {
  absl::StatusOr<MappedFile> mapped = MappedFile::Open(path);
  if (!mapped.ok()) return mapped.status();
  std::unique_ptr<SegmentReader> reader(new SegmentReader());
  reader->mapped_ = std::move(*mapped);
  reader->data_ = reader->mapped_.data();
  if (absl::Status s = reader->Init(options); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  }
  // The checksum went over every page; what is decoded is copied out, and
  // blocks and bitmaps map their pages again when read.
  reader->mapped_.ReleasePages(0, reader->data_.size());
  return reader;
}

absl::StatusOr<std::unique_ptr<SegmentReader>> SegmentReader::FromBytes(std::string bytes,
                                                                        const Options& options) {
  std::unique_ptr<SegmentReader> reader(new SegmentReader());
  reader->owned_ = std::move(bytes);
  reader->data_ = reader->owned_;
  if (absl::Status s = reader->Init(options); !s.ok()) return s;
  return reader;
}

SegmentReader::~SegmentReader() = default;

std::string SegmentReader::checksum() const { return FormatCrc32c(crc_); }

absl::Status SegmentReader::Init(const Options& options) {
  const absl::string_view d = data_;
  if (d.size() < kPreambleSize + kTrailerSize) {
    return Corrupt(absl::StrCat("file is ", d.size(), " bytes, too short to be a segment"));
  }
  if (std::memcmp(d.data(), kHeaderMagic, 8) != 0) return Corrupt("bad magic at the start");
  if (std::memcmp(d.data() + d.size() - 8, kTrailerMagic, 8) != 0) {
    return Corrupt("bad magic at the end (truncated or not a segment file)");
  }
  const uint32_t version = DecodeFixed32(d.data() + 8);
  if (version != kFormatVersion) {
    return Corrupt(absl::StrCat("format version ", version, " (this reader knows ",
                                kFormatVersion, ")"));
  }
  const char* trailer = d.data() + d.size() - kTrailerSize;
  crc_ = DecodeFixed32(trailer + 20);
  if (options.verify_checksum) {
    const uint32_t actual = Crc32c(d.substr(0, d.size() - kCrcCoverageExclusion));
    if (actual != crc_) {
      return Corrupt(absl::StrCat("checksum mismatch: the file says ", FormatCrc32c(crc_),
                                  ", its bytes give ", FormatCrc32c(actual)));
    }
  }
  const uint64_t header_size = DecodeFixed32(d.data() + 12);
  if (header_size > d.size() - kPreambleSize - kTrailerSize) {
    return Corrupt("header size beyond the end of the file");
  }
  if (absl::Status s = DecodeHeaderFields(d.substr(kPreambleSize, header_size), &header_);
      !s.ok()) {
    return s;
  }
  body_begin_ = kPreambleSize + header_size;
  const uint64_t directory_offset = DecodeFixed64(trailer);
  const uint64_t directory_size = DecodeFixed64(trailer + 8);
  if (DecodeFixed32(trailer + 16) != 0) return Corrupt("trailer: reserved bytes");
  const uint64_t trailer_offset = d.size() - kTrailerSize;
  if (directory_offset < body_begin_ || directory_offset > trailer_offset ||
      directory_size != trailer_offset - directory_offset) {
    return Corrupt("trailer: directory location");
  }
  body_end_ = directory_offset;
  if (absl::Status s = DecodeDirectory(d.substr(directory_offset, directory_size), &columns_);
      !s.ok()) {
    return s;
  }

  // The columns must be exactly those the header implies.
  const FileHeader& h = header_;
  const bool provenance_columns = h.kind == FileKind::kSpill && !h.schema.rollup;
  const size_t expected = 1 + h.dimensions.size() + h.schema.metrics.size() +
                          (provenance_columns ? 2 : 0);
  if (columns_.size() != expected) {
    return Corrupt(absl::StrCat("directory has ", columns_.size(), " columns, the header implies ",
                                expected));
  }
  if (!h.schema.dimensions.empty() && h.schema.dimensions != h.dimensions) {
    return Corrupt("dimension columns differ from the schema's dimensions");
  }
  for (size_t i = 1; i < h.dimensions.size(); ++i) {
    if (h.schema.dimensions.empty() && !(h.dimensions[i - 1] < h.dimensions[i])) {
      return Corrupt("discovered dimensions are not sorted by name");
    }
  }
  auto check_column = [&](size_t i, ColumnRole role, absl::string_view name, ValueType type,
                          bool long_encoding) -> absl::Status {
    const ColumnEntry& c = columns_[i];
    if (c.role != role || c.name != name || c.type != type ||
        (!long_encoding && c.encoding != 0)) {
      return Corrupt(absl::StrCat("column ", i, " (\"", c.name, "\") is not the ",
                                  ColumnRoleName(role), " column \"", name, "\" of type ",
                                  ValueTypeName(type)));
    }
    return absl::OkStatus();
  };
  size_t col = 0;
  if (absl::Status s = check_column(col++, ColumnRole::kTime, kTimeColumn, ValueType::kLong, true);
      !s.ok()) {
    return s;
  }
  for (const std::string& dim : h.dimensions) {
    if (absl::Status s = check_column(col++, ColumnRole::kDimension, dim, ValueType::kString, false);
        !s.ok()) {
      return s;
    }
  }
  for (const MetricSpec& m : h.schema.metrics) {
    const ValueType type = MetricValueType(h.kind, h.schema.rollup, m.type);
    if (absl::Status s = check_column(col++, ColumnRole::kMetric, m.name, type,
                                      type == ValueType::kLong);
        !s.ok()) {
      return s;
    }
  }
  if (provenance_columns) {
    if (absl::Status s =
            check_column(col++, ColumnRole::kPartition, "__partition", ValueType::kLong, true);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = check_column(col++, ColumnRole::kOffset, "__offset", ValueType::kLong, true);
        !s.ok()) {
      return s;
    }
  }

  // Blocks: the same count in every column, each inside the body, with a raw
  // size no larger than its rows can encode to.
  num_blocks_ = static_cast<size_t>((h.num_rows + h.rows_per_block - 1) / h.rows_per_block);
  for (size_t i = 0; i < columns_.size(); ++i) {
    const ColumnEntry& c = columns_[i];
    if (c.blocks.size() != num_blocks_) {
      return Corrupt(absl::StrCat("column \"", c.name, "\" has ", c.blocks.size(),
                                  " blocks instead of ", num_blocks_));
    }
    for (size_t b = 0; b < num_blocks_; ++b) {
      const uint64_t rows = std::min<uint64_t>(h.rows_per_block, h.num_rows - b * h.rows_per_block);
      if (absl::Status s = CheckBlockRef(c.blocks[b],
                                         std::min<uint64_t>(1 + rows * MaxEncodedSize(c.type),
                                                            MaxDecompressedSize(
                                                                h.compression,
                                                                c.blocks[b].stored_size)),
                                         absl::StrCat("column \"", c.name, "\" block ", b));
          !s.ok()) {
        return s;
      }
    }
    if (c.role == ColumnRole::kDimension) {
      if (c.cardinality > h.num_rows) {
        return Corrupt(absl::StrCat("dimension \"", c.name, "\" has more values than rows"));
      }
      // The format's bounds (format_limits.h): what `cardinality` values
      // within the value limit can take, and what the codec can expand the
      // stored bytes to.
      const uint64_t max_raw =
          std::min(MaxDictionaryBytes(c.cardinality),
                   MaxDecompressedSize(h.compression, c.dictionary.stored_size));
      if (absl::Status s = CheckBlockRef(c.dictionary, max_raw,
                                         absl::StrCat("dictionary of \"", c.name, "\""));
          !s.ok()) {
        return s;
      }
      const bool want_bitmaps = h.kind == FileKind::kSegment;
      if (want_bitmaps != (c.bitmaps_size > 0)) {
        return Corrupt(absl::StrCat("dimension \"", c.name, "\": bitmaps ",
                                    want_bitmaps ? "missing" : "in a spill"));
      }
      if (c.bitmaps_size > 0 &&
          (c.bitmaps_offset < body_begin_ || c.bitmaps_offset > body_end_ ||
           c.bitmaps_size > body_end_ - c.bitmaps_offset)) {
        return Corrupt(absl::StrCat("bitmaps of \"", c.name, "\" outside the file body"));
      }
    }
  }
  // Statistics the header promises.
  if (h.num_rows > 0 && (h.min_time > h.max_time || h.min_time < h.metadata.interval.start_ms ||
                         h.max_time >= h.metadata.interval.end_ms)) {
    return Corrupt("header: time range outside the interval");
  }
  uint64_t records = 0;
  for (size_t i = 0; i < h.partitions.size(); ++i) {
    const PartitionStats& p = h.partitions[i];
    if ((i > 0 && p.partition <= h.partitions[i - 1].partition) || p.records <= 0 ||
        p.min_offset > p.max_offset || p.min_offset < 0) {
      return Corrupt("header: partition statistics");
    }
    records += static_cast<uint64_t>(p.records);
  }
  if (records != h.input_records) {
    return Corrupt("header: partition record counts do not add up to the input records");
  }
  const size_t dims = header_.dimensions.size();
  dictionary_bytes_.resize(dims);
  dictionaries_.resize(dims);
  dictionary_loaded_.assign(dims, false);
  bitmap_offsets_.resize(dims);
  if (!options.load_dictionaries) return absl::OkStatus();
  for (size_t d = 0; d < dims; ++d) {
    if (absl::Status s = LoadDictionary(d); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SegmentReader::CheckBlockRef(const BlockRef& ref, uint64_t max_raw,
                                          absl::string_view what) const {
  if (ref.offset < body_begin_ || ref.offset > body_end_ ||
      ref.stored_size > body_end_ - ref.offset) {
    return Corrupt(absl::StrCat(what, ": outside the file body"));
  }
  if (ref.raw_size > max_raw) return Corrupt(absl::StrCat(what, ": implausible size"));
  return absl::OkStatus();
}

absl::Status SegmentReader::LoadDictionary(size_t d) {
  if (dictionary_loaded_[d]) return absl::OkStatus();
  const ColumnEntry& c = columns_[1 + d];
  const std::string what = absl::StrCat("dictionary of \"", c.name, "\"");
  std::string& bytes = dictionary_bytes_[d];
  if (absl::Status s = decompressor_.Decompress(
          header_.compression, data_.substr(c.dictionary.offset, c.dictionary.stored_size),
          c.dictionary.raw_size, what, &bytes);
      !s.ok()) {
    return s;
  }
  ByteReader r(bytes);
  uint64_t count;
  if (!r.Varint64(&count) || count != c.cardinality || count > r.remaining()) {
    return Corrupt(absl::StrCat(what, ": value count"));
  }
  std::vector<absl::string_view>& values = dictionaries_[d];
  values.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (!r.String(&values[i])) return Corrupt(absl::StrCat(what, ": truncated value"));
    if (values[i].size() > kMaxValueBytes) {
      return Corrupt(absl::StrCat(what, ": value ", i, " is ", values[i].size(),
                                  " bytes, beyond the format's limit of ", kMaxValueBytes));
    }
    if (i > 0 && !(values[i - 1] < values[i])) {
      return Corrupt(absl::StrCat(what, ": values not sorted and distinct"));
    }
  }
  if (!r.empty()) return Corrupt(absl::StrCat(what, ": bytes left over"));
  dictionary_loaded_[d] = true;
  return absl::OkStatus();
}

void SegmentReader::ReleaseDictionary(size_t d) {
  std::vector<absl::string_view>().swap(dictionaries_[d]);
  std::string().swap(dictionary_bytes_[d]);
  dictionary_loaded_[d] = false;
}

void SegmentReader::ReleaseBlockPages(size_t index) {
  if (index >= num_blocks_ || columns_.empty()) return;  // (mapped_ is empty for bytes)
  // A block's columns were written one after another.
  const BlockRef& first = columns_.front().blocks[index];
  const BlockRef& last = columns_.back().blocks[index];
  mapped_.ReleasePages(first.offset, last.offset + last.stored_size - first.offset);
}

int SegmentReader::DimensionIndex(absl::string_view name) const {
  for (size_t d = 0; d < header_.dimensions.size(); ++d) {
    if (header_.dimensions[d] == name) return static_cast<int>(d);
  }
  return -1;
}

int SegmentReader::MetricIndex(absl::string_view name) const {
  for (size_t m = 0; m < header_.schema.metrics.size(); ++m) {
    if (header_.schema.metrics[m].name == name) return static_cast<int>(m);
  }
  return -1;
}

int64_t SegmentReader::FindId(size_t d, std::optional<absl::string_view> value) const {
  if (!value.has_value()) return 0;
  const std::vector<absl::string_view>& dict = dictionaries_[d];
  auto it = std::lower_bound(dict.begin(), dict.end(), *value);
  if (it == dict.end() || *it != *value) return -1;
  return (it - dict.begin()) + 1;
}

uint64_t SegmentReader::ColumnBytes(size_t column) const {
  const ColumnEntry& c = columns_[column];
  uint64_t total = c.dictionary.stored_size + c.bitmaps_size;
  for (const BlockRef& b : c.blocks) total += b.stored_size;
  return total;
}

absl::Status SegmentReader::ReadColumnBlock(size_t column, size_t block, size_t rows,
                                            std::string* raw) {
  const ColumnEntry& c = columns_[column];
  const BlockRef& ref = c.blocks[block];
  return decompressor_.Decompress(header_.compression,
                                  data_.substr(ref.offset, ref.stored_size), ref.raw_size,
                                  absl::StrCat("column \"", c.name, "\" block ", block), raw);
}

absl::Status SegmentReader::ReadBlock(size_t index, DecodedBlock* block) {
  if (index >= num_blocks_) return absl::OutOfRangeError("no such block");
  const FileHeader& h = header_;
  const size_t rows = static_cast<size_t>(
      std::min<uint64_t>(h.rows_per_block, h.num_rows - index * uint64_t{h.rows_per_block}));
  block->rows = rows;
  block->first_row = index * uint64_t{h.rows_per_block};
  const size_t dims = h.dimensions.size();
  const size_t metrics = h.schema.metrics.size();
  block->ids.resize(dims);
  block->longs.resize(metrics);
  block->doubles.resize(metrics);
  block->exact.resize(metrics);
  auto bad = [&](size_t column) {
    return Corrupt(absl::StrCat("column \"", columns_[column].name, "\" block ", index,
                                ": values do not decode"));
  };
  size_t column = 0;
  if (absl::Status s = ReadColumnBlock(column, index, rows, &scratch_); !s.ok()) return s;
  block->times.resize(rows);
  if (!DecodeLongs(static_cast<LongEncoding>(columns_[column].encoding), scratch_, rows,
                   block->times.data())) {
    return bad(column);
  }
  ++column;
  for (size_t d = 0; d < dims; ++d, ++column) {
    if (absl::Status s = ReadColumnBlock(column, index, rows, &scratch_); !s.ok()) return s;
    block->ids[d].resize(rows);
    if (!DecodeIds(scratch_, rows, static_cast<uint32_t>(columns_[column].cardinality),
                   block->ids[d].data())) {
      return bad(column);
    }
  }
  for (size_t m = 0; m < metrics; ++m, ++column) {
    if (absl::Status s = ReadColumnBlock(column, index, rows, &scratch_); !s.ok()) return s;
    bool ok = false;
    switch (columns_[column].type) {
      case ValueType::kLong:
        block->longs[m].resize(rows);
        ok = DecodeLongs(static_cast<LongEncoding>(columns_[column].encoding), scratch_, rows,
                         block->longs[m].data());
        break;
      case ValueType::kDouble:
        block->doubles[m].resize(rows);
        ok = DecodeDoubles(scratch_, rows, block->doubles[m].data());
        break;
      case ValueType::kExactSum:
        block->exact[m].resize(rows);
        ok = DecodeExactSums(scratch_, rows, block->exact[m].data());
        break;
      case ValueType::kString:
        break;
    }
    if (!ok) return bad(column);
  }
  if (column < columns_.size()) {
    for (std::vector<int64_t>* out : {&block->partitions, &block->offsets}) {
      if (absl::Status s = ReadColumnBlock(column, index, rows, &scratch_); !s.ok()) return s;
      out->resize(rows);
      if (!DecodeLongs(static_cast<LongEncoding>(columns_[column].encoding), scratch_, rows,
                       out->data())) {
        return bad(column);
      }
      ++column;
    }
  } else {
    block->partitions.clear();
    block->offsets.clear();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> SegmentReader::ReadTimes() {
  std::vector<int64_t> out;
  out.reserve(num_rows());
  DecodedBlock block;
  for (size_t b = 0; b < num_blocks_; ++b) {
    if (absl::Status s = ReadBlock(b, &block); !s.ok()) return s;
    out.insert(out.end(), block.times.begin(), block.times.end());
  }
  return out;
}

absl::StatusOr<std::vector<uint32_t>> SegmentReader::ReadDimensionIds(absl::string_view name) {
  const int d = DimensionIndex(name);
  if (d < 0) return absl::NotFoundError(absl::StrCat("no dimension \"", name, "\""));
  std::vector<uint32_t> out;
  out.reserve(num_rows());
  DecodedBlock block;
  for (size_t b = 0; b < num_blocks_; ++b) {
    if (absl::Status s = ReadBlock(b, &block); !s.ok()) return s;
    out.insert(out.end(), block.ids[d].begin(), block.ids[d].end());
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> SegmentReader::ReadLongMetric(absl::string_view name) {
  const int m = MetricIndex(name);
  if (m < 0) return absl::NotFoundError(absl::StrCat("no metric \"", name, "\""));
  if (!IsLongMetric(header_.schema.metrics[m].type)) {
    return absl::InvalidArgumentError(absl::StrCat("metric \"", name, "\" is not a long metric"));
  }
  std::vector<int64_t> out;
  out.reserve(num_rows());
  DecodedBlock block;
  for (size_t b = 0; b < num_blocks_; ++b) {
    if (absl::Status s = ReadBlock(b, &block); !s.ok()) return s;
    out.insert(out.end(), block.longs[m].begin(), block.longs[m].end());
  }
  return out;
}

absl::StatusOr<std::vector<double>> SegmentReader::ReadDoubleMetric(absl::string_view name) {
  const int m = MetricIndex(name);
  if (m < 0) return absl::NotFoundError(absl::StrCat("no metric \"", name, "\""));
  if (IsLongMetric(header_.schema.metrics[m].type)) {
    return absl::InvalidArgumentError(absl::StrCat("metric \"", name, "\" is not a double metric"));
  }
  std::vector<double> out;
  out.reserve(num_rows());
  DecodedBlock block;
  for (size_t b = 0; b < num_blocks_; ++b) {
    if (absl::Status s = ReadBlock(b, &block); !s.ok()) return s;
    if (!block.exact[m].empty()) {
      for (const ExactSum& e : block.exact[m]) out.push_back(e.Round());
    } else {
      out.insert(out.end(), block.doubles[m].begin(), block.doubles[m].end());
    }
  }
  return out;
}

absl::Status SegmentReader::LoadBitmapOffsets(size_t d) {
  if (!bitmap_offsets_[d].empty()) return absl::OkStatus();
  const ColumnEntry& c = columns_[1 + d];
  const std::string what = absl::StrCat("bitmaps of \"", c.name, "\"");
  ByteReader r(data_.substr(c.bitmaps_offset, c.bitmaps_size));
  uint64_t count;
  if (!r.Varint64(&count) || count != c.cardinality + 1) {
    return Corrupt(absl::StrCat(what, ": bitmap count"));
  }
  std::vector<uint64_t> sizes(count);
  uint64_t total = 0;
  for (uint64_t& size : sizes) {
    if (!r.Varint64(&size) || size > c.bitmaps_size) return Corrupt(absl::StrCat(what, ": sizes"));
    total += size;
  }
  if (total != r.remaining()) return Corrupt(absl::StrCat(what, ": sizes do not add up"));
  std::vector<uint64_t> offsets(count + 1);
  offsets[0] = static_cast<uint64_t>(r.position() - data_.data());
  for (uint64_t i = 0; i < count; ++i) offsets[i + 1] = offsets[i] + sizes[i];
  bitmap_offsets_[d] = std::move(offsets);
  return absl::OkStatus();
}

absl::StatusOr<Bitmap> SegmentReader::BitmapOf(size_t d, uint32_t id) {
  if (header_.kind != FileKind::kSegment) {
    return absl::FailedPreconditionError("spill files have no bitmap indexes");
  }
  if (absl::Status s = LoadBitmapOffsets(d); !s.ok()) return s;
  const std::vector<uint64_t>& offsets = bitmap_offsets_[d];
  const absl::string_view bytes = data_.substr(offsets[id], offsets[id + 1] - offsets[id]);
  std::string why;
  if (!CheckPortableRoaring(bytes, header_.num_rows, &why)) {
    return Corrupt(absl::StrCat("bitmap ", id, " of \"", header_.dimensions[d], "\": ", why));
  }
  roaring_bitmap_t* bitmap = roaring_bitmap_portable_deserialize_safe(bytes.data(), bytes.size());
  if (bitmap == nullptr) {
    return Corrupt(absl::StrCat("bitmap ", id, " of \"", header_.dimensions[d], "\""));
  }
  return Bitmap(bitmap);
}

absl::Status SegmentReader::AppendBitmapRows(size_t d, uint32_t id, std::vector<uint32_t>* rows) {
  if (header_.kind != FileKind::kSegment) {
    return absl::FailedPreconditionError("spill files have no bitmap indexes");
  }
  if (absl::Status s = LoadBitmapOffsets(d); !s.ok()) return s;
  const std::vector<uint64_t>& offsets = bitmap_offsets_[d];
  const absl::string_view bytes = data_.substr(offsets[id], offsets[id + 1] - offsets[id]);
  std::string why;
  if (!CheckPortableRoaring(bytes, header_.num_rows, &why, rows)) {
    return Corrupt(absl::StrCat("bitmap ", id, " of \"", header_.dimensions[d], "\": ", why));
  }
  return absl::OkStatus();
}

absl::StatusOr<Bitmap> SegmentReader::RowsWithValue(absl::string_view name,
                                                    std::optional<absl::string_view> value) {
  const int d = DimensionIndex(name);
  if (d < 0) return absl::NotFoundError(absl::StrCat("no dimension \"", name, "\""));
  const int64_t id = FindId(d, value);
  if (id < 0) return Bitmap();
  return BitmapOf(d, static_cast<uint32_t>(id));
}

absl::Status SegmentReader::Verify() {
  const FileHeader& h = header_;
  const size_t dims = h.dimensions.size();
  const size_t metrics = h.schema.metrics.size();
  std::map<int32_t, PartitionStats> seen;
  int count_metric = -1;
  for (size_t m = 0; m < metrics; ++m) {
    if (h.schema.metrics[m].type == MetricType::kCount) count_metric = static_cast<int>(m);
  }
  uint64_t count_total = 0;
  int64_t min_time = 0, max_time = 0;
  DecodedBlock block;
  std::vector<uint32_t> previous(dims);
  int64_t previous_time = 0;
  int32_t previous_partition = 0;
  int64_t previous_offset = 0;
  for (size_t b = 0; b < num_blocks_; ++b) {
    if (absl::Status s = ReadBlock(b, &block); !s.ok()) return s;
    for (size_t i = 0; i < block.rows; ++i) {
      const uint64_t row = block.first_row + i;
      const int64_t t = block.times[i];
      if (t < h.metadata.interval.start_ms || t >= h.metadata.interval.end_ms) {
        return Corrupt(absl::StrCat("row ", row, ": time outside the interval"));
      }
      if (row == 0) min_time = t;
      max_time = t;
      if (h.schema.query_granularity.Truncate(t) != t) {
        return Corrupt(absl::StrCat("row ", row, ": time not truncated to the query granularity"));
      }
      int order = 1;
      if (row > 0) {
        order = t < previous_time ? -1 : t > previous_time ? 1 : 0;
        for (size_t d = 0; order == 0 && d < dims; ++d) {
          const uint32_t id = block.ids[d][i];
          order = id < previous[d] ? -1 : id > previous[d] ? 1 : 0;
        }
        if (order == 0 && !h.schema.rollup && !block.partitions.empty()) {
          order = block.partitions[i] < previous_partition ? -1
                  : block.partitions[i] > previous_partition ? 1
                  : block.offsets[i] < previous_offset ? -1
                  : block.offsets[i] > previous_offset ? 1 : 0;
        }
        if (order < 0 || (order == 0 && (h.schema.rollup || !block.partitions.empty()))) {
          return Corrupt(absl::StrCat("row ", row, ": rows out of order"));
        }
      }
      previous_time = t;
      for (size_t d = 0; d < dims; ++d) previous[d] = block.ids[d][i];
      if (!block.partitions.empty()) {
        const int64_t p = block.partitions[i];
        const int64_t o = block.offsets[i];
        if (p < 0 || p > INT32_MAX || o < 0) {
          return Corrupt(absl::StrCat("row ", row, ": bad partition or offset"));
        }
        previous_partition = static_cast<int32_t>(p);
        previous_offset = o;
        PartitionStats& st = seen[static_cast<int32_t>(p)];
        if (st.records == 0) {
          st.partition = static_cast<int32_t>(p);
          st.min_offset = st.max_offset = o;
        }
        st.records++;
        st.min_offset = std::min(st.min_offset, o);
        st.max_offset = std::max(st.max_offset, o);
      }
      if (count_metric >= 0) {
        const int64_t c = block.longs[count_metric][i];
        if (c <= 0) return Corrupt(absl::StrCat("row ", row, ": count is not positive"));
        count_total += static_cast<uint64_t>(c);
      }
      if (!h.schema.rollup && count_metric >= 0 && block.longs[count_metric][i] != 1) {
        return Corrupt(absl::StrCat("row ", row, ": count is not 1 without rollup"));
      }
    }
  }
  if (h.num_rows > 0 && (min_time != h.min_time || max_time != h.max_time)) {
    return Corrupt("header: min/max time differ from the rows");
  }
  if (count_metric >= 0 && count_total != h.input_records) {
    return Corrupt(absl::StrCat("the counts add up to ", count_total, ", the header says ",
                                h.input_records, " input records"));
  }
  if (!h.schema.rollup && h.num_rows != h.input_records) {
    return Corrupt("rows differ from input records without rollup");
  }
  if (h.kind == FileKind::kSpill && !h.schema.rollup) {
    std::vector<PartitionStats> stats;
    for (const auto& [p, st] : seen) stats.push_back(st);
    if (stats.size() != h.partitions.size()) return Corrupt("partition statistics differ");
    for (size_t i = 0; i < stats.size(); ++i) {
      const PartitionStats& a = stats[i];
      const PartitionStats& e = h.partitions[i];
      if (a.partition != e.partition || a.records != e.records || a.min_offset != e.min_offset ||
          a.max_offset != e.max_offset) {
        return Corrupt(absl::StrCat("partition ", e.partition, ": statistics differ from the rows"));
      }
    }
  }
  if (h.kind == FileKind::kSegment) {
    // A partition's ranges (several in a compacted segment, sorted and
    // disjoint) hold its records together: their rows sum to the records,
    // and the offsets lie within [first start, last end).
    const std::vector<PartitionRange>& ranges = h.metadata.provenance.ranges;
    for (size_t i = 0; i < ranges.size();) {
      size_t j = i + 1;
      int64_t rows = ranges[i].rows;
      for (; j < ranges.size() && ranges[j].partition == ranges[i].partition; ++j) {
        if (ranges[j].start_offset < ranges[j - 1].end_offset) {
          return Corrupt(absl::StrCat("partition ", ranges[i].partition,
                                      ": provenance ranges unsorted or overlapping"));
        }
        rows += ranges[j].rows;
      }
      const PartitionRange& r = ranges[i];
      auto it = std::find_if(h.partitions.begin(), h.partitions.end(),
                             [&](const PartitionStats& p) { return p.partition == r.partition; });
      const int64_t records = it == h.partitions.end() ? 0 : it->records;
      if (rows != records) {
        return Corrupt(absl::StrCat("provenance of partition ", r.partition, " says ", rows,
                                    " rows, the statistics say ", records));
      }
      if (it != h.partitions.end() &&
          (it->min_offset < r.start_offset || it->max_offset >= ranges[j - 1].end_offset)) {
        return Corrupt(absl::StrCat("partition ", r.partition,
                                    ": offsets outside the provenance range"));
      }
      i = j;
    }
    // Every bitmap must hold exactly the rows with its id: the rows of each
    // id by a counting sort (ascending within an id), compared with the
    // bitmap's decoded rows, in buffers reused across ids. One dimension's
    // ids at a time, decoded again from its blocks (holding every
    // dimension's took 4 bytes per row and dimension: 20 MB for a 500k-row
    // segment of 10 dimensions).
    std::vector<uint32_t> start, rows, decoded, column;
    for (size_t d = 0; d < dims; ++d) {
      const uint64_t ids = columns_[1 + d].cardinality + 1;
      column.resize(h.num_rows);
      for (size_t b = 0; b < num_blocks_; ++b) {
        const uint64_t first = static_cast<uint64_t>(b) * h.rows_per_block;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(h.rows_per_block, h.num_rows - first));
        if (absl::Status s = ReadColumnBlock(1 + d, b, n, &scratch_); !s.ok()) return s;
        if (!DecodeIds(scratch_, n, static_cast<uint32_t>(columns_[1 + d].cardinality),
                       column.data() + first)) {
          return Corrupt(absl::StrCat("column \"", h.dimensions[d], "\" block ", b,
                                      ": values do not decode"));
        }
      }
      start.assign(ids + 1, 0);
      for (uint32_t id : column) {
        if (id >= ids) return Corrupt(absl::StrCat("an id of \"", h.dimensions[d], "\" beyond its dictionary"));
        ++start[id + 1];
      }
      for (uint64_t id = 1; id <= ids; ++id) start[id] += start[id - 1];
      rows.resize(column.size());
      {
        std::vector<uint32_t> next(start.begin(), start.end() - 1);
        for (uint32_t row = 0; row < column.size(); ++row) rows[next[column[row]]++] = row;
      }
      for (uint64_t id = 0; id < ids; ++id) {
        decoded.clear();
        if (absl::Status s = AppendBitmapRows(d, static_cast<uint32_t>(id), &decoded); !s.ok()) {
          return s;
        }
        const size_t n = start[id + 1] - start[id];
        if (decoded.size() != n ||
            (n > 0 && std::memcmp(decoded.data(), rows.data() + start[id], n * sizeof(uint32_t)) != 0)) {
          return Corrupt(absl::StrCat("bitmap ", id, " of \"", h.dimensions[d],
                                      "\" does not match the rows"));
        }
        if (id > 0 && n == 0) {
          return Corrupt(absl::StrCat("dictionary value ", id, " of \"", h.dimensions[d],
                                      "\" is used by no row"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> RowCursor::Next() {
  if (started_ && index_ + 1 < block_.rows) {
    ++index_;
    return true;
  }
  while (next_block_ < reader_->num_blocks()) {
    if (absl::Status s = reader_->ReadBlock(next_block_++, &block_); !s.ok()) return s;
    started_ = true;
    index_ = 0;
    if (block_.rows > 0) return true;
  }
  return false;
}

double RowCursor::double_metric(size_t m) const {
  if (!block_.exact[m].empty()) return block_.exact[m][index_].Round();
  return block_.doubles[m][index_];
}

}  // namespace segment
}  // namespace sluice
