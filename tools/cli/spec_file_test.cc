#include "tools/cli/spec_file.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace sluicectl {
namespace {

using ::testing::HasSubstr;

constexpr char kGoodSpec[] = R"({
  "datasource": "wiki",
  "ioConfig": {
    "topic": "wiki",
    "consumerProperties": {"bootstrap.servers": "127.0.0.1:9092"},
    "taskCount": 2,
    "taskDuration": "PT1H"
  },
  "dataSchema": {
    "timestampSpec": {"column": "ts", "format": "iso"},
    "dimensionsSpec": {"dimensions": ["page", "user"]},
    "metricsSpec": [{"type": "count", "name": "count"},
                    {"type": "longSum", "name": "added", "fieldName": "added"}],
    "granularitySpec": {"segmentGranularity": "HOUR", "queryGranularity": "MINUTE"}
  },
  "tuningConfig": {"maxRowsPerSegment": 100000, "handoffMode": "HANDOFF_MODE_LOADER"}
})";

std::string ErrorOf(absl::string_view json) {
  auto spec = ParseSpecJson(json, "spec.json");
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << json;
  return std::string(spec.status().message());
}

TEST(SpecFileTest, ParsesTheJsonForm) {
  auto spec = ParseSpecJson(kGoodSpec, "spec.json");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->datasource(), "wiki");
  EXPECT_EQ(spec->io_config().task_count(), 2);
  EXPECT_EQ(spec->io_config().consumer_properties().at("bootstrap.servers"), "127.0.0.1:9092");
  EXPECT_EQ(spec->data_schema().metrics_spec(1).field_name(), "added");
  EXPECT_EQ(spec->tuning_config().handoff_mode(), v1::HANDOFF_MODE_LOADER);
}

TEST(SpecFileTest, AcceptsProtoFieldNamesToo) {
  auto spec = ParseSpecJson(R"({"datasource": "w", "io_config": {"task_count": 3}})", "s");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->io_config().task_count(), 3);
}

TEST(SpecFileTest, SyntaxErrorsPointAtTheLine) {
  EXPECT_EQ(ErrorOf("{\n  \"datasource\": \"wiki\"\n  \"ioConfig\": {}\n}"),
            "spec.json:3:3: expected ',' or '}' after a value, found '\"'");
  // protobuf's parser would accept this; the spec file is strict JSON.
  EXPECT_EQ(ErrorOf("{\"datasource\": \"wiki\",\n}"), "spec.json:2:1: trailing comma before '}'");
  EXPECT_EQ(ErrorOf("[1]"), "spec.json: a supervisor spec must be a JSON object");
}

TEST(SpecFileTest, UnknownTopLevelField) {
  EXPECT_EQ(ErrorOf("{\n  \"datasource\": \"wiki\",\n  \"ioConfg\": {}\n}"),
            "spec.json:3:3: unknown field \"ioConfg\" in the spec (SupervisorSpec); known "
            "fields: datasource, ioConfig, dataSchema, tuningConfig, suspended, icebergTable, "
            "compaction");
}

TEST(SpecFileTest, UnknownNestedField) {
  const std::string error = ErrorOf(
      "{\"dataSchema\": {\n  \"metricsSpec\": [{\"type\": \"count\"},\n"
      "                  {\"type\": \"count\", \"nam\": \"c\"}]}}");
  EXPECT_EQ(error,
            "spec.json:3:37: unknown field \"nam\" in dataSchema.metricsSpec[1] (MetricSpec); "
            "known fields: type, name, fieldName");
}

TEST(SpecFileTest, WrongTypesNameTheFieldAsWritten) {
  EXPECT_EQ(ErrorOf("{\"datasource\": \"w\",\n \"ioConfig\": {\"taskCount\": \"two\"}}"),
            "spec.json:2:15: ioConfig.taskCount: \"two\" is not an integer");
  EXPECT_EQ(ErrorOf("{\"io_config\": {\"topic\": 5}}"),
            "spec.json:1:16: io_config.topic: 5 is not a string");
  EXPECT_THAT(ErrorOf("{\"tuningConfig\": {\"handoffMode\": \"NOPE\"}}"),
              HasSubstr("spec.json:1:19: tuningConfig.handoffMode: \"NOPE\" is not one of "
                        "HANDOFF_MODE_UNSPECIFIED, HANDOFF_MODE_DEEP_STORAGE, HANDOFF_MODE_LOADER"));
  EXPECT_EQ(ErrorOf("{\"ioConfig\": {\"consumerProperties\": {\"a\": \"x\",\n \"b\": 1}}}"),
            "spec.json:2:2: ioConfig.consumerProperties[\"b\"]: 1 is not a string");
  EXPECT_EQ(ErrorOf("{\"suspended\": 1}"), "spec.json:1:2: suspended: 1 is not true or false");
  // protobuf alone would read the string "no" as true.
  EXPECT_EQ(ErrorOf("{\"suspended\": \"no\"}"), "spec.json:1:2: suspended: expected true or false");
  EXPECT_EQ(ErrorOf("{\"ioConfig\": {\"useEarliestOffset\": \"false\"}}"),
            "spec.json:1:15: ioConfig.useEarliestOffset: expected true or false");
}

TEST(SpecFileTest, ReadsFiles) {
  const std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/wiki.json");
  std::ofstream(path) << kGoodSpec;
  auto spec = ReadSpecFile(path);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->datasource(), "wiki");
  auto missing = ReadSpecFile("/no/such/spec.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/no/such/spec.json"));
}

}  // namespace
}  // namespace sluicectl
}  // namespace sluice
