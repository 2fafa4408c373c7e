#include "tools/segment/inspect.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/time_util.h"

namespace sluice {
namespace tools {
namespace {

using segment::ColumnEntry;
using segment::FileHeader;
using segment::SegmentReader;

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(absl::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t min;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

}  // namespace

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
      ++i;
      continue;
    }
    const size_t n = Utf8Length(s, i);
    if (n == 0) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  out += "\"";
  return out;
}

std::string JsonDouble(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, result.ptr);
}

absl::Status DumpJsonLines(SegmentReader* reader, const DumpOptions& options, std::ostream& out) {
  const FileHeader& h = reader->header();
  std::vector<std::string> dim_keys, metric_keys;
  for (const std::string& d : h.dimensions) dim_keys.push_back(JsonString(d) + ":");
  for (const auto& m : h.schema.metrics) metric_keys.push_back(JsonString(m.name) + ":");
  segment::RowCursor cursor(reader);
  uint64_t printed = 0;
  std::string line;
  while (options.limit == 0 || printed < options.limit) {
    absl::StatusOr<bool> more = cursor.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    line = absl::StrCat("{\"__time\":\"", FormatIsoInstant(cursor.time()), "\"");
    for (size_t d = 0; d < dim_keys.size(); ++d) {
      const std::optional<absl::string_view> v = cursor.dimension(d);
      absl::StrAppend(&line, ",", dim_keys[d], v.has_value() ? JsonString(*v) : "null");
    }
    for (size_t m = 0; m < metric_keys.size(); ++m) {
      if (segment::IsLongMetric(h.schema.metrics[m].type)) {
        absl::StrAppend(&line, ",", metric_keys[m], cursor.long_metric(m));
      } else {
        absl::StrAppend(&line, ",", metric_keys[m], JsonDouble(cursor.double_metric(m)));
      }
    }
    const segment::DecodedBlock& block = cursor.block();
    if (!block.partitions.empty()) {
      absl::StrAppend(&line, ",\"__partition\":", block.partitions[cursor.index_in_block()],
                      ",\"__offset\":", block.offsets[cursor.index_in_block()]);
    }
    line += "}\n";
    out << line;
    ++printed;
  }
  return absl::OkStatus();
}

void PrintStats(const std::string& path, SegmentReader* reader, std::ostream& out) {
  const FileHeader& h = reader->header();
  const segment::SegmentMetadata& m = h.metadata;
  out << "file:        " << path << "\n";
  out << "kind:        " << segment::FileKindName(h.kind) << " (format v" << segment::kFormatVersion
      << "), " << reader->file_size() << " bytes, " << reader->checksum() << "\n";
  if (h.kind == segment::FileKind::kSegment) {
    out << "segment:     " << m.segment_id << "\n";
    out << "datasource:  " << m.datasource << ", version " << m.version << ", partition "
        << m.partition_num << "\n";
  }
  out << "interval:    " << FormatIsoInstant(m.interval.start_ms) << "/"
      << FormatIsoInstant(m.interval.end_ms) << "\n";
  out << "rows:        " << h.num_rows << " (from " << h.input_records << " input records)";
  if (h.num_rows > 0) {
    out << ", __time " << FormatIsoInstant(h.min_time) << " .. " << FormatIsoInstant(h.max_time);
  }
  out << "\n";
  out << "schema:      timestamp \"" << h.schema.timestamp_column << "\" ("
      << segment::TimestampFormatName(h.schema.timestamp_format) << "), query granularity "
      << h.schema.query_granularity.Name() << ", rollup " << (h.schema.rollup ? "on" : "off")
      << ", dimensions " << (h.schema.discover_dimensions() ? "discovered" : "listed") << "\n";
  out << "storage:     " << segment::CompressionName(h.compression) << ", " << h.rows_per_block
      << " rows per block, " << reader->num_blocks() << " blocks\n";
  if (h.kind == segment::FileKind::kSegment) {
    out << "provenance:  topic " << JsonString(m.provenance.topic) << "\n";
    for (const segment::PartitionRange& r : m.provenance.ranges) {
      out << "  partition " << r.partition << ": offsets [" << r.start_offset << ", "
          << r.end_offset << "), " << r.rows << " rows\n";
    }
  } else {
    out << "records:\n";
    for (const segment::PartitionStats& p : h.partitions) {
      out << "  partition " << p.partition << ": " << p.records << " records, offsets "
          << p.min_offset << ".." << p.max_offset << "\n";
    }
    if (!h.caller_metadata.empty()) out << "metadata:    " << JsonString(h.caller_metadata) << "\n";
  }
  out << "columns:\n";
  const std::vector<ColumnEntry>& columns = reader->columns();
  for (size_t c = 0; c < columns.size(); ++c) {
    const ColumnEntry& col = columns[c];
    std::string detail;
    if (col.role == segment::ColumnRole::kDimension) {
      detail = absl::StrCat("cardinality ", col.cardinality, ", dictionary ",
                            col.dictionary.stored_size, " B");
      if (col.bitmaps_size > 0) absl::StrAppend(&detail, ", bitmaps ", col.bitmaps_size, " B");
    } else if (col.role == segment::ColumnRole::kMetric) {
      const int metric = reader->MetricIndex(col.name);
      detail = segment::MetricTypeName(h.schema.metrics[metric].type);
      if (!h.schema.metrics[metric].field.empty()) {
        absl::StrAppend(&detail, " of \"", h.schema.metrics[metric].field, "\"");
      }
    }
    out << absl::StrFormat("  %-20s %-10s %-8s %10d B  %s\n", col.name,
                           segment::ColumnRoleName(col.role), segment::ValueTypeName(col.type),
                           reader->ColumnBytes(c), detail);
  }
}

absl::Status VerifyFile(const std::string& path, std::ostream& out) {
  absl::StatusOr<std::unique_ptr<SegmentReader>> reader = SegmentReader::Open(path);
  if (!reader.ok()) return reader.status();
  if (absl::Status s = (*reader)->Verify(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  }
  out << "OK " << path << ": " << segment::FileKindName((*reader)->header().kind) << ", "
      << (*reader)->num_rows() << " rows, " << (*reader)->file_size() << " bytes, "
      << (*reader)->checksum() << "\n";
  return absl::OkStatus();
}

}  // namespace tools
}  // namespace sluice
