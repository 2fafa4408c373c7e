#include "common/segment/row_transform.h"

#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/segment/row_parser.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace segment {
namespace {

constexpr char kPath[] = "dataSchema.transformSpec";

sluice::v1::TransformSpec Spec(const std::string& text) {
  sluice::v1::TransformSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

std::string CreateError(const std::string& text, absl::string_view timestamp_column = "ts") {
  absl::StatusOr<RowTransform> t = RowTransform::Create(Spec(text), kPath, timestamp_column);
  if (t.ok()) return "OK";
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(t.status().message());
}

std::unique_ptr<RowParser> MakeParser(const Schema& schema, const std::string& spec) {
  absl::StatusOr<RowTransform> t = RowTransform::Create(Spec(spec), kPath, schema.timestamp_column);
  EXPECT_TRUE(t.ok()) << t.status();
  absl::StatusOr<std::unique_ptr<RowParser>> p = RowParser::Create(schema, *t);
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

Schema ListedSchema() {
  Schema s;
  s.timestamp_column = "ts";
  s.timestamp_format = TimestampFormat::kMillis;
  s.dimensions = {"page", "lang", "day"};
  s.metrics = {{MetricType::kCount, "count", ""}, {MetricType::kLongSum, "added", "added"}};
  return s;
}

TEST(RowTransformTest, RefusesBadSpecsNamingThePath) {
  EXPECT_EQ(CreateError(R"pb(transforms { type: "regex" name: "a" expression: "b" })pb"),
            "dataSchema.transformSpec.transforms[0].type: unknown transform type \"regex\"; "
            "only \"expression\"");
  EXPECT_EQ(CreateError(R"pb(transforms { name: "a" expression: "b" })pb"),
            "dataSchema.transformSpec.transforms[0].type: required; only \"expression\"");
  EXPECT_EQ(CreateError(R"pb(transforms { type: "expression" expression: "b" })pb"),
            "dataSchema.transformSpec.transforms[0].name: required");
  EXPECT_EQ(CreateError(R"pb(transforms { type: "expression" name: "a" expression: "b" }
                             transforms { type: "expression" name: "a" expression: "c" })pb"),
            "dataSchema.transformSpec.transforms[1].name: \"a\" is the name of an earlier "
            "transform");
  EXPECT_EQ(CreateError(R"pb(transforms { type: "expression" name: "a" expression: "lower(b" })pb"),
            "dataSchema.transformSpec.transforms[0].expression: expected ')', got the end at "
            "column 8");
  EXPECT_EQ(CreateError(R"pb(transforms { type: "expression" name: "ts" expression: "t2" }
                             transforms { type: "expression" name: "d"
                                          expression: "timestamp_format(__time)" })pb"),
            "dataSchema.transformSpec.transforms[1].expression: reads __time, but a transform "
            "replaces the timestamp column \"ts\"");
  EXPECT_EQ(CreateError(R"pb(filter { type: "bound" dimension: "x" })pb"),
            "dataSchema.transformSpec.filter.lower: a \"bound\" filter needs lower or upper (or "
            "both)");
  std::string many;
  for (int i = 0; i <= kMaxTransforms; ++i) {
    absl::StrAppend(&many, "transforms { type: \"expression\" name: \"t", i, "\" expression: \"a\" } ");
  }
  EXPECT_EQ(CreateError(many),
            "dataSchema.transformSpec.transforms: at most 256 transforms (got 257)");
  EXPECT_EQ(CreateError(""), "OK");
  EXPECT_TRUE(RowTransform::Create(Spec(""), kPath, "ts")->empty());
}

TEST(RowTransformTest, DerivedDimensionsReplaceFieldsAndReadInputs) {
  std::unique_ptr<RowParser> parser = MakeParser(ListedSchema(), R"pb(
    transforms { type: "expression" name: "page" expression: "lower(page)" }
    transforms { type: "expression" name: "lang" expression: "concat(\"user.lang\", '-', page)" }
    transforms { type: "expression" name: "day" expression: "timestamp_format(__time, 'yyyy-MM-dd')" }
  )pb");
  InputRow row;
  ParseError e = parser->Parse(
      R"({"ts": 1796311700045, "page": "Main_Page", "user.lang": "en", "added": 5})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_FALSE(row.thrown_away);
  EXPECT_EQ(row.timestamp_ms, 1796311700045);
  ASSERT_EQ(row.dims.size(), 3u);
  EXPECT_EQ(row.dims[0].text, "main_page");
  EXPECT_EQ(row.dims[1].text, "en-Main_Page");  // transforms read inputs, not outputs
  EXPECT_EQ(row.dims[2].text, "2026-12-03");
  EXPECT_TRUE(row.metrics[1].present);
  EXPECT_EQ(row.metrics[1].long_value, 5);

  // A null input makes concat null; the field's own value is not used.
  e = parser->Parse(R"({"ts": 1796311700045, "page": "X"})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(row.dims[0].text, "x");
  EXPECT_FALSE(row.dims[1].present);
  e = parser->Parse(R"({"ts": 1796311700045, "lang": "kept?", "user.lang": "fr"})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_FALSE(row.dims[0].present);
  EXPECT_FALSE(row.dims[1].present);  // concat(..., null page)
}

TEST(RowTransformTest, FilterThrowsAwayRowsOnTransformedValues) {
  std::unique_ptr<RowParser> parser = MakeParser(ListedSchema(), R"pb(
    transforms { type: "expression" name: "page" expression: "lower(page)" }
    filter {
      type: "and"
      fields { type: "in" dimension: "page" values: [ "main", "talk" ] }
      fields { type: "not" field { type: "selector" dimension: "robot" value: "true" } }
      fields { type: "bound" dimension: "__time" ordering: "numeric" lower: "1000" }
    }
  )pb");
  InputRow row;
  ASSERT_TRUE(parser->Parse(R"({"ts": 5000, "page": "MAIN", "robot": false})", &row).ok());
  EXPECT_FALSE(row.thrown_away);
  EXPECT_EQ(row.dims[0].text, "main");
  ASSERT_TRUE(parser->Parse(R"({"ts": 5000, "page": "Talk"})", &row).ok());
  EXPECT_FALSE(row.thrown_away);
  ASSERT_TRUE(parser->Parse(R"({"ts": 5000, "page": "main", "robot": true})", &row).ok());
  EXPECT_TRUE(row.thrown_away);
  ASSERT_TRUE(parser->Parse(R"({"ts": 5000, "page": "other"})", &row).ok());
  EXPECT_TRUE(row.thrown_away);
  ASSERT_TRUE(parser->Parse(R"({"ts": 999, "page": "main"})", &row).ok());
  EXPECT_TRUE(row.thrown_away);
  // Still a parse error when it does not parse, whatever the filter says.
  ParseError e = parser->Parse(R"({"page": "other"})", &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kNoTimestamp);
  e = parser->Parse(R"({"ts": 5000, "page": "other", "added": "x"})", &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kBadNumber);
}

TEST(RowTransformTest, TransformsFeedTheTimestampAndMetrics) {
  Schema s = ListedSchema();
  s.timestamp_format = TimestampFormat::kAuto;
  std::unique_ptr<RowParser> parser = MakeParser(s, R"pb(
    transforms { type: "expression" name: "ts" expression: "concat(date, 'T', time, 'Z')" }
    transforms { type: "expression" name: "added" expression: "substring(raw, 1, -1)" }
  )pb");
  InputRow row;
  ParseError e = parser->Parse(
      R"({"date": "2026-12-03", "time": "15:28:20", "raw": "+42", "ts": "ignored"})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(row.timestamp_ms, 1796311700000);
  EXPECT_EQ(row.metrics[1].long_value, 42);
  e = parser->Parse(R"({"date": "2026-12-03", "raw": "+1"})", &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kNoTimestamp);
  EXPECT_EQ(e.message, "the timestamp column \"ts\" (a transform) is null");
  e = parser->Parse(R"({"date": "someday", "time": "x", "raw": "+1"})", &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kBadTimestamp);
  e = parser->Parse(R"({"date": "2026-12-03", "time": "15:28:20", "raw": "+abc"})", &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kBadNumber);
  EXPECT_EQ(e.message, "metric \"added\" (transform \"added\"): not a number: \"abc\"");
  // A null metric input contributes nothing.
  e = parser->Parse(R"({"date": "2026-12-03", "time": "15:28:20"})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_FALSE(row.metrics[1].present);
}

TEST(RowTransformTest, TimeTransformSetsTheRowTime) {
  std::unique_ptr<RowParser> parser = MakeParser(ListedSchema(), R"pb(
    transforms { type: "expression" name: "__time" expression: "event_ms" }
  )pb");
  InputRow row;
  ParseError e = parser->Parse(R"({"ts": 1, "event_ms": 1796311700045})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(row.timestamp_ms, 1796311700045);
  e = parser->Parse(R"({"ts": 1, "event_ms": "soon"})", &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kBadTimestamp);
}

TEST(RowTransformTest, DiscoveredDimensionsIncludeTransformOutputs) {
  Schema s;
  s.timestamp_column = "ts";
  s.metrics = {{MetricType::kLongSum, "sum", "n"}};
  std::unique_ptr<RowParser> parser = MakeParser(s, R"pb(
    transforms { type: "expression" name: "a" expression: "upper(a)" }
    transforms { type: "expression" name: "b" expression: "concat(a, '!')" }
    transforms { type: "expression" name: "n" expression: "n" }
  )pb");
  InputRow row;
  ParseError e = parser->Parse(R"({"ts": 1796311700045, "a": "x", "c": "y", "n": 3})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  std::map<std::string, std::string> dims;
  for (const auto& [name, value] : row.discovered) dims[std::string(name)] = std::string(value);
  EXPECT_EQ(dims, (std::map<std::string, std::string>{{"a", "X"}, {"b", "x!"}, {"c", "y"}}));
  EXPECT_EQ(row.metrics[0].long_value, 3);
}

TEST(RowTransformTest, RuntimeFailuresYieldNull) {
  std::unique_ptr<RowParser> parser = MakeParser(ListedSchema(), R"pb(
    transforms { type: "expression" name: "day" expression: "timestamp_format(when)" }
  )pb");
  InputRow row;
  ParseError e = parser->Parse(R"({"ts": 1, "when": "not a number"})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_FALSE(row.dims[2].present);
  e = parser->Parse(R"({"ts": 1, "when": 0})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(row.dims[2].text, "1970-01-01T00:00:00.000Z");
}

// The peak resident size of this process (VmHWM), in bytes.
size_t PeakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// An expression that would build 100 MB from a 50 KB field is a
// VALUE_TOO_LARGE parse error as its value passes the limit, never built,
// whatever the output is used for (here only the filter reads it).
TEST(RowTransformTest, AnExpressionCannotBuildPastTheValueLimit) {
  std::string expression = "concat(a";
  for (int i = 1; i < 2000; ++i) expression += ",a";
  expression += ")";
  std::unique_ptr<RowParser> parser = MakeParser(
      ListedSchema(),
      absl::StrCat(R"pb(transforms { type: "expression" name: "big" expression: ")pb", expression,
                   R"pb(" } filter { type: "selector" dimension: "big" value: "x" })pb"));
  const std::string record = absl::StrCat(R"({"ts": 1, "a": ")", std::string(50000, 'x'), "\"}");
  const size_t peak_before = PeakResidentBytes();
  InputRow row;
  ParseError e = parser->Parse(record, &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge);
  EXPECT_EQ(e.message,
            "transform \"big\": concat builds a value of more than 1048576 bytes (the limit)");
  EXPECT_LT(PeakResidentBytes(), peak_before + (size_t{32} << 20));
  // The parser goes on with the next record (2000 bytes, not "x": thrown away).
  e = parser->Parse(R"({"ts": 1, "a": "x"})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_TRUE(row.thrown_away);
}

TEST(RowTransformTest, WithoutTransformSpecNothingChanges) {
  absl::StatusOr<std::unique_ptr<RowParser>> plain = RowParser::Create(ListedSchema());
  ASSERT_TRUE(plain.ok());
  InputRow row;
  ASSERT_TRUE((*plain)->Parse(R"({"ts": 7, "page": "Main", "extra": 1})", &row).ok());
  EXPECT_FALSE(row.thrown_away);
  EXPECT_EQ(row.dims[0].text, "Main");
}

}  // namespace
}  // namespace segment
}  // namespace sluice
