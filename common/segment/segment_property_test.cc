// Property-based round trips, seeded: generated rows -> JSON -> parser ->
// index -> spills -> segment file -> reader must give exactly the reference
// rollup of the rows the limits admit, and a row past a limit must be a
// VALUE_TOO_LARGE parse error. Generated cases cover values up to and past
// the limits (format_limits.h), repetition, unicode, invalid UTF-8 and NUL
// bytes (through the index: JSON cannot carry them), arrays (multi-values),
// many dimensions (listed and discovered), the extreme timestamps of the
// format and extreme numbers. A failure prints the seed; replay it with
// --gtest_filter=*Seed* and SLUICE_PROPERTY_SEED=<seed>.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/segment/format_limits.h"
#include "common/segment/incremental_index.h"
#include "common/segment/row_parser.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/segment_verify.h"
#include "common/segment/spill.h"
#include "common/segment/test_rows.h"
#include "common/segment/timestamp.h"

namespace sluice {
namespace segment {
namespace {

using testing::OutputRow;
using testing::OwnedRow;
using testing::ReadRows;
using testing::ReferenceRows;
using testing::ToInputRow;

constexpr int64_t kHourMs = 3600 * 1000;

std::string TempDir(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

// A generated dimension value and how it is written in JSON.
struct Value {
  std::string text;        // what the parser must produce (and the file hold)
  std::string json;        // how the record writes it
  size_t array_elements = 0;
};

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out + "\"";
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool OneIn(uint64_t n) { return Below(n) == 0; }

  // Valid UTF-8 text: repeated from a small pool, unicode, escapes, control
  // characters, empty, and now and then long or at/past the value limit.
  std::string Text(bool allow_huge) {
    static const char* const kPool[] = {"", "a", "Main", "Café", "日本語", "emoji 🎉",
                                        "quote \"x\"", "back\\slash", "tab\tnew\nline",
                                        "\x01\x1f", "Ελληνικά", "#en.wikipedia"};
    if (allow_huge && OneIn(40)) {
      // At the limit, one past it, or just long; runs of one byte compress
      // beyond any heuristic ratio.
      const size_t sizes[] = {kMaxValueBytes, kMaxValueBytes + 1, kMaxValueBytes - 1,
                              100000 + Below(100000)};
      const size_t n = sizes[Below(4)];
      return OneIn(2) ? std::string(n, 'H') : RandomAscii(n);
    }
    if (OneIn(8)) return RandomUnicode(1 + Below(64));
    return absl::StrCat(kPool[Below(12)], OneIn(3) ? absl::StrCat("-", Below(20)) : "");
  }

  // Any bytes at all: invalid UTF-8, NUL, lone surrogates' encodings.
  std::string Bytes() {
    std::string s(Below(24), '\0');
    for (char& c : s) c = static_cast<char>(Below(256));
    if (OneIn(4)) s = std::string("\xff\xfe\xed\xa0\x80", 5) + s;
    return s;
  }

  Value DimValue(bool allow_huge) {
    Value v;
    if (OneIn(12)) {
      // An array: raw JSON text, up to and past the multi-value limit.
      const size_t sizes[] = {0, 1, 3, kMaxValuesPerRow, kMaxValuesPerRow + 1, 20};
      v.array_elements = sizes[Below(6)];
      std::string json = "[";
      for (size_t i = 0; i < v.array_elements; ++i) {
        absl::StrAppend(&json, i == 0 ? "" : ",", OneIn(2) ? JsonString(Text(false)) : "7");
      }
      json += "]";
      v.text = v.json = json;
      return v;
    }
    if (OneIn(15)) {
      // Numbers and booleans keep their JSON text.
      const char* const kLiterals[] = {"0", "-0", "12.50", "1e308", "true", "false",
                                       "-9223372036854775808", "18446744073709551616"};
      v.text = v.json = kLiterals[Below(8)];
      return v;
    }
    v.text = Text(allow_huge);
    v.json = JsonString(v.text);
    return v;
  }

  int64_t Long() {
    switch (Below(8)) {
      case 0: return std::numeric_limits<int64_t>::max();
      case 1: return std::numeric_limits<int64_t>::min();
      case 2: return 0;
      default: return static_cast<int64_t>(rng_()) >> Below(64);
    }
  }

  double Double() {
    switch (Below(14)) {
      case 0: return std::numeric_limits<double>::max();
      case 1: return -std::numeric_limits<double>::max();
      case 2: return std::numeric_limits<double>::denorm_min();
      case 3: return -0.0;
      case 4: return std::numeric_limits<double>::infinity();
      case 5: return -std::numeric_limits<double>::infinity();
      case 6: return std::numeric_limits<double>::quiet_NaN();
      case 7: return 1e16;
      case 8: return std::ldexp(static_cast<double>(Below(1 << 20)), -static_cast<int>(Below(1074)));
      default: return (static_cast<double>(Below(2000001)) - 1000000) / 64;
    }
  }

  std::string RandomAscii(size_t n) {
    std::string s(n, 'x');
    for (char& c : s) c = static_cast<char>(' ' + Below(95));
    return s;
  }

  std::string RandomUnicode(size_t n) {
    static const char* const kChars[] = {"é", "ß", "日", "本", "🎉", "𝄞", "Ж", "a", "\\", "\""};
    std::string s;
    for (size_t i = 0; i < n; ++i) s += kChars[Below(10)];
    return s;
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

Schema MakeSchema(Generator& g, bool discover, size_t listed_dims) {
  Schema s;
  s.timestamp_column = "ts";
  s.timestamp_format = TimestampFormat::kMillis;
  if (!discover) {
    for (size_t i = 0; i < listed_dims; ++i) s.dimensions.push_back(absl::StrCat("d", i));
  }
  s.dimension_exclusions = {"ignored"};
  s.metrics = {{MetricType::kCount, "count", ""},
               {MetricType::kLongSum, "added", "added"},
               {MetricType::kDoubleSum, "delta", "delta"},
               {MetricType::kLongMin, "added_min", "added"},
               {MetricType::kLongMax, "added_max", "added"},
               {MetricType::kDoubleMin, "delta_min", "delta"},
               {MetricType::kDoubleMax, "delta_max", "delta"}};
  const Granularity::Unit units[] = {Granularity::Unit::kNone, Granularity::Unit::kMinute,
                                     Granularity::Unit::kHour};
  s.query_granularity = Granularity(units[g.Below(3)]);
  s.rollup = !g.OneIn(3);
  return s;
}

// An hour at the format's extremes or in between.
Interval MakeInterval(Generator& g) {
  switch (g.Below(4)) {
    case 0: return {kMinTimestampMs, kMinTimestampMs + kHourMs};
    case 1: return {kMaxTimestampMs + 1 - kHourMs, kMaxTimestampMs + 1};
    case 2: return {-kHourMs, 0};
    default: return {1796004000000, 1796004000000 + kHourMs};
  }
}

std::string DoubleJson(double d) {
  if (std::isnan(d)) return "\"NaN\"";
  if (std::isinf(d)) return d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  if (d == 0 && std::signbit(d)) return "-0.0";
  std::string s = absl::StrFormat("%.17g", d);
  return s;
}

// One generated record: the row it stands for, its JSON, and whether the
// limits admit it.
struct Case {
  OwnedRow row;
  std::string json;
  bool within_limits = true;
};

Case MakeRecord(Generator& g, const Schema& schema, const Interval& interval,
                const std::vector<std::string>& discover_names, bool allow_huge) {
  Case c;
  OwnedRow& row = c.row;
  const int64_t span = interval.end_ms - interval.start_ms;
  switch (g.Below(6)) {
    case 0: row.time = interval.start_ms; break;
    case 1: row.time = interval.end_ms - 1; break;
    default: row.time = interval.start_ms + static_cast<int64_t>(g.Below(span)); break;
  }
  std::vector<std::string> fields;
  fields.push_back(absl::StrCat("\"ts\":", row.time));
  size_t row_bytes = 0;
  auto admit = [&](const Value& v) {
    if (v.text.size() > kMaxValueBytes || v.array_elements > kMaxValuesPerRow) {
      c.within_limits = false;
    }
    row_bytes += v.text.size();
    if (row_bytes > kMaxRowValueBytes) c.within_limits = false;
  };
  if (schema.discover_dimensions()) {
    const size_t n = g.Below(std::min<size_t>(discover_names.size(), 12) + 1);
    for (size_t i = 0; i < n; ++i) {
      const std::string& name = discover_names[g.Below(discover_names.size())];
      if (g.OneIn(10)) {
        fields.push_back(absl::StrCat(JsonString(name), ":null"));
        // null: absent, and it does not erase an earlier value.
        continue;
      }
      Value v = g.DimValue(allow_huge);
      admit(v);
      fields.push_back(absl::StrCat(JsonString(name), ":", v.json));
      row.discovered.emplace_back(name, v.text);
    }
    if (g.OneIn(5)) fields.push_back(R"("ignored":"x")");
  } else {
    row.dims.resize(schema.dimensions.size());
    for (size_t d = 0; d < schema.dimensions.size(); ++d) {
      if (g.OneIn(3)) continue;  // missing
      if (g.OneIn(10)) {
        fields.push_back(absl::StrCat("\"", schema.dimensions[d], "\":null"));
        continue;
      }
      Value v = g.DimValue(allow_huge);
      admit(v);
      fields.push_back(absl::StrCat("\"", schema.dimensions[d], "\":", v.json));
      row.dims[d] = v.text;
    }
  }
  row.metrics.resize(schema.metrics.size());
  if (!g.OneIn(8)) {
    const int64_t added = g.Long();
    fields.push_back(absl::StrCat("\"added\":", added));
    for (size_t m = 0; m < schema.metrics.size(); ++m) {
      if (schema.metrics[m].field == "added") row.metrics[m] = {true, added, 0};
    }
  }
  if (!g.OneIn(8)) {
    const double delta = g.Double();
    fields.push_back(absl::StrCat("\"delta\":", DoubleJson(delta)));
    for (size_t m = 0; m < schema.metrics.size(); ++m) {
      if (schema.metrics[m].field == "delta") row.metrics[m] = {true, 0, delta};
    }
  }
  // Fields in any order.
  std::shuffle(fields.begin(), fields.end(), g.rng());
  c.json = "{";
  for (size_t i = 0; i < fields.size(); ++i) absl::StrAppend(&c.json, i ? "," : "", fields[i]);
  c.json += "}";
  return c;
}

// The discovered values the reference expects: a repeated name keeps its
// last value (already so in `discovered`), nothing else to adjust.

struct Built {
  absl::StatusOr<SegmentInfo> info = absl::UnknownError("not built");
  std::string path;
};

// Adds `rows` to an index, persisting at random points, and builds.
Built BuildFrom(const std::vector<OwnedRow>& rows, const Schema& schema, const Interval& interval,
                Generator& g, const std::string& name, int partitions) {
  Built out;
  const std::string dir = TempDir(name);
  std::string cmd = absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'");
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  auto index = IncrementalIndex::Create({schema, interval});
  EXPECT_TRUE(index.ok()) << index.status();
  std::vector<std::string> spills;
  for (const OwnedRow& row : rows) {
    absl::Status added = (*index)->Add(ToInputRow(row, schema), row.partition, row.offset);
    EXPECT_TRUE(added.ok()) << added;
    if (!(*index)->empty() && g.OneIn(40)) {
      SpillOptions options;
      options.directory = dir;
      options.name = absl::StrCat("spill-", spills.size());
      auto spill = PersistIndex(index->get(), options);
      if (!spill.ok()) {
        // Spills are files of the same format: the caller checks the refusal.
        out.info = spill.status();
        return out;
      }
      spills.push_back(spill->path);
    }
  }
  BuildOptions build;
  out.path = absl::StrCat(dir, "/segment.sluice");
  build.path = out.path;
  build.schema = schema;
  build.metadata.datasource = "prop";
  build.metadata.interval = interval;
  build.metadata.version = "v1";
  build.metadata.segment_id = absl::StrCat("prop_", name);
  build.metadata.provenance.topic = "t";
  for (int p = 0; p < partitions; ++p) {
    build.metadata.provenance.ranges.push_back({p, 0, 1 << 30, 0});
  }
  build.spill_paths = spills;
  build.live_index = index->get();
  build.rows_per_block = g.OneIn(2) ? 8192 : static_cast<uint32_t>(1 + g.Below(64));
  out.info = BuildSegment(build);
  return out;
}

// Checks the file against the reference; "" when it matches.
void ExpectSegmentHolds(const Built& built, const std::vector<OutputRow>& expected) {
  if (expected.empty()) {
    // Nothing to write: the build says so instead of writing an empty file.
    EXPECT_EQ(built.info.status().code(), absl::StatusCode::kFailedPrecondition)
        << built.info.status();
    return;
  }
  ASSERT_TRUE(built.info.ok()) << built.info.status();
  ExpectedSegment e;
  e.num_rows = static_cast<int64_t>(expected.size());
  e.size_bytes = static_cast<int64_t>(built.info->size_bytes);
  e.checksum = built.info->checksum;
  absl::Status verified = VerifySegmentFile(built.path, e);
  ASSERT_TRUE(verified.ok()) << verified;
  auto reader = SegmentReader::Open(built.path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const std::vector<OutputRow> actual = ReadRows(reader->get());
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_TRUE(actual[i] == expected[i])
        << "row " << i << ": " << testing::ToString(actual[i]).substr(0, 300) << "\nexpected "
        << testing::ToString(expected[i]).substr(0, 300);
  }
}

std::vector<std::string> DiscoverNames(Generator& g, size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    switch (g.Below(5)) {
      case 0: names.push_back(absl::StrCat("é", i)); break;
      case 1: names.push_back(absl::StrCat("q\"", i)); break;  // an escaped key
      case 2: names.push_back(absl::StrCat("a_long_field_name_for_the_cache_", i)); break;
      default: names.push_back(absl::StrCat("f", i)); break;
    }
  }
  return names;
}

// JSON -> parser -> index -> segment -> reader.
void RunParserCase(uint64_t seed) {
  SCOPED_TRACE(absl::StrCat("seed ", seed, " (SLUICE_PROPERTY_SEED=", seed, ")"));
  Generator g(seed);
  const bool discover = g.OneIn(2);
  const size_t listed = 1 + g.Below(g.OneIn(5) ? 300 : 6);
  const Schema schema = MakeSchema(g, discover, listed);
  const Interval interval = MakeInterval(g);
  const std::vector<std::string> names = DiscoverNames(g, 1 + g.Below(g.OneIn(4) ? 400 : 10));
  const int partitions = 1 + static_cast<int>(g.Below(3));
  const bool allow_huge = g.OneIn(4);
  const size_t n = g.Below(allow_huge ? 40 : 400);
  auto parser = RowParser::Create(schema);
  ASSERT_TRUE(parser.ok()) << parser.status();
  std::vector<OwnedRow> accepted;
  std::vector<int64_t> next_offset(partitions, 0);
  for (size_t i = 0; i < n; ++i) {
    Case c = MakeRecord(g, schema, interval, names, allow_huge);
    c.row.partition = static_cast<int32_t>(g.Below(partitions));
    c.row.offset = next_offset[c.row.partition]++;
    InputRow parsed;
    ParseError e = (*parser)->Parse(c.json, &parsed);
    if (!c.within_limits) {
      ASSERT_EQ(e.kind, ParseErrorKind::kValueTooLarge)
          << "record " << i << " is beyond the limits: " << e.message << "\n"
          << c.json.substr(0, 200);
      continue;
    }
    ASSERT_TRUE(e.ok()) << "record " << i << ": " << ParseErrorKindName(e.kind) << ": "
                        << e.message << "\n" << c.json.substr(0, 300);
    ASSERT_EQ(parsed.timestamp_ms, c.row.time);
    accepted.push_back(std::move(c.row));
  }
  const std::vector<OutputRow> expected = ReferenceRows(accepted, schema);
  Built built = BuildFrom(accepted, schema, interval, g, absl::StrCat("parser-", seed), partitions);
  ExpectSegmentHolds(built, expected);
}

// Rows handed to the index directly: any bytes, NUL and invalid UTF-8
// included, and values past the value limit, which the writer must refuse.
void RunBytesCase(uint64_t seed) {
  SCOPED_TRACE(absl::StrCat("seed ", seed, " (SLUICE_PROPERTY_SEED=", seed, ")"));
  Generator g(seed);
  const bool discover = g.OneIn(2);
  const Schema schema = MakeSchema(g, discover, 1 + g.Below(8));
  const Interval interval = MakeInterval(g);
  const int partitions = 1 + static_cast<int>(g.Below(3));
  const bool too_large = g.OneIn(6);
  const size_t n = 1 + g.Below(300);
  std::vector<OwnedRow> rows;
  std::vector<int64_t> next_offset(partitions, 0);
  for (size_t i = 0; i < n; ++i) {
    OwnedRow row;
    row.time = interval.start_ms + static_cast<int64_t>(g.Below(interval.end_ms - interval.start_ms));
    auto value = [&]() -> std::string {
      return g.OneIn(3) ? g.Text(false) : g.Bytes();
    };
    if (discover) {
      for (size_t k = g.Below(5); k > 0; --k) {
        std::string name = g.Bytes();
        if (name.empty()) name = "x";
        row.discovered.emplace_back(name, value());
      }
    } else {
      for (size_t d = 0; d < schema.dimensions.size(); ++d) {
        if (g.OneIn(4)) {
          row.dims.push_back(std::nullopt);
        } else {
          row.dims.push_back(value());
        }
      }
    }
    row.metrics.resize(schema.metrics.size());
    for (size_t m = 0; m < schema.metrics.size(); ++m) {
      if (g.OneIn(5)) continue;
      row.metrics[m].present = true;
      row.metrics[m].long_value = g.Long();
      row.metrics[m].double_value = g.Double();
    }
    // The same input for metrics of one field, as the parser gives.
    for (size_t m = 0; m < schema.metrics.size(); ++m) {
      for (size_t k = 0; k < m; ++k) {
        if (schema.metrics[k].field == schema.metrics[m].field) row.metrics[m] = row.metrics[k];
      }
    }
    row.partition = static_cast<int32_t>(g.Below(partitions));
    row.offset = next_offset[row.partition]++;
    rows.push_back(std::move(row));
  }
  if (too_large) {
    OwnedRow& victim = rows[g.Below(rows.size())];
    const std::string huge(kMaxValueBytes + 1 + g.Below(10), 'Z');
    if (discover) {
      victim.discovered.emplace_back("huge", huge);
    } else {
      victim.dims[0] = huge;
    }
  }
  // Discovered names sorted as the file holds them: the reference needs
  // names that compare as bytes (absl::string_view order), which they are.
  const std::vector<OutputRow> expected = ReferenceRows(rows, schema);
  Built built = BuildFrom(rows, schema, interval, g, absl::StrCat("bytes-", seed), partitions);
  if (too_large) {
    // Refused rather than written: the reader would refuse the file.
    EXPECT_EQ(built.info.status().code(), absl::StatusCode::kInvalidArgument)
        << built.info.status();
    EXPECT_NE(built.info.status().message().find("limit"), std::string::npos)
        << built.info.status();
    return;
  }
  ExpectSegmentHolds(built, expected);
}

uint64_t BaseSeed() {
  const char* env = std::getenv("SLUICE_PROPERTY_SEED");
  return env == nullptr ? 20261201 : std::strtoull(env, nullptr, 10);
}

int Cases() {
  const char* env = std::getenv("SLUICE_PROPERTY_CASES");
  return env == nullptr ? 60 : std::atoi(env);
}

TEST(SegmentProperty, ParserRoundTripsWhatTheLimitsAdmit) {
  const uint64_t base = BaseSeed();
  for (int i = 0; i < Cases(); ++i) {
    RunParserCase(base + i);
    if (HasFatalFailure()) return;
  }
}

TEST(SegmentProperty, IndexRoundTripsAnyBytesAndTheWriterRefusesPastTheLimits) {
  const uint64_t base = BaseSeed() * 7919;
  for (int i = 0; i < Cases(); ++i) {
    RunBytesCase(base + i);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace segment
}  // namespace sluice
