// What the row parser reads of a record and what it only skips: a field the
// spec does not use is checked for structure only (so a malformed value
// there does not fail the record) while the same value in a used field is a
// parse error of its class; the canonical ISO timestamp's fast path and the
// Kafka timestamp taken as a number give what the general paths give.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/segment/row_parser.h"

namespace sluice {
namespace segment {
namespace {

Schema ProjectedSchema() {
  Schema s;
  s.timestamp_column = "ts";
  s.timestamp_format = TimestampFormat::kIso;
  s.dimensions = {"d"};
  s.metrics = {{MetricType::kCount, "count", ""}, {MetricType::kLongSum, "m", "m"}};
  return s;
}

std::unique_ptr<RowParser> MakeParser(const Schema& schema) {
  auto parser = RowParser::Create(schema);
  EXPECT_TRUE(parser.ok()) << parser.status();
  return std::move(*parser);
}

struct Case {
  std::string field;  // ,"<name>":<value> spliced into a good record
  ParseErrorKind kind;
};

void Check(const std::vector<Case>& cases) {
  auto parser = MakeParser(ProjectedSchema());
  for (const Case& c : cases) {
    for (bool at_end : {false, true}) {
      // The field first or last: the parser caches keys by position.
      const std::string record =
          at_end ? R"({"ts":"2026-11-30T02:15:44.123Z","d":"a","m":7)" + c.field + "}"
                 : "{" + c.field.substr(1) + R"(,"ts":"2026-11-30T02:15:44.123Z","d":"a","m":7})";
      InputRow row;
      ParseError e = parser->Parse(record, &row);
      EXPECT_EQ(ParseErrorKindName(e.kind), std::string(ParseErrorKindName(c.kind)))
          << record << ": " << e.message;
    }
  }
}

// Not used by the spec: skipped, its structure checked, its content not.
TEST(RowParserProjection, AnUnusedFieldNeedNotBeWellFormedInside) {
  Check({
      {R"(,"x":tru)", ParseErrorKind::kNone},
      {R"(,"x":nul)", ParseErrorKind::kNone},
      {R"(,"x":"\q")", ParseErrorKind::kNone},
      {R"(,"x":"\ud800")", ParseErrorKind::kNone},
      {R"(,"x":01)", ParseErrorKind::kNone},
      {R"(,"x":1.e5)", ParseErrorKind::kNone},
      {R"(,"x":-)", ParseErrorKind::kNone},
      {R"(,"x":[1,{"y":nul},"\q"])", ParseErrorKind::kNone},
      {R"(,"x":{"y":tru,"z":[01]})", ParseErrorKind::kNone},
      {R"(,"x":"a very long string value that nobody reads, with \"escapes\" in it")",
       ParseErrorKind::kNone},
  });
}

// The same values in used fields: parse errors of their class (or, for a
// dimension, a number token taken as written).
TEST(RowParserProjection, AUsedFieldIsReadAndChecked) {
  Check({
      {R"(,"d":tru)", ParseErrorKind::kNotJson},
      {R"(,"d":nul)", ParseErrorKind::kNotJson},
      {R"(,"d":"\q")", ParseErrorKind::kNotJson},
      {R"(,"m":tru)", ParseErrorKind::kNotJson},
      {R"(,"m":"\q")", ParseErrorKind::kNotJson},
      {R"(,"m":"abc")", ParseErrorKind::kBadNumber},
      {R"(,"m":[1])", ParseErrorKind::kBadNumber},
      {R"(,"m":-)", ParseErrorKind::kBadNumber},
      {R"(,"m":1e400)", ParseErrorKind::kBadNumber},
      {R"(,"ts":tru)", ParseErrorKind::kNotJson},
      {R"(,"ts":"2026-11-30T02:15:44.123")", ParseErrorKind::kNone},
      {R"(,"ts":"2026-11-31T02:15:44.123Z")", ParseErrorKind::kBadTimestamp},
      {R"(,"ts":"2026-11-30T02:15:44.12aZ")", ParseErrorKind::kBadTimestamp},
      {R"(,"ts":1796004944123)", ParseErrorKind::kBadTimestamp},
  });
}

// What the whole record needs, used or not: valid structure and UTF-8.
TEST(RowParserProjection, StructureAndEncodingAreCheckedEverywhere) {
  Check({
      {R"(,"x":[1,2)", ParseErrorKind::kNotJson},
      {R"(,"x":{"y":1)", ParseErrorKind::kNotJson},
      {",\"x\":\"\x01\"", ParseErrorKind::kNotJson},
      {",\"x\":\"\xff\xfe\"", ParseErrorKind::kNotJson},
      {R"(,"x":1 2)", ParseErrorKind::kNotJson},
      {R"(,"x")", ParseErrorKind::kNotJson},
  });
}

// The canonical ISO form has a fast path; the value is what the general
// parser gives for the same instant in another spelling.
TEST(RowParserProjection, CanonicalTimestampsAgreeWithTheGeneralParser) {
  auto parser = MakeParser(ProjectedSchema());
  const char* pairs[][2] = {
      {"2026-11-30T02:15:44.123Z", "2026-11-30T02:15:44.123+00:00"},
      {"2024-02-29T23:59:59.999Z", "2024-02-29T23:59:59.999+00:00"},
      {"0000-01-01T00:00:00.000Z", "0000-01-01T00:00:00.000+00:00"},
      {"9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999+00:00"},
      {"1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999+00:00"},
  };
  for (const auto& [canonical, general] : pairs) {
    InputRow a, b;
    ASSERT_TRUE(parser->Parse(std::string(R"({"ts":")") + canonical + "\"}", &a).ok()) << canonical;
    ASSERT_TRUE(parser->Parse(std::string(R"({"ts":")") + general + "\"}", &b).ok()) << general;
    EXPECT_EQ(a.timestamp_ms, b.timestamp_ms) << canonical;
  }
}

// The Kafka timestamp as a number gives the row time, and the errors, its
// text gives, in every timestamp format (and at least one of each).
TEST(RowParserProjection, KafkaTimestampAsANumberIsAsItsText) {
  const int64_t values[] = {0, 1796004944123, 99999999999, 253402300799999, 253402300800000,
                            9223372036854775807};
  int ok = 0, bad = 0;
  for (TimestampFormat format : {TimestampFormat::kAuto, TimestampFormat::kIso,
                                 TimestampFormat::kMillis, TimestampFormat::kPosix,
                                 TimestampFormat::kMicros, TimestampFormat::kNanos}) {
    Schema s = ProjectedSchema();
    s.timestamp_column = "kafka.timestamp";
    s.timestamp_format = format;
    auto parser = MakeParser(s);
    for (int64_t n : values) {
      const std::string text = std::to_string(n);
      RecordEnvelope as_text;
      as_text.columns.push_back({"kafka.key", "k", true});
      as_text.columns.push_back({"kafka.timestamp", text, true});
      as_text.timestamp_column = 1;
      RecordEnvelope as_number = as_text;
      as_number.timestamp_ms = n;
      InputRow a, b;
      ParseError ea = parser->Parse(R"({"d":"a"})", as_text, &a);
      ParseError eb = parser->Parse(R"({"d":"a"})", as_number, &b);
      EXPECT_EQ(ea.kind, eb.kind) << text;
      EXPECT_EQ(ea.message, eb.message) << text;
      (ea.ok() ? ok : bad)++;
      if (ea.ok() && eb.ok()) {
        EXPECT_EQ(a.timestamp_ms, b.timestamp_ms) << text;
      }
    }
  }
  EXPECT_GT(ok, 10);
  EXPECT_GT(bad, 10);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
