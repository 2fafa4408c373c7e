#include "common/druid/druid_spec.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "gmock/gmock.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/file_util.h"
#include "common/spec.h"

namespace sluice::druid {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Testdata(const std::string& name) {
  absl::StatusOr<std::string> text = ReadFile(absl::StrCat("common/druid/testdata/", name));
  EXPECT_TRUE(text.ok()) << text.status();
  return text.value_or("");
}

DruidConversion Convert(const std::string& json, bool allow_unsupported = false) {
  absl::StatusOr<DruidConversion> c = FromDruidJson(json, {.allow_unsupported = allow_unsupported});
  EXPECT_TRUE(c.ok()) << c.status();
  return c.value_or(DruidConversion{});
}

std::string Error(const std::string& json, bool allow_unsupported = false) {
  absl::StatusOr<DruidConversion> c = FromDruidJson(json, {.allow_unsupported = allow_unsupported});
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << c.status();
  return std::string(c.status().message());
}

// Druid's Kafka tutorial spec (docs/tutorials/tutorial-kafka.md, the
// "wikipedia" datasource) maps field by field, and normalizes as sluice's own
// spec would.
TEST(DruidSpecTest, TheTutorialSpecMapsAsExpected) {
  DruidConversion c = Convert(Testdata("tutorial-kafka.json"));
  const v1::SupervisorSpec& s = c.spec;
  EXPECT_EQ(s.datasource(), "wikipedia");
  EXPECT_EQ(s.io_config().topic(), "wikipedia");
  EXPECT_EQ(s.io_config().consumer_properties().at("bootstrap.servers"), "localhost:9092");
  EXPECT_EQ(s.io_config().replicas(), 2);
  EXPECT_FALSE(s.io_config().has_task_count());
  EXPECT_EQ(s.io_config().task_duration(), "PT10M");
  EXPECT_EQ(s.io_config().completion_timeout(), "PT20M");
  EXPECT_FALSE(s.io_config().use_earliest_offset());
  EXPECT_EQ(s.data_schema().timestamp_spec().column(), "time");
  EXPECT_EQ(s.data_schema().timestamp_spec().format(), "auto");
  ASSERT_EQ(s.data_schema().dimensions_spec().dimensions_size(), 19);
  EXPECT_EQ(s.data_schema().dimensions_spec().dimensions(0), "channel");
  EXPECT_EQ(s.data_schema().dimensions_spec().dimensions(15), "user");
  EXPECT_EQ(s.data_schema().dimensions_spec().dimensions(16), "added");
  EXPECT_EQ(s.data_schema().dimensions_spec().dimensions(18), "delta");
  EXPECT_EQ(s.data_schema().metrics_spec_size(), 0);
  EXPECT_EQ(s.data_schema().granularity_spec().segment_granularity(), "DAY");
  EXPECT_EQ(s.data_schema().granularity_spec().query_granularity(), "NONE");
  ASSERT_TRUE(s.data_schema().granularity_spec().has_rollup());
  EXPECT_FALSE(s.data_schema().granularity_spec().rollup());
  // reportParseExceptions false is Druid's default: nothing to map.
  EXPECT_FALSE(s.tuning_config().has_max_parse_exceptions());
  // The three long dimensions are stored as strings, and say so.
  ASSERT_EQ(c.warnings.size(), 3u);
  EXPECT_EQ(c.warnings[0],
            "spec.dataSchema.dimensionsSpec.dimensions[16]: dimension \"added\" of type long is "
            "stored as a string dimension (its values' text)");
  absl::StatusOr<v1::SupervisorSpec> normalized = NormalizeSpec(s);
  EXPECT_TRUE(normalized.ok()) << normalized.status();
}

// The quickstart file of older Druid versions: top-level parts and the legacy
// "parser" give the same spec.
TEST(DruidSpecTest, TheLegacyTopLevelFormWithAParserGivesTheSameSpec) {
  DruidConversion legacy = Convert(Testdata("quickstart-parser.json"));
  DruidConversion tutorial = Convert(Testdata("tutorial-kafka.json"));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(legacy.spec, tutorial.spec))
      << legacy.spec.DebugString() << "\nvs\n" << tutorial.spec.DebugString();
}

TEST(DruidSpecTest, RealWorldSpecsMapEveryField) {
  {
    const v1::SupervisorSpec s = Convert(Testdata("rollup-metrics.json")).spec;
    EXPECT_EQ(s.datasource(), "metrics-rollup");
    EXPECT_EQ(s.io_config().consumer_properties().at("bootstrap.servers"),
              "kafka-1:9092,kafka-2:9092");
    EXPECT_EQ(s.io_config().consumer_properties().at("isolation.level"), "read_committed");
    EXPECT_EQ(s.io_config().consumer_properties().at("fetch.max.bytes"), "52428800");
    EXPECT_EQ(s.io_config().task_count(), 4);
    EXPECT_EQ(s.io_config().start_delay(), "PT10S");
    EXPECT_EQ(s.io_config().period(), "PT30S");
    EXPECT_TRUE(s.io_config().use_earliest_offset());
    EXPECT_EQ(s.io_config().late_message_rejection_period(), "PT2H");
    EXPECT_EQ(s.io_config().early_message_rejection_period(), "PT1H");
    EXPECT_EQ(s.io_config().poll_timeout(), "PT0.25S");
    EXPECT_EQ(s.tuning_config().max_rows_in_memory(), 100000);
    EXPECT_EQ(s.tuning_config().max_bytes_in_memory(), 268435456);
    EXPECT_EQ(s.tuning_config().max_rows_per_segment(), 5000000);
    EXPECT_EQ(s.tuning_config().max_total_rows(), 20000000);
    EXPECT_EQ(s.tuning_config().intermediate_persist_period(), "PT10M");
    EXPECT_EQ(s.tuning_config().handoff_condition_timeout(), "PT15M");
    EXPECT_EQ(s.tuning_config().chat_retries(), 8);
    EXPECT_EQ(s.tuning_config().chat_timeout(), "PT10S");
    EXPECT_EQ(s.tuning_config().max_parse_exceptions(), 100);
    EXPECT_EQ(s.tuning_config().max_saved_parse_exceptions(), 10);
    EXPECT_EQ(s.data_schema().timestamp_spec().format(), "millis");
    EXPECT_EQ(s.data_schema().dimensions_spec().dimension_exclusions(0), "raw");
    ASSERT_EQ(s.data_schema().metrics_spec_size(), 5);
    EXPECT_EQ(s.data_schema().metrics_spec(2).type(), "doubleSum");
    EXPECT_EQ(s.data_schema().metrics_spec(2).name(), "latency_sum");
    EXPECT_EQ(s.data_schema().metrics_spec(2).field_name(), "latency");
    EXPECT_EQ(s.data_schema().granularity_spec().segment_granularity(), "HOUR");
    EXPECT_EQ(s.data_schema().granularity_spec().query_granularity(), "MINUTE");
    EXPECT_TRUE(s.data_schema().granularity_spec().rollup());
    EXPECT_TRUE(NormalizeSpec(s).ok()) << NormalizeSpec(s).status();
  }
  {
    DruidConversion c = Convert(Testdata("discovery-iso.json"));
    EXPECT_TRUE(c.warnings.empty());
    EXPECT_TRUE(c.spec.suspended());
    EXPECT_EQ(c.spec.data_schema().dimensions_spec().dimensions_size(), 0);
    EXPECT_EQ(c.spec.data_schema().granularity_spec().query_granularity(), "NONE");
    EXPECT_TRUE(NormalizeSpec(c.spec).ok()) << NormalizeSpec(c.spec).status();
  }
  {
    DruidConversion c = Convert(Testdata("sasl-consumer.json"));
    const v1::SupervisorSpec& s = c.spec;
    EXPECT_EQ(s.io_config().consumer_properties().at("sasl.password"), "${env:SLUICE_SECRET_KAFKA}");
    EXPECT_EQ(s.io_config().consumer_properties().at("security.protocol"), "SASL_SSL");
    // reportParseExceptions true: the first parse error fails the task.
    EXPECT_EQ(s.tuning_config().max_parse_exceptions(), 0);
    // Druid's "never" default.
    EXPECT_TRUE(s.tuning_config().intermediate_handoff_period().empty());
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_THAT(c.warnings[0], HasSubstr("\"price\" of type double"));
    EXPECT_TRUE(NormalizeSpec(s).ok()) << NormalizeSpec(s).status();
  }
}

const char* const kUnsupported[] = {
    "context is not supported by sluice",
    "spec.dataSchema.timestampSpec.missingValue is not supported by sluice",
    "spec.dataSchema.dimensionsSpec.dimensions[1].multiValueHandling is not supported by sluice",
    "spec.dataSchema.transformSpec.filter.type: \"regex\" is not supported by sluice (only and, "
    "bound, in, not, or, selector)",
    "spec.dataSchema.transformSpec.filter.pattern is not supported by sluice",
    "spec.ioConfig.inputFormat.flattenSpec is not supported by sluice",
    "spec.ioConfig.autoScalerConfig.stopTaskCountRatio is not supported by sluice",
    "spec.tuningConfig.maxPendingPersists is not supported by sluice",
    "spec.tuningConfig.indexSpec is not supported by sluice",
    "spec.tuningConfig.workerThreads is not supported by sluice",
};

TEST(DruidSpecTest, EveryUnsupportedFieldIsNamed) {
  const std::string message = Error(Testdata("unsupported-many.json"));
  for (const char* field : kUnsupported) EXPECT_THAT(message, HasSubstr(field));
  EXPECT_THAT(message, HasSubstr("10 unsupported field(s)"));
  EXPECT_THAT(message, HasSubstr("--allow_unsupported"));
}

TEST(DruidSpecTest, AllowUnsupportedIgnoresThemWithAWarningEach) {
  DruidConversion c = Convert(Testdata("unsupported-many.json"), /*allow_unsupported=*/true);
  ASSERT_EQ(c.warnings.size(), std::size(kUnsupported));
  for (const char* field : kUnsupported) {
    EXPECT_NE(std::find(c.warnings.begin(), c.warnings.end(), absl::StrCat(field, "; ignored")),
              c.warnings.end())
        << field;
  }
  EXPECT_EQ(c.spec.datasource(), "clicks");
  EXPECT_EQ(c.spec.io_config().task_count(), 2);
  EXPECT_EQ(c.spec.data_schema().timestamp_spec().format(), "posix");
  ASSERT_EQ(c.spec.data_schema().dimensions_spec().dimensions_size(), 2);
  EXPECT_EQ(c.spec.data_schema().dimensions_spec().dimensions(1), "country");
  EXPECT_TRUE(NormalizeSpec(c.spec).ok()) << NormalizeSpec(c.spec).status();
}

std::string Minimal(const std::string& data_schema_extra, const std::string& io_extra = "",
                    const std::string& tuning = "{\"type\": \"kafka\"}") {
  return absl::StrCat(
      R"({"type": "kafka", "spec": {"dataSchema": {"dataSource": "d")", data_schema_extra,
      R"(}, "ioConfig": {"topic": "t", "consumerProperties": {"bootstrap.servers": "k:9092"})",
      io_extra, R"(}, "tuningConfig": )", tuning, "}}");
}

TEST(DruidSpecTest, ValuesSluiceCannotHonorAreNamedErrorsEvenWithAllowUnsupported) {
  EXPECT_THAT(Error(Minimal("", R"(, "inputFormat": {"type": "csv", "columns": ["a"]})"), true),
              HasSubstr("spec.ioConfig.inputFormat.type: \"csv\" is not supported; sluice takes "
                        "\"json\" or \"kafka\""));
  EXPECT_THAT(Error(Minimal(R"(, "granularitySpec": {"segmentGranularity": "FORTNIGHT"})"), true),
              HasSubstr("spec.dataSchema.granularitySpec.segmentGranularity: \"FORTNIGHT\" is not "
                        "a granularity sluice has"));
  EXPECT_THAT(
      Error(Minimal(R"(, "granularitySpec": {"segmentGranularity": {"type": "period", "period": "PT2H"}})")),
      HasSubstr("spec.dataSchema.granularitySpec.segmentGranularity: only named granularities"));
  EXPECT_THAT(Error(Minimal(R"(, "timestampSpec": {"column": "t", "format": "yyyy-MM-dd"})")),
              HasSubstr("spec.dataSchema.timestampSpec.format: \"yyyy-MM-dd\" is not supported"));
  EXPECT_THAT(Error(Minimal(R"(, "metricsSpec": [{"type": "hyperUnique", "name": "u", "fieldName": "user"}])")),
              HasSubstr("spec.dataSchema.metricsSpec[0].type: \"hyperUnique\" is not supported"));
  EXPECT_THAT(Error(Minimal(R"(, "dimensionsSpec": {"dimensions": [{"name": "j", "type": "json"}]})")),
              HasSubstr("spec.dataSchema.dimensionsSpec.dimensions[0].type: \"json\" is not "
                        "supported"));
  EXPECT_THAT(Error(Minimal("", "", R"({"type": "kafka", "maxBytesInMemory": -1})")),
              HasSubstr("spec.tuningConfig.maxBytesInMemory: -1"));
  EXPECT_THAT(Error(R"({"type": "kinesis", "spec": {"dataSchema": {"dataSource": "d"}, "ioConfig": {"topic": "t"}}})"),
              HasSubstr("type: \"kinesis\" is not supported; sluice takes only \"kafka\""));
}

TEST(DruidSpecTest, TheKafkaInputFormatAndTheHeaderFilterMap) {
  DruidConversion c = Convert(Minimal(R"(, "timestampSpec": {"column": "kafka.timestamp", "format": "millis"},
      "dimensionsSpec": {"dimensions": ["key", "h.env"]})",
      R"(, "inputFormat": {"type": "kafka", "valueFormat": {"type": "json"},
            "headerFormat": {"type": "string", "encoding": "ISO-8859-1"},
            "keyFormat": {"type": "tsv", "findColumnsFromHeader": false, "columns": ["k"]},
            "keyColumnName": "key", "headerLabelPrefix": "h.", "timestampColumnName": "kafka.timestamp",
            "topicColumnName": "topic"},
          "headerBasedFilterConfig": {"filter": {"type": "or", "fields": [
            {"type": "selector", "dimension": "env", "value": "prod"},
            {"type": "in", "dimension": "team", "values": ["a", "b"]}]}, "encoding": "UTF-8"})"));
  const v1::InputFormat& f = c.spec.io_config().input_format();
  EXPECT_EQ(f.type(), "kafka");
  EXPECT_EQ(f.value_format().type(), "json");
  EXPECT_EQ(f.header_format().encoding(), "ISO-8859-1");
  EXPECT_EQ(f.key_column_name(), "key");
  EXPECT_EQ(f.header_column_prefix(), "h.");
  EXPECT_EQ(f.timestamp_column_name(), "kafka.timestamp");
  EXPECT_EQ(f.topic_column_name(), "topic");
  const v1::DimFilter& filter = c.spec.io_config().header_based_filter_config().filter();
  EXPECT_EQ(filter.type(), "or");
  ASSERT_EQ(filter.fields_size(), 2);
  EXPECT_EQ(filter.fields(0).value(), "prod");
  EXPECT_EQ(filter.fields(1).values(1), "b");
  absl::StatusOr<v1::SupervisorSpec> normalized = NormalizeSpec(c.spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  // And back: the Druid form carries both, and converts to the same spec.
  absl::StatusOr<std::string> druid = ToDruidJson(*normalized);
  ASSERT_TRUE(druid.ok()) << druid.status();
  EXPECT_THAT(*druid, HasSubstr("\"headerColumnPrefix\": \"h.\""));
  EXPECT_THAT(*druid, HasSubstr("\"headerBasedFilterConfig\""));
  absl::StatusOr<DruidConversion> back = FromDruidJson(*druid, {});
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << *druid;
  google::protobuf::util::MessageDifferencer differ;
  std::string differences;
  differ.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differ.Compare(back->spec, *normalized)) << differences;
}

TEST(DruidSpecTest, TheAutoScalerConfigMapsBothWays) {
  DruidConversion c = Convert(Minimal(
      R"(, "dimensionsSpec": {"dimensions": ["page"]})", R"(, "taskCount": 2, "autoScalerConfig": {"enableTaskAutoScaler": true,
            "taskCountMax": 6, "taskCountMin": 2, "minTriggerScaleActionFrequencyMillis": 600000,
            "autoScalerStrategy": "lagBased", "lagCollectionIntervalMillis": 30000,
            "lagCollectionRangeMillis": 600000, "scaleOutThreshold": 6000000,
            "triggerScaleOutFractionThreshold": 0.3, "scaleInThreshold": 1000000,
            "triggerScaleInFractionThreshold": 0.9, "scaleActionStartDelayMillis": 300000,
            "scaleActionPeriodMillis": 60000, "scaleInStep": 1, "scaleOutStep": 2,
            "lagAggregate": "MAX"})"));
  const v1::AutoScalerConfig& a = c.spec.io_config().auto_scaler_config();
  EXPECT_TRUE(a.enable_task_auto_scaler());
  EXPECT_EQ(a.task_count_max(), 6);
  EXPECT_EQ(a.task_count_min(), 2);
  EXPECT_DOUBLE_EQ(a.trigger_scale_out_fraction_threshold(), 0.3);
  EXPECT_EQ(a.scale_out_threshold(), 6000000);
  EXPECT_EQ(a.lag_aggregate(), "MAX");
  absl::StatusOr<v1::SupervisorSpec> normalized = NormalizeSpec(c.spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  absl::StatusOr<std::string> druid = ToDruidJson(*normalized);
  ASSERT_TRUE(druid.ok()) << druid.status();
  EXPECT_THAT(*druid, HasSubstr("\"triggerScaleInFractionThreshold\": 0.9"));
  EXPECT_THAT(*druid, HasSubstr("\"scaleOutThreshold\": 6000000"));
  absl::StatusOr<DruidConversion> back = FromDruidJson(*druid, {});
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << *druid;
  google::protobuf::util::MessageDifferencer differ;
  std::string differences;
  differ.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differ.Compare(NormalizeSpec(back->spec).value(), *normalized)) << differences;
  EXPECT_THAT(Error(Minimal("", R"(, "autoScalerConfig": {"scaleOutThreshold": "lots"})")),
              HasSubstr("spec.ioConfig.autoScalerConfig.scaleOutThreshold: expected an integer"));
  EXPECT_THAT(Error(Minimal("", R"(, "autoScalerConfig": {"triggerScaleInFractionThreshold": "x"})")),
              HasSubstr("spec.ioConfig.autoScalerConfig.triggerScaleInFractionThreshold: expected a number"));
}

TEST(DruidSpecTest, TheTopicPatternMapsBothWays) {
  const std::string json = absl::StrReplaceAll(
      Minimal(R"(, "dimensionsSpec": {"dimensions": ["page"]})"),
      {{R"("topic": "t")", R"("topicPattern": "metrics-.*")"}});
  DruidConversion c = Convert(json);
  EXPECT_EQ(c.spec.io_config().topic_pattern(), "metrics-.*");
  EXPECT_TRUE(c.spec.io_config().topic().empty());
  absl::StatusOr<v1::SupervisorSpec> normalized = NormalizeSpec(c.spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  absl::StatusOr<std::string> druid = ToDruidJson(*normalized);
  ASSERT_TRUE(druid.ok()) << druid.status();
  EXPECT_THAT(*druid, HasSubstr("\"topicPattern\": \"metrics-.*\""));
  EXPECT_THAT(*druid, Not(HasSubstr("\"topic\":")));
  absl::StatusOr<DruidConversion> back = FromDruidJson(*druid, {});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spec.io_config().topic_pattern(), "metrics-.*");
}

TEST(DruidSpecTest, KafkaInputFormatPartsSluiceCannotTakeAreNamed) {
  EXPECT_THAT(Error(Minimal("", R"(, "inputFormat": {"type": "kafka", "keyFormat": {"type": "avro_stream"}})")),
              HasSubstr("spec.ioConfig.inputFormat.keyFormat: sluice takes the key as one string"));
  EXPECT_THAT(Error(Minimal("", R"(, "inputFormat": {"type": "kafka", "valueFormat": {"type": "avro_stream"}})")),
              HasSubstr("spec.ioConfig.inputFormat.valueFormat.type: \"avro_stream\" is not supported"));
  EXPECT_THAT(Error(Minimal("", R"(, "inputFormat": {"type": "kafka", "headerFormat": {"type": "json"}})")),
              HasSubstr("spec.ioConfig.inputFormat.headerFormat.type: \"json\" is not supported"));
  EXPECT_THAT(Error(Minimal("", R"(, "headerBasedFilterConfig": {"filter": {"type": "selector", "dimension": "a", "extractionFn": {}}})")),
              HasSubstr("spec.ioConfig.headerBasedFilterConfig.filter.extractionFn is not supported"));
}

TEST(DruidSpecTest, BadJsonAndWrongTypesAreInvalidArgumentWithAClearMessage) {
  EXPECT_THAT(Error("{\"type\": \"kafka\", "), HasSubstr("the Druid spec is not valid JSON"));
  EXPECT_THAT(Error("[1, 2]"), HasSubstr("a Druid supervisor spec is a JSON object, not an array"));
  EXPECT_THAT(Error(R"({"spec": {"dataSchema": {"dataSource": "d"}, "ioConfig": {"topic": "t"}}})"),
              HasSubstr("type: missing"));
  EXPECT_THAT(Error(R"({"type": "kafka", "spec": {}})"), HasSubstr("spec.dataSchema: missing"));
  const std::string m = Error(Minimal("", R"(, "taskCount": "two", "useEarliestOffset": "yes", "taskDuration": "1 hour")",
                                      R"({"type": "kafka", "maxRowsPerSegment": 1.5})"));
  EXPECT_THAT(m, HasSubstr("spec.ioConfig.taskCount: expected an integer, got \"two\""));
  EXPECT_THAT(m, HasSubstr("spec.ioConfig.useEarliestOffset: expected true or false, got a string"));
  EXPECT_THAT(m, HasSubstr("spec.ioConfig.taskDuration: \"1 hour\" is not an ISO-8601 period"));
  EXPECT_THAT(m, HasSubstr("spec.tuningConfig.maxRowsPerSegment: expected an integer, got a number"));
  EXPECT_THAT(Error(Minimal(R"(, "dimensionsSpec": {"dimensions": "page"})")),
              HasSubstr("spec.dataSchema.dimensionsSpec.dimensions: expected an array, got a string"));
}

// protobuf's parser spends time quadratic in the depth of nested arrays: a
// deep spec is refused, naming its depth, before the parser sees it.
TEST(DruidSpecTest, DeeplyNestedJsonIsRefusedBeforeParsing) {
  constexpr int kDepth = 100000;
  std::string objects;
  for (int i = 0; i < kDepth; ++i) objects += "{\"a\":";
  objects += "1" + std::string(kDepth, '}');
  for (const std::string& deep :
       {std::string(kDepth, '[') + std::string(kDepth, ']'), objects}) {
    EXPECT_THAT(Error(Minimal(absl::StrCat(R"(, "transformSpec": )", deep))),
                HasSubstr("the Druid spec nests arrays and objects 100003 levels deep"));
  }
  EXPECT_TRUE(FromDruidJson(Minimal(""), {}).ok());
}

TEST(DruidSpecTest, DruidsGetAnswerWithTheSpecTwiceIsTakenWhenBothAgree) {
  const std::string parts =
      R"("dataSchema": {"dataSource": "d"}, "ioConfig": {"topic": "t"}, "tuningConfig": {"type": "kafka"})";
  DruidConversion c = Convert(absl::StrCat(R"({"type": "kafka", "id": "d", "context": null, "suspended": false, "spec": {)",
                                           parts, "}, ", parts, "}"));
  EXPECT_EQ(c.spec.datasource(), "d");
  EXPECT_THAT(Error(absl::StrCat(R"({"type": "kafka", "spec": {)", parts,
                                 R"(}, "ioConfig": {"topic": "other"}})")),
              HasSubstr("ioConfig: differs from spec.ioConfig"));
  EXPECT_THAT(Error(absl::StrCat(R"({"type": "kafka", "id": "e", "spec": {)", parts, "}}")),
              HasSubstr("id: \"e\" is not the dataSource \"d\""));
}

// sluice -> Druid -> sluice gives the same spec, for each test spec and for a
// spec with every field set.
TEST(DruidSpecTest, TheDruidFormOfASpecConvertsBackToTheSameSpec) {
  std::vector<v1::SupervisorSpec> specs;
  for (const char* file : {"tutorial-kafka.json", "rollup-metrics.json", "discovery-iso.json",
                           "sasl-consumer.json"}) {
    absl::StatusOr<v1::SupervisorSpec> s = NormalizeSpec(Convert(Testdata(file)).spec);
    ASSERT_TRUE(s.ok()) << file << ": " << s.status();
    specs.push_back(*s);
  }
  v1::SupervisorSpec full = specs[1];
  full.mutable_io_config()->set_late_message_rejection_period("");
  full.mutable_io_config()->set_late_message_rejection_start_date_time("2026-01-01T00:00:00Z");
  full.mutable_io_config()->set_stop_task_count(2);
  full.mutable_io_config()->mutable_idle_config()->set_enabled(true);
  full.mutable_io_config()->mutable_idle_config()->set_inactive_after_millis(120000);
  full.mutable_tuning_config()->set_intermediate_handoff_period("PT30M");
  full.mutable_tuning_config()->set_handoff_mode(v1::HANDOFF_MODE_LOADER);
  full.mutable_tuning_config()->set_checkpoint_retry_period("PT5S");
  full.mutable_tuning_config()->set_reset_offset_automatically(true);
  full.set_suspended(true);
  absl::StatusOr<v1::SupervisorSpec> normalized_full = NormalizeSpec(full);
  ASSERT_TRUE(normalized_full.ok()) << normalized_full.status();
  specs.push_back(*normalized_full);
  for (const v1::SupervisorSpec& spec : specs) {
    absl::StatusOr<std::string> druid = ToDruidJson(spec);
    ASSERT_TRUE(druid.ok()) << druid.status();
    EXPECT_THAT(*druid, HasSubstr("\"type\": \"kafka\""));
    absl::StatusOr<DruidConversion> back = FromDruidJson(*druid, {});
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << *druid;
    EXPECT_TRUE(back->warnings.empty());
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back->spec, spec))
        << *druid << "\n" << back->spec.DebugString() << "\nvs\n" << spec.DebugString();
  }
}

constexpr char kTransformSpec[] = R"json(, "dimensionsSpec": {"dimensions": ["page"]},
"transformSpec": {
  "transforms": [
    {"type": "expression", "name": "page_lower", "expression": "lower(page)"},
    {"type": "expression", "name": "day", "expression": "timestamp_format(__time, 'yyyy-MM-dd')"}
  ],
  "filter": {"type": "and", "fields": [
    {"type": "selector", "dimension": "isRobot", "value": "false"},
    {"type": "not", "field": {"type": "in", "dimension": "channel", "values": ["#test", 5]}},
    {"type": "bound", "dimension": "delta", "lower": 0, "lowerStrict": true,
     "ordering": {"type": "numeric"}},
    {"type": "or", "fields": [{"type": "selector", "dimension": "user", "value": null},
                              {"type": "bound", "dimension": "user", "upper": "m",
                               "ordering": "lexicographic"}]}
  ]}
})json";

TEST(DruidSpecTest, TransformSpecMapsAndConvertsBack) {
  DruidConversion c = Convert(Minimal(kTransformSpec));
  EXPECT_TRUE(c.warnings.empty());
  const v1::TransformSpec& t = c.spec.data_schema().transform_spec();
  ASSERT_EQ(t.transforms_size(), 2);
  EXPECT_EQ(t.transforms(0).type(), "expression");
  EXPECT_EQ(t.transforms(0).name(), "page_lower");
  EXPECT_EQ(t.transforms(1).expression(), "timestamp_format(__time, 'yyyy-MM-dd')");
  const v1::DimFilter& f = t.filter();
  EXPECT_EQ(f.type(), "and");
  ASSERT_EQ(f.fields_size(), 4);
  EXPECT_EQ(f.fields(0).value(), "false");
  EXPECT_EQ(f.fields(1).field().values(1), "5");
  EXPECT_EQ(f.fields(2).lower(), "0");
  EXPECT_TRUE(f.fields(2).lower_strict());
  EXPECT_EQ(f.fields(2).ordering(), "numeric");
  EXPECT_FALSE(f.fields(3).fields(0).has_value()) << "a null value matches null";
  absl::StatusOr<v1::SupervisorSpec> normalized = NormalizeSpec(c.spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();

  absl::StatusOr<std::string> druid = ToDruidJson(*normalized);
  ASSERT_TRUE(druid.ok()) << druid.status();
  EXPECT_THAT(*druid, HasSubstr("\"transformSpec\""));
  absl::StatusOr<DruidConversion> back = FromDruidJson(*druid, {});
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << *druid;
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back->spec, *normalized))
      << back->spec.DebugString() << "\nvs\n" << normalized->DebugString();
}

TEST(DruidSpecTest, UnsupportedTransformsAndFiltersAreNamed) {
  const std::string message = Error(Minimal(R"json(, "transformSpec": {
    "transforms": [{"type": "javascript", "name": "x", "function": "f"}],
    "filter": {"type": "or", "fields": [
      {"type": "in", "dimension": "a", "values": ["x", null]},
      {"type": "like", "dimension": "a", "pattern": "x%"},
      {"type": "selector", "dimension": "a", "value": "x", "extractionFn": {"type": "upper"}},
      {"type": "bound", "dimension": "a", "lower": "1", "ordering": "alphanumeric"}]}
  })json"));
  for (const char* part : {
           "spec.dataSchema.transformSpec.transforms[0].type: \"javascript\" is not supported by "
           "sluice (only expression)",
           "spec.dataSchema.transformSpec.transforms[0].function is not supported by sluice",
           "spec.dataSchema.transformSpec.filter.fields[0].values[1]: null among the values",
           "spec.dataSchema.transformSpec.filter.fields[1].type: \"like\" is not supported",
           "spec.dataSchema.transformSpec.filter.fields[2].extractionFn is not supported by sluice",
           "spec.dataSchema.transformSpec.filter.fields[3].ordering: \"alphanumeric\" is not "
           "supported by sluice (lexicographic, numeric)"}) {
    EXPECT_THAT(message, HasSubstr(part));
  }
  // Allowed: the unsupported transform and the whole filter are left out.
  DruidConversion c = Convert(Minimal(R"json(, "transformSpec": {
    "transforms": [{"type": "javascript", "name": "x", "function": "f"},
                   {"type": "expression", "name": "y", "expression": "upper(a)"}],
    "filter": {"type": "and", "fields": [{"type": "selector", "dimension": "a", "value": "x"},
                                         {"type": "like", "dimension": "a", "pattern": "x%"}]}
  })json"), /*allow_unsupported=*/true);
  const v1::TransformSpec& t = c.spec.data_schema().transform_spec();
  ASSERT_EQ(t.transforms_size(), 1);
  EXPECT_EQ(t.transforms(0).name(), "y");
  EXPECT_FALSE(t.has_filter());
  EXPECT_TRUE(NormalizeSpec(c.spec).ok()) << NormalizeSpec(c.spec).status();
}

TEST(DruidSpecTest, TheDruidFormHasDruidsShape) {
  absl::StatusOr<v1::SupervisorSpec> spec = NormalizeSpec(Convert(Testdata("tutorial-kafka.json")).spec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::string> druid = ToDruidJson(*spec);
  ASSERT_TRUE(druid.ok()) << druid.status();
  EXPECT_EQ(druid->rfind("{\n  \"spec\": {\n    \"dataSchema\": {\n", 0), 0u) << *druid;
  EXPECT_THAT(*druid, HasSubstr("\"dataSource\": \"wikipedia\""));
  EXPECT_THAT(*druid, HasSubstr("\"inputFormat\": {\n        \"type\": \"json\"\n      }"));
  EXPECT_THAT(*druid, HasSubstr("\"segmentGranularity\": \"DAY\""));
  EXPECT_THAT(*druid, HasSubstr("\"handoffConditionTimeout\": 900000"));
  EXPECT_THAT(*druid, HasSubstr("\"pollTimeout\": 100"));
  EXPECT_THAT(*druid, Not(HasSubstr("handoffMode\": \"LOADER")));
}

}  // namespace
}  // namespace sluice::druid
