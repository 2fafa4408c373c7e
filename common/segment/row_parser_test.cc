#include "common/segment/row_parser.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/segment/format_limits.h"

namespace sluice {
namespace segment {
namespace {

Schema WikiSchema() {
  Schema s;
  s.dimensions = {"channel", "page", "user"};
  s.metrics = {{MetricType::kCount, "count", ""},
               {MetricType::kLongSum, "added", "added"},
               {MetricType::kDoubleSum, "delta", "delta"},
               {MetricType::kLongMax, "max_added", "added"}};
  return s;
}

std::unique_ptr<RowParser> MakeParser(const Schema& schema) {
  auto parser = RowParser::Create(schema);
  EXPECT_TRUE(parser.ok()) << parser.status();
  return std::move(*parser);
}

std::string Dim(const InputRow& row, size_t i) {
  return row.dims[i].present ? std::string(row.dims[i].text) : "<null>";
}

TEST(RowParser, ParsesListedDimensionsAndMetrics) {
  auto parser = MakeParser(WikiSchema());
  InputRow row;
  ParseError e = parser->Parse(
      R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":"#en","page":"Caf\u00e9 \"x\"",)"
      R"("user":null,"added":12,"delta":-1.25,"ignored":[1,2,{"a":3}]})",
      &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(row.timestamp_ms, 1796004944123);
  EXPECT_EQ(Dim(row, 0), "#en");
  EXPECT_EQ(Dim(row, 1), "Café \"x\"");
  EXPECT_EQ(Dim(row, 2), "<null>");
  ASSERT_EQ(row.metrics.size(), 4u);
  EXPECT_TRUE(row.metrics[1].present);
  EXPECT_EQ(row.metrics[1].long_value, 12);
  EXPECT_EQ(row.metrics[2].double_value, -1.25);
  EXPECT_TRUE(row.metrics[3].present);  // a field read by two metrics
  EXPECT_EQ(row.metrics[3].long_value, 12);
}

// A record is parsed where it lies when simdjson's padding after it is in
// the same page, whatever those bytes hold, and from a copy when the next
// page may not be readable: here it is not (PROT_NONE), and a read there
// would crash the test.
TEST(RowParser, ParsesInPlaceOnlyWhenThePaddingIsInTheSamePage) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* pages = static_cast<char*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(mprotect(pages + page, page, PROT_NONE), 0);
  std::memset(pages, '{', page);  // what follows a record: not JSON
  const std::string record =
      R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":"#en","page":"P","user":"u",)"
      R"("added":3,"delta":0.5})";
  auto parser = MakeParser(WikiSchema());
  for (const size_t gap : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{500}}) {
    char* at = pages + page - gap - record.size();
    std::memcpy(at, record.data(), record.size());
    InputRow row;
    ParseError e = parser->Parse(absl::string_view(at, record.size()), &row);
    ASSERT_TRUE(e.ok()) << "gap " << gap << ": " << e.message;
    EXPECT_EQ(row.timestamp_ms, 1796004944123);
    EXPECT_EQ(Dim(row, 0), "#en");
    EXPECT_EQ(Dim(row, 2), "u");
    EXPECT_EQ(row.metrics[1].long_value, 3);
    std::memset(at, '{', record.size());
  }
  munmap(pages, 2 * page);
}

TEST(RowParser, DimensionValuesOfEveryJsonType) {
  Schema s;
  s.dimensions = {"a", "b", "c", "d", "e", "f", "g"};
  auto parser = MakeParser(s);
  InputRow row;
  ParseError e = parser->Parse(
      R"({"a": 1.50 , "b":true,"c":false,"d":["x", "y"],"e":{"k":1},"f":"","timestamp":0})", &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(Dim(row, 0), "1.50");
  EXPECT_EQ(Dim(row, 1), "true");
  EXPECT_EQ(Dim(row, 2), "false");
  EXPECT_EQ(Dim(row, 3), R"(["x", "y"])");
  EXPECT_EQ(Dim(row, 4), R"({"k":1})");
  EXPECT_EQ(Dim(row, 5), "");  // empty string is a value, not null
  EXPECT_EQ(Dim(row, 6), "<null>");  // missing
}

TEST(RowParser, MetricInputs) {
  auto parser = MakeParser(WikiSchema());
  InputRow row;
  struct Case {
    const char* added;
    const char* delta;
    bool present;
    int64_t added_value;
    double delta_value;
  } cases[] = {
      {"7", "7", true, 7, 7.0},
      {"\"42\"", "\"0.5\"", true, 42, 0.5},
      {"-3.9", "1e-3", true, -3, 0.001},
      {"9223372036854775807", "18446744073709551615", true, INT64_MAX, 18446744073709551615.0},
      {"\" 12 \"", "\"NaN\"", true, 12, std::numeric_limits<double>::quiet_NaN()},
      {"null", "null", false, 0, 0},
  };
  for (const Case& c : cases) {
    const std::string json = std::string(R"({"timestamp":0,"added":)") + c.added +
                             R"(,"delta":)" + c.delta + "}";
    ParseError e = parser->Parse(json, &row);
    ASSERT_TRUE(e.ok()) << json << ": " << e.message;
    EXPECT_EQ(row.metrics[1].present, c.present) << json;
    EXPECT_EQ(row.metrics[1].long_value, c.added_value) << json;
    if (std::isnan(c.delta_value)) {
      EXPECT_TRUE(std::isnan(row.metrics[2].double_value)) << json;
    } else {
      EXPECT_EQ(row.metrics[2].double_value, c.delta_value) << json;
    }
  }
  // A missing field leaves the input absent.
  ASSERT_TRUE(parser->Parse(R"({"timestamp":0})", &row).ok());
  EXPECT_FALSE(row.metrics[1].present);
  EXPECT_FALSE(row.metrics[2].present);
}

TEST(RowParser, EveryErrorKindWithItsReason) {
  auto parser = MakeParser(WikiSchema());
  struct Case {
    const char* json;
    ParseErrorKind kind;
    const char* reason;
  } cases[] = {
      {"", ParseErrorKind::kNotJson, "empty"},
      {"not json", ParseErrorKind::kNotJson, "JSON"},
      {"[1,2]", ParseErrorKind::kNotJson, "not a JSON object"},
      {"\"str\"", ParseErrorKind::kNotJson, "not a JSON object"},
      {R"({"timestamp":0,"channel":"x")", ParseErrorKind::kNotJson, "JSON"},
      {R"({"timestamp":0} {"a":1})", ParseErrorKind::kNotJson, "trailing"},
      {R"({"timestamp":0,"channel":"\xff"})", ParseErrorKind::kNotJson, "string"},
      {"{\"timestamp\":0,\"channel\":\"\xff\"}", ParseErrorKind::kNotJson, "UTF-8"},
      {R"({"timestamp":0,"channel":tru})", ParseErrorKind::kNotJson, "JSON"},
      {R"({"channel":"x"})", ParseErrorKind::kNoTimestamp, "no timestamp field \"timestamp\""},
      {R"({"timestamp":null})", ParseErrorKind::kNoTimestamp, "timestamp"},
      {R"({"timestamp":"yesterday"})", ParseErrorKind::kBadTimestamp, "ISO-8601"},
      {R"({"timestamp":true})", ParseErrorKind::kBadTimestamp, "is a boolean"},
      {R"({"timestamp":{"t":1}})", ParseErrorKind::kBadTimestamp, "is an object"},
      {R"({"timestamp":1e300})", ParseErrorKind::kBadTimestamp, "outside the years"},
      {R"({"timestamp":0,"added":"abc"})", ParseErrorKind::kBadNumber,
       "metric \"added\" (field \"added\"): not a number: \"abc\""},
      {R"({"timestamp":0,"added":true})", ParseErrorKind::kBadNumber, "got a boolean"},
      {R"({"timestamp":0,"delta":[1]})", ParseErrorKind::kBadNumber, "got an array"},
      {R"({"timestamp":0,"added":1e30})", ParseErrorKind::kBadNumber, "outside the int64 range"},
      {R"({"timestamp":0,"added":18446744073709551615})", ParseErrorKind::kBadNumber,
       "outside the int64 range"},
  };
  InputRow row;
  for (const Case& c : cases) {
    ParseError e = parser->Parse(c.json, &row);
    EXPECT_EQ(e.kind, c.kind) << c.json << ": " << e.message;
    EXPECT_NE(e.message.find(c.reason), std::string::npos) << c.json << ": " << e.message;
    EXPECT_EQ(e.ToStatus().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.ToStatus().message()).find(ParseErrorKindName(c.kind)),
              std::string::npos);
  }
  EXPECT_STREQ(ParseErrorKindName(ParseErrorKind::kNotJson), "NOT_JSON");
  EXPECT_STREQ(ParseErrorKindName(ParseErrorKind::kNoTimestamp), "NO_TIMESTAMP");
  EXPECT_STREQ(ParseErrorKindName(ParseErrorKind::kBadTimestamp), "BAD_TIMESTAMP");
  EXPECT_STREQ(ParseErrorKindName(ParseErrorKind::kBadNumber), "BAD_NUMBER");
  // A good record after bad ones parses cleanly.
  ASSERT_TRUE(parser->Parse(R"({"timestamp":5000,"channel":"c"})", &row).ok());
  EXPECT_EQ(row.timestamp_ms, 5000000);
  EXPECT_EQ(Dim(row, 0), "c");
}

TEST(RowParser, TimestampColumnAndFormatFromTheSchema) {
  Schema s;
  s.timestamp_column = "ts";
  s.timestamp_format = TimestampFormat::kMillis;
  s.dimensions = {"d"};
  auto parser = MakeParser(s);
  InputRow row;
  ASSERT_TRUE(parser->Parse(R"({"ts":1796004944123,"timestamp":"x","d":"v"})", &row).ok());
  EXPECT_EQ(row.timestamp_ms, 1796004944123);
  EXPECT_EQ(parser->Parse(R"({"ts":"2026-11-30"})", &row).kind, ParseErrorKind::kBadTimestamp);
  s.timestamp_format = TimestampFormat::kNanos;
  parser = MakeParser(s);
  ASSERT_TRUE(parser->Parse(R"({"ts":1796004944123456789})", &row).ok());
  EXPECT_EQ(row.timestamp_ms, 1796004944123);
}

TEST(RowParser, FieldOrderMayChangeBetweenRecords) {
  auto parser = MakeParser(WikiSchema());
  InputRow row;
  ASSERT_TRUE(parser->Parse(R"({"timestamp":1,"channel":"a","page":"b","added":1})", &row).ok());
  ASSERT_TRUE(parser->Parse(R"({"page":"p","added":2,"timestamp":2,"channel":"c"})", &row).ok());
  EXPECT_EQ(row.timestamp_ms, 2000);
  EXPECT_EQ(Dim(row, 0), "c");
  EXPECT_EQ(Dim(row, 1), "p");
  EXPECT_EQ(row.metrics[1].long_value, 2);
  // Same length, different name at a cached position.
  ASSERT_TRUE(parser->Parse(R"({"pagf":"x","timestamp":3})", &row).ok());
  EXPECT_EQ(Dim(row, 1), "<null>");
  // An escaped key is unescaped before the lookup.
  ASSERT_TRUE(parser->Parse(R"({"\u0074imestamp":4,"ch\u0061nnel":"e"})", &row).ok());
  EXPECT_EQ(row.timestamp_ms, 4000);
  EXPECT_EQ(Dim(row, 0), "e");
  // A repeated key keeps its last value.
  ASSERT_TRUE(parser->Parse(R"({"timestamp":5,"channel":"x","channel":"y"})", &row).ok());
  EXPECT_EQ(Dim(row, 0), "y");
}

TEST(RowParser, DiscoversEveryOtherFieldAsADimension) {
  Schema s;
  s.dimension_exclusions = {"secret"};
  s.metrics = {{MetricType::kCount, "count", ""}, {MetricType::kLongSum, "total", "added"}};
  auto parser = MakeParser(s);
  InputRow row;
  ParseError e = parser->Parse(
      R"({"timestamp":1,"zeta":"z","added":3,"secret":"s","__time":"t","total":"out",)"
      R"("alpha":2,"none":null,"k\u00e9y":"v","":"empty name"})",
      &row);
  ASSERT_TRUE(e.ok()) << e.message;
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& [name, value] : row.discovered) found.emplace_back(name, value);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"zeta", "z"}, {"alpha", "2"}, {"kéy", "v"}};
  EXPECT_EQ(found, expected);
  EXPECT_EQ(row.metrics[1].long_value, 3);
}

TEST(RowParser, RefusesAnInvalidSchema) {
  Schema s;
  s.dimensions = {"a", "a"};
  EXPECT_EQ(RowParser::Create(s).status().code(), absl::StatusCode::kInvalidArgument);
  s.dimensions = {"timestamp"};
  EXPECT_EQ(RowParser::Create(s).status().code(), absl::StatusCode::kInvalidArgument);
  s.dimensions = {"a"};
  s.metrics = {{MetricType::kLongSum, "a", "x"}};
  EXPECT_EQ(RowParser::Create(s).status().code(), absl::StatusCode::kInvalidArgument);
  s.metrics = {{MetricType::kLongSum, "m", ""}};
  EXPECT_EQ(RowParser::Create(s).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RowParser, LongRecordsAndReuse) {
  Schema s;
  s.dimensions = {"big"};
  auto parser = MakeParser(s);
  InputRow row;
  const std::string big(100000, 'x');
  ASSERT_TRUE(parser->Parse("{\"timestamp\":0,\"big\":\"" + big + "\"}", &row).ok());
  EXPECT_EQ(Dim(row, 0), big);
  ASSERT_TRUE(parser->Parse(R"({"timestamp":0,"big":"small"})", &row).ok());
  EXPECT_EQ(Dim(row, 0), "small");
}

// The envelope of a Kafka record (kafka input format): key, one header, the
// Kafka timestamp and the topic.
RecordEnvelope Envelope(absl::string_view key, absl::string_view source, bool has_key = true) {
  RecordEnvelope e;
  e.columns.push_back({"kafka.key", key, has_key});
  e.columns.push_back({"kafka.timestamp", "1796004944123", true});
  e.timestamp_column = 1;
  e.columns.push_back({"kafka.topic", "wiki", true});
  e.columns.push_back({"kafka.header.source", source, true});
  return e;
}

TEST(RowParserEnvelope, ListedDimensionsAndTheTimestampTakeEnvelopeColumns) {
  Schema s;
  s.timestamp_column = "kafka.timestamp";
  s.timestamp_format = TimestampFormat::kMillis;
  s.dimensions = {"kafka.key", "kafka.header.source", "page", "kafka.topic"};
  s.metrics = {{MetricType::kCount, "count", ""}};
  auto parser = MakeParser(s);
  InputRow row;
  // No timestamp in the value: the Kafka timestamp is the row time.
  ParseError e = parser->Parse(R"({"page":"p"})", Envelope("k1", "web"), &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(row.timestamp_ms, 1796004944123);
  EXPECT_EQ(Dim(row, 0), "k1");
  EXPECT_EQ(Dim(row, 1), "web");
  EXPECT_EQ(Dim(row, 2), "p");
  EXPECT_EQ(Dim(row, 3), "wiki");
  // A null key is a null dimension, an empty key an empty one.
  ASSERT_TRUE(parser->Parse(R"({"page":"p"})", Envelope("", "web", false), &row).ok());
  EXPECT_EQ(Dim(row, 0), "<null>");
  ASSERT_TRUE(parser->Parse(R"({"page":"p"})", Envelope("", "web"), &row).ok());
  EXPECT_EQ(Dim(row, 0), "");
  // Without the envelope the same value has no timestamp.
  EXPECT_EQ(parser->Parse(R"({"page":"p"})", &row).kind, ParseErrorKind::kNoTimestamp);
}

TEST(RowParserEnvelope, TheValueWinsOverAnEnvelopeColumnOfTheSameName) {
  Schema s;
  s.timestamp_column = "kafka.timestamp";
  s.dimensions = {"kafka.key", "kafka.topic"};
  auto parser = MakeParser(s);
  InputRow row;
  ASSERT_TRUE(parser
                  ->Parse(R"({"kafka.timestamp":5000,"kafka.key":"from-value","kafka.topic":null})",
                          Envelope("k1", "web"), &row)
                  .ok());
  EXPECT_EQ(row.timestamp_ms, 5000000);  // auto: seconds below 10^11
  EXPECT_EQ(Dim(row, 0), "from-value");
  // A null in the value leaves the envelope's column.
  EXPECT_EQ(Dim(row, 1), "wiki");
  // A bad value timestamp is not replaced by the envelope's.
  EXPECT_EQ(parser->Parse(R"({"kafka.timestamp":"x"})", Envelope("k", "w"), &row).kind,
            ParseErrorKind::kBadTimestamp);
}

TEST(RowParserEnvelope, DiscoveryTakesEnvelopeColumnsExceptExclusions) {
  Schema s;
  s.dimension_exclusions = {"kafka.topic"};
  auto parser = MakeParser(s);
  InputRow row;
  ASSERT_TRUE(parser
                  ->Parse(R"({"timestamp":1,"kafka.key":"value-key","page":"p"})",
                          Envelope("k1", "web"), &row)
                  .ok());
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& [name, value] : row.discovered) got.emplace_back(name, value);
  // The envelope's first, the value's after: the index keeps the last of a
  // repeated name, so the value's "kafka.key" wins.
  const std::vector<std::pair<std::string, std::string>> want = {
      {"kafka.key", "k1"},           {"kafka.timestamp", "1796004944123"},
      {"kafka.header.source", "web"}, {"kafka.key", "value-key"},
      {"page", "p"}};
  EXPECT_EQ(got, want);
}

TEST(RowParserEnvelope, EnvelopeValuesAreHeldToTheFormatLimits) {
  Schema s;
  s.dimensions = {"kafka.header.source"};
  auto parser = MakeParser(s);
  InputRow row;
  const std::string big(kMaxValueBytes + 1, 'x');
  ParseError e = parser->Parse(R"({"timestamp":1})", Envelope("k", big), &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kValueTooLarge);
  EXPECT_NE(e.message.find("kafka.header.source"), std::string::npos) << e.message;
  // Discovery too.
  auto discovering = MakeParser(Schema());
  EXPECT_EQ(discovering->Parse(R"({"timestamp":1})", Envelope("k", big), &row).kind,
            ParseErrorKind::kValueTooLarge);
  // A timestamp column from the envelope that does not parse.
  Schema t;
  t.timestamp_column = "kafka.key";
  t.timestamp_format = TimestampFormat::kIso;
  auto keyed = MakeParser(t);
  e = keyed->Parse(R"({})", Envelope("not-a-time", "w"), &row);
  EXPECT_EQ(e.kind, ParseErrorKind::kBadTimestamp);
  EXPECT_NE(e.message.find("envelope"), std::string::npos) << e.message;
  EXPECT_STREQ(ParseErrorKindName(ParseErrorKind::kBadHeader), "BAD_HEADER");
}

TEST(RowParserEnvelope, AMetricMayReadAnEnvelopeColumn) {
  Schema s;
  s.dimensions = {"page"};
  s.metrics = {{MetricType::kLongMax, "latest", "kafka.timestamp"}};
  auto parser = MakeParser(s);
  InputRow row;
  ASSERT_TRUE(parser->Parse(R"({"timestamp":1,"page":"p"})", Envelope("k", "w"), &row).ok());
  ASSERT_TRUE(row.metrics[0].present);
  EXPECT_EQ(row.metrics[0].long_value, 1796004944123);
}

TEST(RowParserEnvelope, ATransformMayReadAnEnvelopeColumn) {
  Schema s;
  s.dimensions = {"user", "kafka.key"};
  v1::TransformSpec spec;
  v1::Transform* t = spec.add_transforms();
  t->set_type("expression");
  t->set_name("user");
  t->set_expression("concat(upper(\"kafka.key\"), '@', \"kafka.header.source\")");
  auto transform = RowTransform::Create(spec, "dataSchema.transformSpec", s.timestamp_column);
  ASSERT_TRUE(transform.ok()) << transform.status();
  auto parser = RowParser::Create(s, *transform);
  ASSERT_TRUE(parser.ok()) << parser.status();
  InputRow row;
  ParseError e = (*parser)->Parse(R"({"timestamp":1})", Envelope("k1", "web"), &row);
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(Dim(row, 0), "K1@web");
  EXPECT_EQ(Dim(row, 1), "k1");
  // The value's field, when it has one, is what the transform reads.
  ASSERT_TRUE((*parser)->Parse(R"({"timestamp":1,"kafka.key":"v"})", Envelope("k1", "web"), &row).ok());
  EXPECT_EQ(Dim(row, 0), "V@web");
}

}  // namespace
// Which columns a parse reads as text: a column read as the row time only
// is not (its number, RecordEnvelope::timestamp_ms, gives the time; the
// envelope builder then leaves its text out), every other role is.
TEST(RowParserEnvelope, ReadsColumnTextOnlyForRolesBesidesTheRowTime) {
  Schema s;
  s.timestamp_column = "kafka.timestamp";
  s.timestamp_format = TimestampFormat::kMillis;
  s.dimensions = {"kafka.key"};
  s.metrics = {{MetricType::kCount, "count", ""}, {MetricType::kLongSum, "m", "kafka.offset"}};
  auto parser = MakeParser(s);
  EXPECT_FALSE(parser->ReadsColumnText("kafka.timestamp"));
  EXPECT_TRUE(parser->ReadsColumnText("kafka.key"));
  EXPECT_TRUE(parser->ReadsColumnText("kafka.offset"));
  EXPECT_FALSE(parser->ReadsColumnText("kafka.topic"));
  // Without its text the row time comes from the number.
  RecordEnvelope e;
  e.columns.push_back({"kafka.key", "k1", true});
  e.columns.push_back({"kafka.timestamp", "", true});
  e.timestamp_column = 1;
  e.timestamp_ms = 1796004944123;
  InputRow row;
  ParseError error = parser->Parse(R"({"page":"p"})", e, &row);
  ASSERT_TRUE(error.ok()) << error.message;
  EXPECT_EQ(row.timestamp_ms, 1796004944123);
  EXPECT_EQ(Dim(row, 0), "k1");

  // The timestamp column is never a dimension or metric input (the schema
  // refuses it) nor discovered; a transform may read it: then as text. Any
  // other column discovery takes is read as text.
  Schema discovering;
  discovering.timestamp_column = "kafka.timestamp";
  EXPECT_FALSE(MakeParser(discovering)->ReadsColumnText("kafka.timestamp"));
  EXPECT_TRUE(MakeParser(discovering)->ReadsColumnText("kafka.topic"));
  v1::TransformSpec spec;
  v1::Transform* t = spec.add_transforms();
  t->set_type("expression");
  t->set_name("when");
  t->set_expression("concat(\"kafka.timestamp\", '!')");
  Schema with_transform;
  with_transform.timestamp_column = "kafka.timestamp";
  with_transform.dimensions = {"when"};
  auto transform = RowTransform::Create(spec, "dataSchema.transformSpec", "kafka.timestamp");
  ASSERT_TRUE(transform.ok()) << transform.status();
  auto transforming = RowParser::Create(with_transform, *transform);
  ASSERT_TRUE(transforming.ok()) << transforming.status();
  EXPECT_TRUE((*transforming)->ReadsColumnText("kafka.timestamp"));
}

}  // namespace segment
}  // namespace sluice
