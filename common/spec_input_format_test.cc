// ioConfig.inputFormat and ioConfig.headerBasedFilterConfig: defaults and
// validation at submit.
#include <gtest/gtest.h>

#include <string>

#include "common/file_util.h"
#include "common/spec.h"
#include "google/protobuf/util/json_util.h"

namespace sluice {
namespace {

v1::SupervisorSpec SpecWith(const std::string& io_extra, const std::string& timestamp_spec = "") {
  v1::SupervisorSpec spec;
  const std::string json = R"({
    "datasource": "wiki",
    "ioConfig": {"topic": "wiki-edits",
                 "consumerProperties": {"bootstrap.servers": "127.0.0.1:9092"})" +
                           io_extra + R"(},
    "dataSchema": {)" + timestamp_spec + R"(
      "dimensionsSpec": {"dimensions": ["page", "kafka.key"]},
      "metricsSpec": [{"type": "count", "name": "count"}]
    }
  })";
  auto status = google::protobuf::util::JsonStringToMessage(json, &spec);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << json;
  return spec;
}

std::string ErrorOf(const v1::SupervisorSpec& spec) {
  auto normalized = NormalizeSpec(spec);
  if (normalized.ok()) return "OK";
  EXPECT_EQ(normalized.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(normalized.status().message());
}

TEST(InputFormatSpec, KafkaDefaultsAreFilledIn) {
  auto spec = NormalizeSpec(SpecWith(R"(, "inputFormat": {"type": "kafka"},
      "headerBasedFilterConfig": {"filter": {"type": "selector", "dimension": "env",
                                             "value": "prod"}})"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::InputFormat& f = spec->io_config().input_format();
  EXPECT_EQ(f.value_format().type(), "json");
  EXPECT_EQ(f.key_column_name(), "kafka.key");
  EXPECT_EQ(f.header_column_prefix(), "kafka.header.");
  EXPECT_EQ(f.header_format().type(), "string");
  EXPECT_EQ(f.header_format().encoding(), "UTF-8");
  EXPECT_EQ(f.timestamp_column_name(), "kafka.timestamp");
  EXPECT_EQ(f.topic_column_name(), "kafka.topic");
  EXPECT_EQ(f.partition_column_name(), "");
  EXPECT_EQ(spec->io_config().header_based_filter_config().encoding(), "UTF-8");
  auto again = NormalizeSpec(*spec);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->SerializeAsString(), spec->SerializeAsString());
}

TEST(InputFormatSpec, JsonAndNoInputFormatStayAsTheyAre) {
  auto none = NormalizeSpec(SpecWith(""));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->io_config().has_input_format());
  auto json = NormalizeSpec(SpecWith(R"(, "inputFormat": {"type": "json"})"));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->io_config().input_format().type(), "json");
  EXPECT_EQ(json->io_config().input_format().key_column_name(), "");
  // An encoding in another case is stored canonically.
  auto lower = NormalizeSpec(SpecWith(
      R"(, "inputFormat": {"type": "kafka", "headerFormat": {"encoding": "iso-8859-1"}})"));
  ASSERT_TRUE(lower.ok()) << lower.status();
  EXPECT_EQ(lower->io_config().input_format().header_format().encoding(), "ISO-8859-1");
}

TEST(InputFormatSpec, TheKafkaTimestampMayBeTheRowTime) {
  EXPECT_EQ(ErrorOf(SpecWith(R"(, "inputFormat": {"type": "kafka"})",
                             R"("timestampSpec": {"column": "kafka.timestamp"},)")),
            "OK");
  EXPECT_EQ(ErrorOf(SpecWith(R"(, "inputFormat": {"type": "kafka"})",
                             R"("timestampSpec": {"column": "kafka.timestamp",
                                                  "format": "iso"},)")),
            "dataSchema.timestampSpec.format must be auto or millis to read the Kafka timestamp "
            "column \"kafka.timestamp\" (got iso)");
}

TEST(InputFormatSpec, EachBadFieldIsNamedByItsPath) {
  struct Case {
    const char* io;
    const char* want;
  } cases[] = {
      {R"("inputFormat": {"type": "avro"})",
       "ioConfig.inputFormat.type \"avro\" is not one of json, kafka"},
      {R"("inputFormat": {"type": "json", "keyColumnName": "k"})",
       "ioConfig.inputFormat of type \"json\" takes no other field"},
      {R"("inputFormat": {"type": "kafka", "valueFormat": {"type": "csv"}})",
       "ioConfig.inputFormat.valueFormat must be {\"type\": \"json\"} (got type \"csv\")"},
      {R"("inputFormat": {"type": "kafka", "headerFormat": {"encoding": "UTF-16"}})",
       "ioConfig.inputFormat.headerFormat.encoding: unknown encoding \"UTF-16\""},
      {R"("inputFormat": {"type": "kafka", "headerFormat": {"type": "bytes"}})",
       "ioConfig.inputFormat.headerFormat.type \"bytes\" is not \"string\""},
      {R"("inputFormat": {"type": "kafka", "topicColumnName": "kafka.key"})",
       "ioConfig.inputFormat.topicColumnName \"kafka.key\" names another envelope column too"},
      {R"("inputFormat": {"type": "kafka", "offsetColumnName": "__time"})",
       "ioConfig.inputFormat.offsetColumnName \"__time\" is reserved"},
      {R"("inputFormat": {"type": "kafka", "keyColumnName": "kafka.header.key"})",
       "ioConfig.inputFormat.keyColumnName \"kafka.header.key\" starts with the "
       "headerColumnPrefix"},
      {R"("inputFormat": {"type": "kafka", "keyColumnName": "a\u0001b"})",
       "ioConfig.inputFormat.keyColumnName contains the control character 0x01"},
      {R"("headerBasedFilterConfig": {})", "ioConfig.headerBasedFilterConfig.filter is required"},
      {R"("headerBasedFilterConfig": {"filter": {"type": "regex", "dimension": "a"}})",
       "ioConfig.headerBasedFilterConfig.filter.type"},
      {R"("headerBasedFilterConfig": {"filter": {"type": "selector", "dimension": "a",
          "value": "b"}, "encoding": "EBCDIC"})",
       "ioConfig.headerBasedFilterConfig.encoding: unknown encoding \"EBCDIC\""},
  };
  for (const Case& c : cases) {
    const std::string error = ErrorOf(SpecWith(std::string(", ") + c.io));
    EXPECT_EQ(error.rfind(c.want, 0), 0u) << c.io << "\ngot: " << error;
  }
}

// The README's kafka input format example (with the autoscaler) is a spec
// that submits.
TEST(InputFormatSpec, TheReadmeExampleNormalizes) {
  absl::StatusOr<std::string> readme = ReadFile("README.md");
  ASSERT_TRUE(readme.ok()) << readme.status();
  const size_t at = readme->find("\"headerBasedFilterConfig\"");
  ASSERT_NE(at, std::string::npos);
  const size_t start = readme->rfind("```json\n", at);
  const size_t end = readme->find("```", at);
  ASSERT_TRUE(start != std::string::npos && end != std::string::npos);
  const std::string json = readme->substr(start + 8, end - start - 8);
  v1::SupervisorSpec spec;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &spec);
  ASSERT_TRUE(parsed.ok()) << parsed.ToString() << "\n" << json;
  auto normalized = NormalizeSpec(spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  EXPECT_EQ(normalized->io_config().input_format().key_column_name(), "user");
  EXPECT_EQ(normalized->io_config().input_format().topic_column_name(), "kafka.topic");
  EXPECT_EQ(normalized->io_config().topic_pattern(), "clicks-.*");
  EXPECT_TRUE(normalized->io_config().topic().empty());
  const v1::AutoScalerConfig& scaler = normalized->io_config().auto_scaler_config();
  EXPECT_TRUE(scaler.enable_task_auto_scaler());
  EXPECT_EQ(scaler.task_count_max(), 4);
  EXPECT_EQ(scaler.scale_out_threshold(), 6000000);  // Druid's default
}

}  // namespace
}  // namespace sluice
