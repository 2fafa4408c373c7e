#include "common/segment/format.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/segment/byte_io.h"

namespace sluice {
namespace segment {
namespace {

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupt segment file: ", what));
}

bool ReadInt32(ByteReader* r, int32_t* out) {
  int64_t v;
  if (!r->VarintSigned(&v) || v < INT32_MIN || v > INT32_MAX) return false;
  *out = static_cast<int32_t>(v);
  return true;
}

// A count of items that each take at least `min_item_bytes` bytes.
bool ReadCount(ByteReader* r, size_t min_item_bytes, uint64_t limit, uint64_t* out) {
  uint64_t n;
  if (!r->Count(limit, &n)) return false;
  if (n > r->remaining() / min_item_bytes) return false;
  *out = n;
  return true;
}

void PutBlockRef(std::string* out, const BlockRef& ref) {
  PutVarint64(out, ref.offset);
  PutVarint64(out, ref.stored_size);
  PutVarint64(out, ref.raw_size);
}

bool ReadBlockRef(ByteReader* r, BlockRef* ref) {
  return r->Varint64(&ref->offset) && r->Varint64(&ref->stored_size) &&
         r->Varint64(&ref->raw_size);
}

}  // namespace

const char* FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kSegment: return "segment";
    case FileKind::kSpill: return "spill";
  }
  return "unknown";
}

const char* ColumnRoleName(ColumnRole role) {
  switch (role) {
    case ColumnRole::kTime: return "time";
    case ColumnRole::kDimension: return "dimension";
    case ColumnRole::kMetric: return "metric";
    case ColumnRole::kPartition: return "partition";
    case ColumnRole::kOffset: return "offset";
  }
  return "unknown";
}

const char* ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kLong: return "long";
    case ValueType::kDouble: return "double";
    case ValueType::kString: return "string";
    case ValueType::kExactSum: return "exactSum";
  }
  return "unknown";
}

ValueType MetricValueType(FileKind kind, bool rollup, MetricType type) {
  if (IsLongMetric(type)) return ValueType::kLong;
  if (type == MetricType::kDoubleSum && kind == FileKind::kSpill && rollup) {
    return ValueType::kExactSum;
  }
  return ValueType::kDouble;
}

std::string EncodeHeader(const FileHeader& h) {
  std::string f;
  f.push_back(static_cast<char>(h.kind));
  f.push_back(static_cast<char>(h.compression));
  PutFixed32(&f, h.rows_per_block);
  PutFixed64(&f, h.num_rows);
  PutFixed64(&f, h.input_records);
  PutFixed64(&f, static_cast<uint64_t>(h.min_time));
  PutFixed64(&f, static_cast<uint64_t>(h.max_time));
  const SegmentMetadata& m = h.metadata;
  PutString(&f, m.datasource);
  PutVarintSigned(&f, m.interval.start_ms);
  PutVarintSigned(&f, m.interval.end_ms);
  PutString(&f, m.version);
  PutVarintSigned(&f, m.partition_num);
  PutString(&f, m.segment_id);
  PutString(&f, m.provenance.topic);
  PutVarint64(&f, m.provenance.ranges.size());
  for (const PartitionRange& r : m.provenance.ranges) {
    PutVarintSigned(&f, r.partition);
    PutVarintSigned(&f, r.start_offset);
    PutVarintSigned(&f, r.end_offset);
    PutVarintSigned(&f, r.rows);
  }
  const Schema& s = h.schema;
  PutString(&f, s.timestamp_column);
  f.push_back(static_cast<char>(s.timestamp_format));
  PutString(&f, s.query_granularity.Name());
  f.push_back(s.rollup ? 1 : 0);
  PutVarint64(&f, s.dimensions.size());
  for (const std::string& d : s.dimensions) PutString(&f, d);
  PutVarint64(&f, s.dimension_exclusions.size());
  for (const std::string& d : s.dimension_exclusions) PutString(&f, d);
  PutVarint64(&f, s.metrics.size());
  for (const MetricSpec& metric : s.metrics) {
    f.push_back(static_cast<char>(metric.type));
    PutString(&f, metric.name);
    PutString(&f, metric.field);
  }
  PutVarint64(&f, h.dimensions.size());
  for (const std::string& d : h.dimensions) PutString(&f, d);
  PutVarint64(&f, h.partitions.size());
  for (const PartitionStats& p : h.partitions) {
    PutVarintSigned(&f, p.partition);
    PutVarintSigned(&f, p.records);
    PutVarintSigned(&f, p.min_offset);
    PutVarintSigned(&f, p.max_offset);
  }
  PutString(&f, h.caller_metadata);

  std::string out(kHeaderMagic, 8);
  PutFixed32(&out, kFormatVersion);
  PutFixed32(&out, static_cast<uint32_t>(f.size()));
  out += f;
  return out;
}

absl::Status DecodeHeaderFields(absl::string_view fields, FileHeader* out) {
  ByteReader r(fields);
  FileHeader h;
  uint8_t kind, compression, rollup, format;
  uint64_t u;
  if (!r.Byte(&kind) || (kind != 1 && kind != 2)) return Corrupt("header: file kind");
  h.kind = static_cast<FileKind>(kind);
  if (!r.Byte(&compression) || compression > 2) return Corrupt("header: compression");
  h.compression = static_cast<Compression>(compression);
  if (!r.Fixed32(&h.rows_per_block) || h.rows_per_block == 0 ||
      h.rows_per_block > kMaxRowsPerBlock) {
    return Corrupt("header: rows per block");
  }
  if (!r.Fixed64(&h.num_rows) || h.num_rows > kMaxRows) {
    return Corrupt("header: row count");
  }
  if (!r.Fixed64(&h.input_records) || h.input_records < h.num_rows) {
    return Corrupt("header: input record count");
  }
  if (!r.Fixed64(&u)) return Corrupt("header: min time");
  h.min_time = static_cast<int64_t>(u);
  if (!r.Fixed64(&u)) return Corrupt("header: max time");
  h.max_time = static_cast<int64_t>(u);
  SegmentMetadata& m = h.metadata;
  if (!r.String(&m.datasource) || !r.VarintSigned(&m.interval.start_ms) ||
      !r.VarintSigned(&m.interval.end_ms) || !r.String(&m.version) ||
      !ReadInt32(&r, &m.partition_num) || !r.String(&m.segment_id)) {
    return Corrupt("header: segment metadata");
  }
  if (m.interval.start_ms >= m.interval.end_ms) return Corrupt("header: empty interval");
  uint64_t n;
  if (!r.String(&m.provenance.topic) || !ReadCount(&r, 4, 1 << 20, &n)) {
    return Corrupt("header: provenance");
  }
  m.provenance.ranges.resize(n);
  for (PartitionRange& pr : m.provenance.ranges) {
    if (!ReadInt32(&r, &pr.partition) || !r.VarintSigned(&pr.start_offset) ||
        !r.VarintSigned(&pr.end_offset) || !r.VarintSigned(&pr.rows)) {
      return Corrupt("header: provenance range");
    }
  }
  Schema& s = h.schema;
  std::string granularity;
  if (!r.String(&s.timestamp_column) || !r.Byte(&format) || format > 5) {
    return Corrupt("header: timestamp spec");
  }
  s.timestamp_format = static_cast<TimestampFormat>(format);
  if (!r.String(&granularity)) return Corrupt("header: query granularity");
  absl::StatusOr<Granularity> g = Granularity::Parse(granularity);
  if (!g.ok()) return Corrupt("header: query granularity");
  s.query_granularity = *g;
  if (!r.Byte(&rollup) || rollup > 1) return Corrupt("header: rollup flag");
  s.rollup = rollup == 1;
  if (!ReadCount(&r, 1, kMaxDimensions, &n)) return Corrupt("header: dimension count");
  s.dimensions.resize(n);
  for (std::string& d : s.dimensions) {
    if (!r.String(&d)) return Corrupt("header: dimension name");
  }
  if (!ReadCount(&r, 1, 1 << 20, &n)) return Corrupt("header: exclusion count");
  s.dimension_exclusions.resize(n);
  for (std::string& d : s.dimension_exclusions) {
    if (!r.String(&d)) return Corrupt("header: exclusion name");
  }
  if (!ReadCount(&r, 3, kMaxMetrics, &n)) return Corrupt("header: metric count");
  s.metrics.resize(n);
  for (MetricSpec& metric : s.metrics) {
    uint8_t type;
    if (!r.Byte(&type) || type > 6 || !r.String(&metric.name) || !r.String(&metric.field)) {
      return Corrupt("header: metric");
    }
    metric.type = static_cast<MetricType>(type);
  }
  if (absl::Status v = ValidateSchema(s); !v.ok()) {
    return Corrupt(absl::StrCat("header: schema: ", v.message()));
  }
  if (!ReadCount(&r, 1, kMaxDimensions, &n)) return Corrupt("header: column dimension count");
  h.dimensions.resize(n);
  for (std::string& d : h.dimensions) {
    if (!r.String(&d) || d.empty()) return Corrupt("header: column dimension name");
  }
  if (!ReadCount(&r, 4, 1 << 20, &n)) return Corrupt("header: partition count");
  h.partitions.resize(n);
  for (PartitionStats& p : h.partitions) {
    if (!ReadInt32(&r, &p.partition) || !r.VarintSigned(&p.records) ||
        !r.VarintSigned(&p.min_offset) || !r.VarintSigned(&p.max_offset)) {
      return Corrupt("header: partition statistics");
    }
  }
  if (!r.String(&h.caller_metadata)) return Corrupt("header: caller metadata");
  if (!r.empty()) return Corrupt("header: bytes left over");
  *out = std::move(h);
  return absl::OkStatus();
}

std::string EncodeDirectory(const std::vector<ColumnEntry>& columns) {
  std::string out;
  PutVarint64(&out, columns.size());
  for (const ColumnEntry& c : columns) {
    out.push_back(static_cast<char>(c.role));
    PutString(&out, c.name);
    out.push_back(static_cast<char>(c.type));
    out.push_back(static_cast<char>(c.encoding));
    if (c.role == ColumnRole::kDimension) {
      PutBlockRef(&out, c.dictionary);
      PutVarint64(&out, c.cardinality);
      PutVarint64(&out, c.bitmaps_offset);
      PutVarint64(&out, c.bitmaps_size);
    }
    PutVarint64(&out, c.blocks.size());
    for (const BlockRef& b : c.blocks) PutBlockRef(&out, b);
  }
  return out;
}

absl::Status DecodeDirectory(absl::string_view bytes, std::vector<ColumnEntry>* out) {
  ByteReader r(bytes);
  uint64_t n;
  if (!ReadCount(&r, 5, kMaxDimensions + kMaxMetrics + 3, &n)) {
    return Corrupt("directory: column count");
  }
  std::vector<ColumnEntry> columns(n);
  for (ColumnEntry& c : columns) {
    uint8_t role, type;
    if (!r.Byte(&role) || role < 1 || role > 5) return Corrupt("directory: column role");
    c.role = static_cast<ColumnRole>(role);
    if (!r.String(&c.name)) return Corrupt("directory: column name");
    if (!r.Byte(&type) || type < 1 || type > 4) return Corrupt("directory: value type");
    c.type = static_cast<ValueType>(type);
    if (!r.Byte(&c.encoding) || c.encoding > 2) return Corrupt("directory: encoding");
    if (c.role == ColumnRole::kDimension) {
      if (!ReadBlockRef(&r, &c.dictionary) || !r.Varint64(&c.cardinality) ||
          !r.Varint64(&c.bitmaps_offset) || !r.Varint64(&c.bitmaps_size)) {
        return Corrupt("directory: dimension");
      }
    }
    uint64_t blocks;
    if (!ReadCount(&r, 3, uint64_t{1} << 40, &blocks)) return Corrupt("directory: block count");
    c.blocks.resize(blocks);
    for (BlockRef& b : c.blocks) {
      if (!ReadBlockRef(&r, &b)) return Corrupt("directory: block");
    }
  }
  if (!r.empty()) return Corrupt("directory: bytes left over");
  *out = std::move(columns);
  return absl::OkStatus();
}

std::string EncodeTrailer(uint64_t directory_offset, uint64_t directory_size, uint32_t crc) {
  std::string out;
  PutFixed64(&out, directory_offset);
  PutFixed64(&out, directory_size);
  PutFixed32(&out, 0);
  PutFixed32(&out, crc);
  out.append(kTrailerMagic, 8);
  return out;
}

}  // namespace segment
}  // namespace sluice
