#include "task/raw_row_engine.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "google/protobuf/util/json_util.h"
#include "simdjson.h"

namespace sluice::task {
namespace {

constexpr char kSpillMagic[] = "SLRAWSP1";
constexpr size_t kSpillMagicSize = 8;
constexpr char kSegmentMagic[] = "SLUICE-RAW-SEGMENT 1\n";

enum class TimeFormat { kAuto, kIso, kMillis, kPosix, kMicros, kNanos };

absl::StatusOr<TimeFormat> ParseTimeFormat(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower.empty() || lower == "auto") return TimeFormat::kAuto;
  if (lower == "iso") return TimeFormat::kIso;
  if (lower == "millis") return TimeFormat::kMillis;
  if (lower == "posix") return TimeFormat::kPosix;
  if (lower == "micros") return TimeFormat::kMicros;
  if (lower == "nanos") return TimeFormat::kNanos;
  return absl::InvalidArgumentError(
      absl::StrCat("dataSchema.timestampSpec.format \"", name, "\" is not one of auto, iso, "
                   "millis, posix, micros, nanos"));
}

// Epoch number in the unit of `format` -> millis. False if out of range.
bool NumberToMillis(double number, TimeFormat format, int64_t* ms) {
  double millis;
  switch (format) {
    case TimeFormat::kAuto:
      millis = std::fabs(number) >= 1e11 ? number : number * 1000.0;
      break;
    case TimeFormat::kMillis:
      millis = number;
      break;
    case TimeFormat::kPosix:
      millis = number * 1000.0;
      break;
    case TimeFormat::kMicros:
      millis = number / 1000.0;
      break;
    case TimeFormat::kNanos:
      millis = number / 1e6;
      break;
    default:
      return false;
  }
  if (!std::isfinite(millis) || std::fabs(millis) > 9.2e15) return false;
  *ms = static_cast<int64_t>(std::floor(millis));
  return true;
}

bool LooksNumeric(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '-' && c != '+' &&
        c != '.' && c != 'e' && c != 'E') {
      return false;
    }
  }
  return true;
}

class RawRow final : public ParsedRow {
 public:
  void Set(int64_t timestamp_ms, absl::string_view text) {
    timestamp_ms_ = timestamp_ms;
    text_ = text;
  }
  absl::string_view text() const { return text_; }

 private:
  absl::string_view text_;
};

class RawRowParser final : public RowParser {
 public:
  RawRowParser(std::string column, TimeFormat format, absl::flat_hash_set<std::string> numeric)
      : column_(std::move(column)), format_(format), numeric_fields_(std::move(numeric)) {}

  const ParsedRow* Parse(absl::string_view value, RowParseError* error) override {
    // simdjson reads up to SIMDJSON_PADDING bytes past the end.
    if (buffer_.size() < value.size() + simdjson::SIMDJSON_PADDING) {
      buffer_.resize(value.size() + simdjson::SIMDJSON_PADDING);
    }
    std::memcpy(buffer_.data(), value.data(), value.size());
    simdjson::padded_string_view json(buffer_.data(), value.size(), buffer_.size());
    simdjson::ondemand::document doc;
    if (parser_.iterate(json).get(doc) != simdjson::SUCCESS) {
      return Fail(error, "NOT_JSON", "not a JSON document");
    }
    simdjson::ondemand::object object;
    if (doc.get_object().get(object) != simdjson::SUCCESS) {
      return Fail(error, "NOT_JSON", "not a JSON object");
    }
    bool have_time = false;
    int64_t time_ms = 0;
    for (auto field_result : object) {
      simdjson::ondemand::field field;
      if (std::move(field_result).get(field) != simdjson::SUCCESS) {
        return Fail(error, "NOT_JSON", "malformed JSON object");
      }
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
        return Fail(error, "NOT_JSON", "malformed field name");
      }
      simdjson::ondemand::value field_value = field.value();
      if (absl::string_view(key.data(), key.size()) == column_) {
        const RowParseError* time_error = ParseTime(field_value, &time_ms);
        if (time_error != nullptr) {
          *error = *time_error;
          return nullptr;
        }
        have_time = true;
      } else if (!numeric_fields_.empty() && numeric_fields_.contains(absl::string_view(key.data(), key.size()))) {
        if (!IsNumberOrNull(field_value)) {
          return Fail(error, "BAD_NUMBER",
                      absl::StrCat("metric input \"", absl::string_view(key.data(), key.size()),
                                   "\" is not a number"));
        }
      } else {
        // Skipping a value checks its structure.
        simdjson::ondemand::json_type type;
        if (field_value.type().get(type) != simdjson::SUCCESS) {
          return Fail(error, "NOT_JSON", "malformed JSON value");
        }
      }
    }
    const char* location;
    if (doc.current_location().get(location) != simdjson::OUT_OF_BOUNDS) {
      return Fail(error, "NOT_JSON", "trailing data after the JSON object");
    }
    if (!have_time) {
      return Fail(error, "NO_TIMESTAMP", absl::StrCat("no \"", column_, "\" field"));
    }
    row_.Set(time_ms, value);
    return &row_;
  }

 private:
  const ParsedRow* Fail(RowParseError* error, const char* kind, std::string message) {
    error->kind = kind;
    error->message = std::move(message);
    return nullptr;
  }

  // nullptr on success.
  const RowParseError* ParseTime(simdjson::ondemand::value& value, int64_t* ms) {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS) {
      return SetTimeError("NOT_JSON", "malformed timestamp value");
    }
    if (type == simdjson::ondemand::json_type::null) {
      return SetTimeError("NO_TIMESTAMP", absl::StrCat("\"", column_, "\" is null"));
    }
    if (type == simdjson::ondemand::json_type::number) {
      if (format_ == TimeFormat::kIso) {
        return SetTimeError("BAD_TIMESTAMP", "timestamp is a number, format is iso");
      }
      double number;
      int64_t integer;
      if (format_ == TimeFormat::kMillis && value.get_int64().get(integer) == simdjson::SUCCESS) {
        *ms = integer;
        return nullptr;
      }
      if (value.get_double().get(number) != simdjson::SUCCESS ||
          !NumberToMillis(number, format_, ms)) {
        return SetTimeError("BAD_TIMESTAMP", "timestamp number out of range");
      }
      return nullptr;
    }
    if (type != simdjson::ondemand::json_type::string) {
      return SetTimeError("BAD_TIMESTAMP", "timestamp is neither a string nor a number");
    }
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) {
      return SetTimeError("NOT_JSON", "malformed timestamp string");
    }
    const absl::string_view view(text.data(), text.size());
    double number;
    if (format_ != TimeFormat::kIso && LooksNumeric(view) && absl::SimpleAtod(view, &number)) {
      if (!NumberToMillis(number, format_, ms)) {
        return SetTimeError("BAD_TIMESTAMP",
                            absl::StrCat("epoch timestamp \"", view.substr(0, 64),
                                         "\" out of range"));
      }
      return nullptr;
    }
    if (format_ != TimeFormat::kAuto && format_ != TimeFormat::kIso) {
      return SetTimeError("BAD_TIMESTAMP",
                          absl::StrCat("\"", view.substr(0, 64), "\" is not an epoch number"));
    }
    absl::StatusOr<int64_t> parsed = ParseIsoInstantMillis(view);
    if (!parsed.ok()) return SetTimeError("BAD_TIMESTAMP", std::string(parsed.status().message()));
    *ms = *parsed;
    return nullptr;
  }

  const RowParseError* SetTimeError(const char* kind, std::string message) {
    time_error_.kind = kind;
    time_error_.message = std::move(message);
    return &time_error_;
  }

  static bool IsNumberOrNull(simdjson::ondemand::value& value) {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS) return false;
    if (type == simdjson::ondemand::json_type::number ||
        type == simdjson::ondemand::json_type::null) {
      return true;
    }
    if (type != simdjson::ondemand::json_type::string) return false;
    std::string_view text;
    double number;
    return value.get_string().get(text) == simdjson::SUCCESS &&
           absl::SimpleAtod(absl::string_view(text.data(), text.size()), &number);
  }

  const std::string column_;
  const TimeFormat format_;
  const absl::flat_hash_set<std::string> numeric_fields_;
  simdjson::ondemand::parser parser_;
  std::string buffer_;
  RawRow row_;
  RowParseError time_error_;
};

struct RawEntry {
  int64_t time;
  std::string text;
  bool operator<(const RawEntry& other) const {
    return time != other.time ? time < other.time : text < other.text;
  }
};

void AppendFixed64(std::string* out, uint64_t v) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  out->append(buf, 8);
}
void AppendFixed32(std::string* out, uint32_t v) {
  char buf[4];
  std::memcpy(buf, &v, 4);
  out->append(buf, 4);
}

std::string Xxh64Hex(absl::string_view data) {
  return absl::StrFormat("%016x", XXH64(data.data(), data.size(), 0));
}

class RawIndex final : public SegmentIndex {
 public:
  absl::Status Add(const ParsedRow& row) override {
    const auto& raw = static_cast<const RawRow&>(row);
    entries_.push_back(RawEntry{raw.timestamp_ms(), std::string(raw.text())});
    bytes_ += static_cast<int64_t>(sizeof(RawEntry) + raw.text().size() + 16);
    return absl::OkStatus();
  }
  int64_t rows() const override { return static_cast<int64_t>(entries_.size()); }
  int64_t estimated_bytes() const override { return bytes_; }

  absl::StatusOr<int64_t> Spill(const std::string& path) override {
    std::sort(entries_.begin(), entries_.end());
    std::string out(kSpillMagic, kSpillMagicSize);
    for (const RawEntry& e : entries_) {
      AppendFixed64(&out, static_cast<uint64_t>(e.time));
      AppendFixed32(&out, static_cast<uint32_t>(e.text.size()));
      out += e.text;
    }
    const int64_t rows = static_cast<int64_t>(entries_.size());
    AppendFixed64(&out, static_cast<uint64_t>(rows));
    AppendFixed64(&out, XXH64(out.data(), out.size(), 0));
    SLUICE_RETURN_IF_ERROR(WriteFileAtomically(path, out));
    entries_.clear();
    entries_.shrink_to_fit();
    bytes_ = 0;
    return rows;
  }

 private:
  std::vector<RawEntry> entries_;
  int64_t bytes_ = 0;
};

absl::Status ReadSpill(const std::string& path, std::vector<RawEntry>* out) {
  SLUICE_ASSIGN_OR_RETURN(std::string data, ReadFile(path));
  auto damaged = [&path](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("spill ", path, " is damaged: ", why));
  };
  if (data.size() < kSpillMagicSize + 16 || data.compare(0, kSpillMagicSize, kSpillMagic) != 0) {
    return damaged("bad header");
  }
  uint64_t rows, checksum;
  std::memcpy(&rows, data.data() + data.size() - 16, 8);
  std::memcpy(&checksum, data.data() + data.size() - 8, 8);
  if (XXH64(data.data(), data.size() - 8, 0) != checksum) return damaged("checksum mismatch");
  size_t pos = kSpillMagicSize;
  const size_t end = data.size() - 16;
  for (uint64_t i = 0; i < rows; ++i) {
    if (end - pos < 12) return damaged("truncated row");
    uint64_t time;
    uint32_t len;
    std::memcpy(&time, data.data() + pos, 8);
    std::memcpy(&len, data.data() + pos + 8, 4);
    pos += 12;
    if (end - pos < len) return damaged("truncated row");
    out->push_back(RawEntry{static_cast<int64_t>(time), data.substr(pos, len)});
    pos += len;
  }
  if (pos != end) return damaged("trailing bytes");
  return absl::OkStatus();
}

class RawRowEngine final : public SegmentEngine {
 public:
  RawRowEngine(std::string column, TimeFormat format, absl::flat_hash_set<std::string> numeric)
      : column_(std::move(column)), format_(format), numeric_(std::move(numeric)) {}

  std::unique_ptr<RowParser> NewParser() override {
    return std::make_unique<RawRowParser>(column_, format_, numeric_);
  }
  std::unique_ptr<SegmentIndex> NewIndex(const v1::Interval&) override {
    return std::make_unique<RawIndex>();
  }

  absl::StatusOr<BuiltSegment> BuildSegment(const std::vector<std::string>& spills,
                                            const SegmentBuildInfo& info,
                                            const std::string& out_path) override {
    std::vector<RawEntry> entries;
    for (const std::string& spill : spills) SLUICE_RETURN_IF_ERROR(ReadSpill(spill, &entries));
    std::sort(entries.begin(), entries.end());
    v1::SegmentDescriptor header;
    header.set_id(info.segment_id);
    header.set_datasource(info.datasource);
    *header.mutable_interval() = info.interval;
    header.set_version(info.version);
    header.set_partition_num(info.partition_num);
    header.set_num_rows(static_cast<int64_t>(entries.size()));
    *header.mutable_provenance() = info.provenance;
    header.set_sequence_name(info.sequence_name);
    std::string header_json;
    if (!google::protobuf::util::MessageToJsonString(header, &header_json).ok()) {
      return absl::InternalError("cannot serialize a segment header");
    }
    std::string out = kSegmentMagic;
    out += header_json;
    out += '\n';
    for (const RawEntry& e : entries) {
      absl::StrAppend(&out, e.time, " ", e.text.size(), " ", e.text, "\n");
    }
    BuiltSegment built;
    built.checksum = absl::StrCat("xxh64:", Xxh64Hex(out));
    absl::StrAppend(&out, built.checksum, "\n");
    SLUICE_RETURN_IF_ERROR(WriteFileAtomically(out_path, out));
    built.rows = static_cast<int64_t>(entries.size());
    built.size_bytes = static_cast<int64_t>(out.size());
    return built;
  }

 private:
  const std::string column_;
  const TimeFormat format_;
  const absl::flat_hash_set<std::string> numeric_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SegmentEngine>> NewRawRowEngine(const v1::DataSchema& schema) {
  std::string column = schema.timestamp_spec().column();
  if (column.empty()) column = "timestamp";
  SLUICE_ASSIGN_OR_RETURN(TimeFormat format, ParseTimeFormat(schema.timestamp_spec().format()));
  absl::flat_hash_set<std::string> numeric;
  for (const v1::MetricSpec& metric : schema.metrics_spec()) {
    if (metric.type() == "count") continue;
    numeric.insert(metric.field_name().empty() ? metric.name() : metric.field_name());
  }
  return std::unique_ptr<SegmentEngine>(
      new RawRowEngine(std::move(column), format, std::move(numeric)));
}

absl::StatusOr<RawSegmentContents> ReadRawSegment(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string data, ReadFile(path));
  auto damaged = [&path](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("segment ", path, " is damaged: ", why));
  };
  const size_t magic = std::strlen(kSegmentMagic);
  if (data.compare(0, magic, kSegmentMagic) != 0) return damaged("bad header");
  // Trailer: the last line.
  if (data.size() < magic + 2 || data.back() != '\n') return damaged("no trailer");
  const size_t trailer_start = data.rfind('\n', data.size() - 2) + 1;
  RawSegmentContents contents;
  contents.checksum = data.substr(trailer_start, data.size() - 1 - trailer_start);
  const absl::string_view body(data.data(), trailer_start);
  if (contents.checksum != absl::StrCat("xxh64:", Xxh64Hex(body))) {
    return damaged("checksum mismatch");
  }
  size_t pos = magic;
  const size_t header_end = data.find('\n', pos);
  if (header_end == std::string::npos || header_end >= trailer_start) return damaged("no header");
  if (!google::protobuf::util::JsonStringToMessage(data.substr(pos, header_end - pos),
                                                   &contents.header)
           .ok()) {
    return damaged("bad header JSON");
  }
  pos = header_end + 1;
  while (pos < trailer_start) {
    const size_t sp1 = data.find(' ', pos);
    const size_t sp2 = sp1 == std::string::npos ? sp1 : data.find(' ', sp1 + 1);
    int64_t time;
    size_t len;
    if (sp2 == std::string::npos ||
        !absl::SimpleAtoi(absl::string_view(data).substr(pos, sp1 - pos), &time) ||
        !absl::SimpleAtoi(absl::string_view(data).substr(sp1 + 1, sp2 - sp1 - 1), &len) ||
        sp2 + 1 + len + 1 > trailer_start || data[sp2 + 1 + len] != '\n') {
      return damaged("bad row");
    }
    contents.rows.emplace_back(time, data.substr(sp2 + 1, len));
    pos = sp2 + 1 + len + 1;
  }
  if (static_cast<int64_t>(contents.rows.size()) != contents.header.num_rows()) {
    return damaged("row count differs from the header");
  }
  return contents;
}

}  // namespace sluice::task
