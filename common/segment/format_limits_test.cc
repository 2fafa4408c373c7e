// The writer, the reader and the parser agree on the format's limits: a row
// at every limit parses, is written and reads back; a row past one is a
// VALUE_TOO_LARGE parse error; the writer refuses what the reader would
// refuse; and the codecs never exceed the expansion the reader allows.
#include "common/segment/format_limits.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/segment/column_codec.h"
#include "common/segment/incremental_index.h"
#include "common/segment/row_parser.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/segment_verify.h"
#include "common/segment/segment_writer.h"
#include "common/segment/spill.h"

namespace sluice {
namespace segment {
namespace {

constexpr int64_t kStart = 1796004000000;  // 2026-11-30T02:00Z
constexpr int64_t kHour = 3600 * 1000;

Schema DiscoverSchema() {
  Schema s;
  s.metrics = {{MetricType::kCount, "count", ""}};
  return s;
}

std::string TestPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

std::string Array(size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) absl::StrAppend(&out, i == 0 ? "" : ",", "\"a\"");
  return out + "]";
}

std::string Record(int64_t time, const std::string& field, const std::string& json_value) {
  return absl::StrCat(R"({"timestamp":)", time, R"(,")", field, R"(":)", json_value, "}");
}

// Parses each record, adds the good ones to one index, builds a segment.
struct Built {
  std::vector<ParseError> errors;
  absl::StatusOr<SegmentInfo> info = absl::UnknownError("not built");
};

Built ParseAndBuild(const std::vector<std::string>& records, const std::string& path,
                    Compression compression = Compression::kZstd) {
  Built out;
  const Schema schema = DiscoverSchema();
  auto parser = RowParser::Create(schema);
  auto index = IncrementalIndex::Create({schema, Interval{kStart, kStart + kHour}});
  EXPECT_TRUE(parser.ok() && index.ok());
  int64_t offset = 0;
  for (const std::string& record : records) {
    InputRow row;
    ParseError e = (*parser)->Parse(record, &row);
    out.errors.push_back(e);
    if (e.ok()) {
      absl::Status added = (*index)->Add(row, 0, offset);
      EXPECT_TRUE(added.ok()) << added;
    }
    ++offset;
  }
  BuildOptions build;
  build.path = path;
  build.schema = schema;
  build.compression = compression;
  build.metadata = {"wiki", Interval{kStart, kStart + kHour}, "v1", 0, "wiki_seg_v1_0",
                    Provenance{"wiki", {{0, 0, offset, 0}}}};
  build.live_index = index->get();
  out.info = BuildSegment(build);
  return out;
}

TEST(FormatLimits, ValuesAtEveryLimitAreWrittenAndReadBack) {
  const std::string big(kMaxValueBytes, 'H');  // compresses far beyond 1024x
  const std::vector<std::string> records = {
      Record(kStart, "page", absl::StrCat("\"", big, "\"")),
      Record(kStart + 1, "channel", Array(kMaxValuesPerRow)),
      Record(kStart + 2, "page", "\"small\""),
  };
  for (Compression c : {Compression::kZstd, Compression::kLz4, Compression::kNone}) {
    SCOPED_TRACE(CompressionName(c));
    const std::string path = TestPath(absl::StrCat("at_limits_", static_cast<int>(c), ".sluice"));
    Built built = ParseAndBuild(records, path, c);
    for (const ParseError& e : built.errors) EXPECT_TRUE(e.ok()) << e.message;
    ASSERT_TRUE(built.info.ok()) << built.info.status();
    EXPECT_EQ(built.info->num_rows, 3u);
    auto reader = SegmentReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    ASSERT_TRUE((*reader)->Verify().ok());
    const int page = (*reader)->DimensionIndex("page");
    ASSERT_GE(page, 0);
    ASSERT_EQ((*reader)->dictionary(page).size(), 2u);
    EXPECT_EQ((*reader)->dictionary(page)[0], big);
    const int channel = (*reader)->DimensionIndex("channel");
    ASSERT_GE(channel, 0);
    EXPECT_EQ((*reader)->dictionary(channel)[0], Array(kMaxValuesPerRow));
  }
}

TEST(FormatLimits, ValuesPastALimitAreValueTooLarge) {
  auto parser = RowParser::Create(DiscoverSchema());
  ASSERT_TRUE(parser.ok());
  InputRow row;
  // One byte past the value limit, as a string and as raw JSON.
  ParseError e = (*parser)->Parse(
      Record(kStart, "page", absl::StrCat("\"", std::string(kMaxValueBytes + 1, 'H'), "\"")),
      &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  EXPECT_STREQ(ParseErrorKindName(e.kind), "VALUE_TOO_LARGE");
  EXPECT_NE(e.message.find("\"page\""), std::string::npos) << e.message;
  e = (*parser)->Parse(Record(kStart, "obj", absl::StrCat(R"({"k":")",
                                                          std::string(kMaxValueBytes, 'x'),
                                                          R"("})")),
                       &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  // 3 MiB.
  e = (*parser)->Parse(
      Record(kStart, "page", absl::StrCat("\"", std::string(3 << 20, 'H'), "\"")), &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  // One element past the multi-value limit, and 10,000.
  e = (*parser)->Parse(Record(kStart, "channel", Array(kMaxValuesPerRow + 1)), &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  e = (*parser)->Parse(Record(kStart, "channel", Array(10000)), &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  // Values each within the limit, together past the row limit.
  std::string many = absl::StrCat(R"({"timestamp":)", kStart);
  const std::string value(kMaxValueBytes, 'v');
  for (size_t i = 0; i <= kMaxRowValueBytes / kMaxValueBytes; ++i) {
    absl::StrAppend(&many, ",\"d", i, "\":\"", value, "\"");
  }
  many += "}";
  e = (*parser)->Parse(many, &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  // More discovered dimensions than a file may have.
  std::string wide = absl::StrCat(R"({"timestamp":)", kStart);
  for (size_t i = 0; i <= kMaxDimensions; ++i) absl::StrAppend(&wide, ",\"f", i, "\":1");
  wide += "}";
  e = (*parser)->Parse(wide, &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  // The parser is fine afterwards.
  e = (*parser)->Parse(Record(kStart, "page", "\"ok\""), &row);
  EXPECT_TRUE(e.ok()) << e.message;
}

TEST(FormatLimits, ListedDimensionsHaveTheSameLimits) {
  Schema s = DiscoverSchema();
  s.dimensions = {"page"};
  auto parser = RowParser::Create(s);
  ASSERT_TRUE(parser.ok());
  InputRow row;
  ParseError e = (*parser)->Parse(
      Record(kStart, "page", absl::StrCat("\"", std::string(kMaxValueBytes + 1, 'H'), "\"")),
      &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  e = (*parser)->Parse(Record(kStart, "page", Array(kMaxValuesPerRow + 1)), &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge) << e.message;
  // A field that is not a dimension is not limited (it is skipped).
  e = (*parser)->Parse(Record(kStart, "other", Array(kMaxValuesPerRow + 1)), &row);
  EXPECT_TRUE(e.ok()) << e.message;
}

TEST(FormatLimits, WriterRefusesWhatTheReaderWouldRefuse) {
  FileHeader h;
  h.metadata.interval = {kStart, kStart + kHour};
  h.schema = DiscoverSchema();
  h.dimensions = {"page"};
  const std::string too_long(kMaxValueBytes + 1, 'x');
  const std::string path = TestPath("refused.sluice");
  auto writer = SegmentWriter::Create(path, h, {{too_long}});
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument) << writer.status();
  EXPECT_NE(writer.status().message().find("limit"), std::string::npos) << writer.status();
  h.dimensions.clear();
  for (size_t i = 0; i <= kMaxDimensions; ++i) h.dimensions.push_back(absl::StrCat("d", i));
  writer = SegmentWriter::Create(path, h,
                                 std::vector<std::vector<absl::string_view>>(h.dimensions.size()));
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument) << writer.status();
}

// Runs that hold more dimensions together than a file may have (which the
// per-segment bound on discovered names keeps from happening) are refused by
// the merge at once, before any dictionary is merged, with a reason that says
// building again cannot help.
TEST(FormatLimits, AMergePastTheDimensionLimitIsRefusedAtOnce) {
  const size_t per_run = kMaxDimensions / 2 + 1;  // two runs: one name too many
  std::vector<std::string> spills;
  for (int run = 0; run < 2; ++run) {
    IndexOptions options;
    options.schema = DiscoverSchema();
    options.interval = {kStart, kStart + kHour};
    options.segment_dimensions = std::make_shared<SegmentDimensions>(kMaxDimensions);
    auto index = IncrementalIndex::Create(options);
    ASSERT_TRUE(index.ok()) << index.status();
    std::vector<std::string> names;
    for (size_t i = 0; i < per_run; ++i) names.push_back(absl::StrCat("r", run, "_", i));
    InputRow row;
    row.timestamp_ms = kStart;
    row.metrics.resize(1);
    for (const std::string& name : names) row.discovered.emplace_back(name, "v");
    ASSERT_TRUE((*index)->Add(row, 0, run).ok());
    SpillOptions spill;
    spill.directory = std::getenv("TEST_TMPDIR");
    spill.name = absl::StrCat("wide", run);
    auto written = PersistIndex(index->get(), spill);
    ASSERT_TRUE(written.ok()) << written.status();
    spills.push_back(written->path);
    auto dims = ReadSpillDimensions(written->path);
    ASSERT_TRUE(dims.ok()) << dims.status();
    EXPECT_EQ(dims->size(), per_run);
  }
  BuildOptions build;
  build.path = TestPath("too_wide.sluice");
  build.schema = DiscoverSchema();
  build.metadata.datasource = "wiki";
  build.metadata.interval = {kStart, kStart + kHour};
  build.metadata.version = "v1";
  build.metadata.segment_id = "wiki_too_wide";
  build.metadata.provenance.topic = "wiki";
  PartitionRange range;
  range.partition = 0;
  range.start_offset = 0;
  range.end_offset = 2;
  build.metadata.provenance.ranges.push_back(range);
  build.spill_paths = spills;
  auto built = BuildSegment(build);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), absl::StatusCode::kFailedPrecondition) << built.status();
  EXPECT_NE(built.status().message().find("cannot be built"), std::string::npos) << built.status();
}

// The expansion bound the reader applies holds for the most compressible
// input each codec gets (a run of one byte; zstd -1 turns 64 MiB of it into
// 2287 bytes, 29000x, LZ4 into 263423, 254.8x: the LZ4 bound is tight).
TEST(FormatLimits, CodecsStayWithinTheExpansionBound) {
  for (Compression c : {Compression::kZstd, Compression::kLz4}) {
    for (size_t n : {size_t{1}, size_t{1000}, size_t{1} << 17, size_t{3} << 20, size_t{64} << 20}) {
      const std::string raw(n, 'H');
      BlockCompressor compressor(c, 1);
      std::string stored;
      ASSERT_TRUE(compressor.Compress(raw, &stored).ok());
      EXPECT_LE(raw.size(), MaxDecompressedSize(c, stored.size()))
          << CompressionName(c) << " " << n << " -> " << stored.size();
    }
  }
}

TEST(FormatLimits, DictionaryBoundCoversTheValues) {
  EXPECT_GE(MaxDictionaryBytes(1), 1 + 3 + kMaxValueBytes);
  EXPECT_EQ(MaxDictionaryBytes(uint64_t{1} << 40), kMaxDictionaryBytes);
  EXPECT_LE(MaxDictionaryBytes(5000), kMaxDictionaryBytes);
}

TEST(FormatLimits, VerifySegmentFileComparesWhatWasPublished) {
  const std::string path = TestPath("verify.sluice");
  Built built = ParseAndBuild({Record(kStart, "page", "\"a\""), Record(kStart + 5, "page", "\"b\"")},
                              path);
  ASSERT_TRUE(built.info.ok()) << built.info.status();
  ExpectedSegment expected;
  expected.segment_id = "wiki_seg_v1_0";
  expected.num_rows = 2;
  expected.size_bytes = static_cast<int64_t>(built.info->size_bytes);
  expected.checksum = built.info->checksum;
  EXPECT_TRUE(VerifySegmentFile(path, expected).ok());
  ExpectedSegment wrong = expected;
  wrong.num_rows = 3;
  absl::Status s = VerifySegmentFile(path, wrong);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  wrong = expected;
  wrong.checksum = "crc32c:00000000";
  EXPECT_EQ(VerifySegmentFile(path, wrong).code(), absl::StatusCode::kDataLoss);
  wrong = expected;
  wrong.segment_id = "other";
  EXPECT_EQ(VerifySegmentFile(path, wrong).code(), absl::StatusCode::kDataLoss);
  wrong = expected;
  wrong.size_bytes += 1;
  EXPECT_EQ(VerifySegmentFile(path, wrong).code(), absl::StatusCode::kDataLoss);
  // Unset fields are not compared.
  EXPECT_TRUE(VerifySegmentFile(path, ExpectedSegment()).ok());
  EXPECT_EQ(VerifySegmentFile(TestPath("missing.sluice"), expected).code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
