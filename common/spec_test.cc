#include "common/spec.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "google/protobuf/util/json_util.h"

namespace sluice {
namespace {

v1::SupervisorSpec ValidSpec() {
  v1::SupervisorSpec spec;
  const char* json = R"({
    "datasource": "wiki",
    "ioConfig": {"topic": "wiki-edits",
                 "consumerProperties": {"bootstrap.servers": "127.0.0.1:9092"}},
    "dataSchema": {
      "dimensionsSpec": {"dimensions": ["page", "user"]},
      "metricsSpec": [{"type": "count", "name": "count"},
                      {"type": "longSum", "name": "added"}]
    }
  })";
  auto status = google::protobuf::util::JsonStringToMessage(json, &spec);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return spec;
}

TEST(NormalizeSpec, FillsDefaults) {
  auto spec = NormalizeSpec(ValidSpec());
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->io_config().task_count(), 1);
  EXPECT_EQ(spec->io_config().replicas(), 1);
  EXPECT_EQ(spec->io_config().task_duration(), "PT1H");
  EXPECT_EQ(spec->io_config().period(), "PT30S");
  EXPECT_EQ(spec->io_config().completion_timeout(), "PT30M");
  EXPECT_EQ(spec->io_config().stop_task_count(), 1);
  EXPECT_EQ(spec->data_schema().timestamp_spec().column(), "timestamp");
  EXPECT_EQ(spec->data_schema().timestamp_spec().format(), "auto");
  EXPECT_EQ(spec->data_schema().granularity_spec().segment_granularity(), "HOUR");
  EXPECT_EQ(spec->data_schema().granularity_spec().query_granularity(), "NONE");
  EXPECT_TRUE(spec->data_schema().granularity_spec().rollup());
  EXPECT_EQ(spec->data_schema().metrics_spec(1).field_name(), "added");
  EXPECT_EQ(spec->tuning_config().max_rows_in_memory(), 150000);
  EXPECT_EQ(spec->tuning_config().max_rows_per_segment(), 5000000);
  EXPECT_EQ(spec->tuning_config().max_total_rows(), 20000000);
  EXPECT_EQ(spec->tuning_config().intermediate_persist_period(), "PT10M");
  EXPECT_EQ(spec->tuning_config().handoff_condition_timeout(), "PT15M");
  EXPECT_FALSE(spec->tuning_config().has_max_parse_exceptions());
  EXPECT_EQ(spec->tuning_config().handoff_mode(), v1::HANDOFF_MODE_DEEP_STORAGE);
  // Normalizing twice changes nothing.
  auto again = NormalizeSpec(*spec);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->SerializeAsString(), spec->SerializeAsString());
}

TEST(NormalizeSpec, IcebergTableTakesItsDefaultsAndIsCheckedByField) {
  // Unset: no table, no defaults shown.
  auto plain = NormalizeSpec(ValidSpec());
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->has_iceberg_table());

  v1::SupervisorSpec spec = ValidSpec();
  spec.set_datasource("wiki-edits.v2");
  spec.mutable_iceberg_table();
  auto normalized = NormalizeSpec(spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  EXPECT_EQ(normalized->iceberg_table().table_namespace(), "sluice");
  EXPECT_EQ(normalized->iceberg_table().table_name(), "wiki_edits_v2");

  auto refused = [](std::function<void(v1::SupervisorSpec*)> change) {
    v1::SupervisorSpec s = ValidSpec();
    s.mutable_iceberg_table();
    change(&s);
    return NormalizeSpec(s).status();
  };
  auto names = [](const absl::Status& status, const std::string& field) {
    return status.code() == absl::StatusCode::kInvalidArgument &&
           status.message().find(field) != absl::string_view::npos;
  };
  EXPECT_TRUE(names(refused([](auto* s) { s->mutable_iceberg_table()->set_table_name("bad-name"); }),
                    "icebergTable.tableName"));
  EXPECT_TRUE(names(refused([](auto* s) { s->mutable_iceberg_table()->set_table_namespace("9ns"); }),
                    "icebergTable.tableNamespace"));
  // The default of a datasource not starting with a letter is no table name.
  EXPECT_TRUE(names(refused([](auto* s) { s->set_datasource("2024wiki"); }),
                    "icebergTable.tableName"));
  EXPECT_TRUE(names(refused([](auto* s) {
                      s->mutable_data_schema()->mutable_dimensions_spec()->set_dimensions(
                          0, "__time_day");
                    }),
                    "dataSchema.dimensionsSpec.dimensions[0]"));
  EXPECT_TRUE(names(refused([](auto* s) {
                      s->mutable_data_schema()->mutable_metrics_spec(1)->set_name(
                          std::string(256, 'm'));
                    }),
                    "dataSchema.metricsSpec[1].name"));
  // The same names are fine without a table.
  v1::SupervisorSpec native = ValidSpec();
  native.mutable_data_schema()->mutable_dimensions_spec()->set_dimensions(0, "__time_day");
  EXPECT_TRUE(NormalizeSpec(native).ok());
}

TEST(NormalizeSpec, CompactionTakesDruidsDefaultsAndIsCheckedByField) {
  auto plain = NormalizeSpec(ValidSpec());
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->has_compaction());
  // Without a config, CompactDataSource uses the defaults.
  auto defaults = ParseCompactionPolicy(*plain);
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->target_rows_per_segment, 5000000);
  EXPECT_EQ(defaults->skip_offset_from_latest, absl::Hours(24));

  v1::SupervisorSpec spec = ValidSpec();
  auto parsed = google::protobuf::util::JsonStringToMessage(
      R"({"targetRowsPerSegment": "200000", "skipOffsetFromLatest": "PT10M"})",
      spec.mutable_compaction());
  ASSERT_TRUE(parsed.ok()) << parsed.ToString();
  auto normalized = NormalizeSpec(spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  EXPECT_EQ(normalized->compaction().target_rows_per_segment(), 200000);
  EXPECT_EQ(normalized->compaction().skip_offset_from_latest(), "PT10M");
  EXPECT_EQ(normalized->compaction().max_input_segments(), 100);
  EXPECT_EQ(normalized->compaction().period(), "PT1M");
  EXPECT_EQ(normalized->compaction().snapshot_retention(), "P7D");
  EXPECT_EQ(normalized->compaction().snapshots_to_keep(), 10);
  auto policy = ParseCompactionPolicy(*normalized);
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->target_rows_per_segment, 200000);
  EXPECT_EQ(policy->skip_offset_from_latest, absl::Minutes(10));
  EXPECT_EQ(policy->period, absl::Minutes(1));
  EXPECT_EQ(policy->snapshot_retention, absl::Hours(24 * 7));

  auto refused = [](std::function<void(v1::CompactionConfig*)> change) {
    v1::SupervisorSpec s = ValidSpec();
    change(s.mutable_compaction());
    return NormalizeSpec(s).status();
  };
  auto names = [](const absl::Status& status, const std::string& field) {
    return status.code() == absl::StatusCode::kInvalidArgument &&
           status.message().find(field) != absl::string_view::npos;
  };
  EXPECT_TRUE(names(refused([](auto* c) { c->set_target_rows_per_segment(0); }),
                    "targetRowsPerSegment"));
  EXPECT_TRUE(names(refused([](auto* c) { c->set_max_input_segments(1); }), "maxInputSegments"));
  EXPECT_TRUE(names(refused([](auto* c) { c->set_skip_offset_from_latest("soon"); }),
                    "compaction.skipOffsetFromLatest"));
  EXPECT_TRUE(names(refused([](auto* c) { c->set_period("PT0.5S"); }), "compaction.period"));
  EXPECT_TRUE(names(refused([](auto* c) { c->set_snapshot_retention("PT1S"); }),
                    "compaction.snapshotRetention"));
}

TEST(NormalizeSpec, ATopicPatternStandsInForTheTopic) {
  v1::SupervisorSpec spec = ValidSpec();
  spec.mutable_io_config()->clear_topic();
  spec.mutable_io_config()->set_topic_pattern("wiki-(en|de)");
  auto normalized = NormalizeSpec(spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  EXPECT_EQ(normalized->io_config().topic_pattern(), "wiki-(en|de)");
  EXPECT_TRUE(normalized->io_config().topic().empty());
}

TEST(NormalizeSpec, IdleConfigTakesDruidsDefaultAndItsBounds) {
  v1::SupervisorSpec spec = ValidSpec();
  spec.mutable_io_config()->mutable_idle_config()->set_enabled(true);
  auto normalized = NormalizeSpec(spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  EXPECT_EQ(normalized->io_config().idle_config().inactive_after_millis(), 600000);
  EXPECT_FALSE(NormalizeSpec(ValidSpec())->io_config().has_idle_config());
  spec.mutable_io_config()->mutable_idle_config()->set_inactive_after_millis(999);
  absl::Status refused = NormalizeSpec(spec).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("ioConfig.idleConfig.inactiveAfterMillis"), std::string::npos)
      << refused;
}

TEST(NormalizeSpec, AutoScalerConfigTakesDruidsDefaults) {
  v1::SupervisorSpec spec = ValidSpec();
  v1::AutoScalerConfig* c = spec.mutable_io_config()->mutable_auto_scaler_config();
  c->set_enable_task_auto_scaler(true);
  c->set_task_count_min(1);
  c->set_task_count_max(6);
  auto normalized = NormalizeSpec(spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  const v1::AutoScalerConfig& got = normalized->io_config().auto_scaler_config();
  EXPECT_EQ(got.auto_scaler_strategy(), "lagBased");
  EXPECT_EQ(got.lag_aggregate(), "SUM");
  EXPECT_EQ(got.lag_collection_interval_millis(), 30000);
  EXPECT_EQ(got.lag_collection_range_millis(), 600000);
  EXPECT_EQ(got.scale_out_threshold(), 6000000);
  EXPECT_DOUBLE_EQ(got.trigger_scale_out_fraction_threshold(), 0.3);
  EXPECT_EQ(got.scale_in_threshold(), 1000000);
  EXPECT_DOUBLE_EQ(got.trigger_scale_in_fraction_threshold(), 0.9);
  EXPECT_EQ(got.scale_action_start_delay_millis(), 300000);
  EXPECT_EQ(got.scale_action_period_millis(), 60000);
  EXPECT_EQ(got.scale_in_step(), 1);
  EXPECT_EQ(got.scale_out_step(), 2);
  EXPECT_EQ(got.min_trigger_scale_action_frequency_millis(), 600000);
  EXPECT_FALSE(got.has_task_count_start());
  // Every group the autoscaler may run may roll over at once.
  EXPECT_EQ(normalized->io_config().stop_task_count(), 6);
  EXPECT_FALSE(NormalizeSpec(ValidSpec())->io_config().has_auto_scaler_config());
}

TEST(NormalizeSpec, AutoScalerConfigErrorsNameTheField) {
  auto refused = [](const std::function<void(v1::AutoScalerConfig*)>& edit) {
    v1::SupervisorSpec spec = ValidSpec();
    v1::AutoScalerConfig* c = spec.mutable_io_config()->mutable_auto_scaler_config();
    c->set_enable_task_auto_scaler(true);
    c->set_task_count_min(2);
    c->set_task_count_max(4);
    edit(c);
    absl::Status status = NormalizeSpec(spec).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    return std::string(status.message());
  };
  EXPECT_NE(refused([](auto* c) { c->clear_task_count_max(); }).find("taskCountMax is required"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_task_count_min(5); }).find("taskCountMin 5 is more"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_task_count_start(1); }).find("taskCountStart"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_trigger_scale_out_fraction_threshold(1.5); })
                .find("triggerScaleOutFractionThreshold"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_trigger_scale_in_fraction_threshold(0); })
                .find("triggerScaleInFractionThreshold"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_scale_in_threshold(7000000); }).find("scaleInThreshold"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_auto_scaler_strategy("costBased"); })
                .find("autoScalerStrategy"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_lag_aggregate("MEDIAN"); }).find("lagAggregate"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_lag_collection_range_millis(100); })
                .find("lagCollectionRangeMillis"),
            std::string::npos);
  EXPECT_NE(refused([](auto* c) { c->set_scale_out_step(0); }).find("scaleOutStep"),
            std::string::npos);
}

TEST(NormalizeSpec, TaskCountZeroInJsonIsAnErrorNotTheDefault) {
  v1::SupervisorSpec spec = ValidSpec();
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(R"({"ioConfig": {"taskCount": 0}})",
                                                         &spec, {})
                  .ok());
  v1::SupervisorSpec merged = ValidSpec();
  merged.MergeFrom(spec);
  ASSERT_TRUE(merged.io_config().has_task_count());
  auto normalized = NormalizeSpec(merged);
  ASSERT_FALSE(normalized.ok());
  EXPECT_EQ(normalized.status().message(), "ioConfig.taskCount must be at least 1 (got 0)");
}

TEST(NormalizeSpec, KeepsExplicitRollupOff) {
  v1::SupervisorSpec spec = ValidSpec();
  spec.mutable_data_schema()->mutable_granularity_spec()->set_rollup(false);
  auto normalized = NormalizeSpec(spec);
  ASSERT_TRUE(normalized.ok());
  EXPECT_FALSE(normalized->data_schema().granularity_spec().rollup());
}

struct BadCase {
  const char* name;
  std::function<void(v1::SupervisorSpec*)> mutate;
  const char* expected_message_part;
};

class InvalidSpecTest : public testing::TestWithParam<BadCase> {};

TEST_P(InvalidSpecTest, NamesTheField) {
  v1::SupervisorSpec spec = ValidSpec();
  GetParam().mutate(&spec);
  auto normalized = NormalizeSpec(spec);
  ASSERT_FALSE(normalized.ok()) << GetParam().name;
  EXPECT_EQ(normalized.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(normalized.status().message().find(GetParam().expected_message_part),
            std::string::npos)
      << "message: " << normalized.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    EveryField, InvalidSpecTest,
    testing::Values(
        BadCase{"no_datasource", [](auto* s) { s->clear_datasource(); }, "datasource must not be empty"},
        BadCase{"path_datasource", [](auto* s) { s->set_datasource("../etc"); }, "datasource"},
        BadCase{"no_topic", [](auto* s) { s->mutable_io_config()->clear_topic(); }, "ioConfig.topic is required"},
        BadCase{"bad_topic", [](auto* s) { s->mutable_io_config()->set_topic("a b"); }, "ioConfig.topic"},
        BadCase{"topic_and_pattern",
                [](auto* s) { s->mutable_io_config()->set_topic_pattern("wiki-.*"); },
                "ioConfig.topicPattern and ioConfig.topic are exclusive"},
        BadCase{"bad_pattern",
                [](auto* s) {
                  s->mutable_io_config()->clear_topic();
                  s->mutable_io_config()->set_topic_pattern("(wiki");
                },
                "ioConfig.topicPattern \"(wiki\" is not an RE2 regular expression"},
        BadCase{"backreference_pattern",
                [](auto* s) {
                  s->mutable_io_config()->clear_topic();
                  s->mutable_io_config()->set_topic_pattern("(a)\\1");
                },
                "ioConfig.topicPattern"},
        BadCase{"no_bootstrap",
                [](auto* s) { s->mutable_io_config()->mutable_consumer_properties()->clear(); },
                "bootstrap.servers"},
        BadCase{"auto_commit",
                [](auto* s) {
                  (*s->mutable_io_config()->mutable_consumer_properties())["enable.auto.commit"] = "true";
                },
                "enable.auto.commit"},
        BadCase{"task_count", [](auto* s) { s->mutable_io_config()->set_task_count(-1); }, "ioConfig.taskCount"},
        BadCase{"replicas", [](auto* s) { s->mutable_io_config()->set_replicas(-2); }, "ioConfig.replicas"},
        BadCase{"task_duration", [](auto* s) { s->mutable_io_config()->set_task_duration("1 hour"); },
                "ioConfig.taskDuration"},
        BadCase{"task_duration_short", [](auto* s) { s->mutable_io_config()->set_task_duration("PT0.1S"); },
                "ioConfig.taskDuration must be at least PT1S"},
        BadCase{"period", [](auto* s) { s->mutable_io_config()->set_period("PT0.01S"); }, "ioConfig.period"},
        BadCase{"start_delay", [](auto* s) { s->mutable_io_config()->set_start_delay("P1M"); },
                "ioConfig.startDelay"},
        BadCase{"completion_timeout", [](auto* s) { s->mutable_io_config()->set_completion_timeout("x"); },
                "ioConfig.completionTimeout"},
        BadCase{"poll_timeout", [](auto* s) { s->mutable_io_config()->set_poll_timeout("PT1M"); },
                "ioConfig.pollTimeout must be at most"},
        BadCase{"late_both",
                [](auto* s) {
                  s->mutable_io_config()->set_late_message_rejection_period("PT1H");
                  s->mutable_io_config()->set_late_message_rejection_start_date_time("2026-01-01");
                },
                "exclusive"},
        BadCase{"late_instant",
                [](auto* s) { s->mutable_io_config()->set_late_message_rejection_start_date_time("yesterday"); },
                "ioConfig.lateMessageRejectionStartDateTime"},
        BadCase{"early", [](auto* s) { s->mutable_io_config()->set_early_message_rejection_period("soon"); },
                "ioConfig.earlyMessageRejectionPeriod"},
        BadCase{"ts_format",
                [](auto* s) { s->mutable_data_schema()->mutable_timestamp_spec()->set_format("rfc822"); },
                "dataSchema.timestampSpec.format"},
        BadCase{"dim_is_ts",
                [](auto* s) { s->mutable_data_schema()->mutable_dimensions_spec()->add_dimensions("timestamp"); },
                "is the timestamp column"},
        BadCase{"dim_twice",
                [](auto* s) { s->mutable_data_schema()->mutable_dimensions_spec()->add_dimensions("page"); },
                "dimensions[2]"},
        BadCase{"dim_empty",
                [](auto* s) { s->mutable_data_schema()->mutable_dimensions_spec()->add_dimensions(""); },
                "must not be empty"},
        BadCase{"metric_type", [](auto* s) { s->mutable_data_schema()->mutable_metrics_spec(0)->set_type("avg"); },
                "dataSchema.metricsSpec[0].type"},
        BadCase{"metric_name", [](auto* s) { s->mutable_data_schema()->mutable_metrics_spec(1)->clear_name(); },
                "dataSchema.metricsSpec[1].name is required"},
        BadCase{"metric_clash",
                [](auto* s) { s->mutable_data_schema()->mutable_metrics_spec(1)->set_name("page"); },
                "dataSchema.metricsSpec[1].name"},
        BadCase{"segment_granularity",
                [](auto* s) {
                  s->mutable_data_schema()->mutable_granularity_spec()->set_segment_granularity("FORTNIGHT");
                },
                "dataSchema.granularitySpec.segmentGranularity"},
        BadCase{"segment_granularity_fine",
                [](auto* s) {
                  s->mutable_data_schema()->mutable_granularity_spec()->set_segment_granularity("SECOND");
                },
                "MINUTE or coarser"},
        BadCase{"query_coarser",
                [](auto* s) {
                  s->mutable_data_schema()->mutable_granularity_spec()->set_query_granularity("DAY");
                },
                "coarser than the segment granularity"},
        BadCase{"max_rows_in_memory", [](auto* s) { s->mutable_tuning_config()->set_max_rows_in_memory(-5); },
                "tuningConfig.maxRowsInMemory"},
        BadCase{"max_bytes_in_memory", [](auto* s) { s->mutable_tuning_config()->set_max_bytes_in_memory(10); },
                "tuningConfig.maxBytesInMemory"},
        BadCase{"max_rows_per_segment",
                [](auto* s) { s->mutable_tuning_config()->set_max_rows_per_segment(-1); },
                "tuningConfig.maxRowsPerSegment"},
        BadCase{"max_total_rows", [](auto* s) { s->mutable_tuning_config()->set_max_total_rows(-1); },
                "tuningConfig.maxTotalRows"},
        BadCase{"persist_period",
                [](auto* s) { s->mutable_tuning_config()->set_intermediate_persist_period("10m"); },
                "tuningConfig.intermediatePersistPeriod"},
        BadCase{"handoff_period",
                [](auto* s) { s->mutable_tuning_config()->set_intermediate_handoff_period("PT0S"); },
                "tuningConfig.intermediateHandoffPeriod"},
        BadCase{"handoff_timeout",
                [](auto* s) { s->mutable_tuning_config()->set_handoff_condition_timeout("forever"); },
                "tuningConfig.handoffConditionTimeout"},
        BadCase{"max_parse_exceptions",
                [](auto* s) { s->mutable_tuning_config()->set_max_parse_exceptions(-1); },
                "tuningConfig.maxParseExceptions"},
        BadCase{"saved_parse_exceptions",
                [](auto* s) { s->mutable_tuning_config()->set_max_saved_parse_exceptions(5000); },
                "tuningConfig.maxSavedParseExceptions"},
        BadCase{"checkpoint_retry",
                [](auto* s) { s->mutable_tuning_config()->set_checkpoint_retry_period("PT0.001S"); },
                "tuningConfig.checkpointRetryPeriod"},
        BadCase{"chat_timeout", [](auto* s) { s->mutable_tuning_config()->set_chat_timeout("nope"); },
                "tuningConfig.chatTimeout"},
        BadCase{"chat_retries", [](auto* s) { s->mutable_tuning_config()->set_chat_retries(-1); },
                "tuningConfig.chatRetries"},
        // What issue 12 found accepted at submit.
        BadCase{"task_count_zero", [](auto* s) { s->mutable_io_config()->set_task_count(0); },
                "ioConfig.taskCount must be at least 1 (got 0)"},
        BadCase{"replicas_zero", [](auto* s) { s->mutable_io_config()->set_replicas(0); },
                "ioConfig.replicas must be at least 1 (got 0)"},
        BadCase{"replicas_huge", [](auto* s) { s->mutable_io_config()->set_replicas(2147483647); },
                "ioConfig.replicas must be at most 16 (got 2147483647)"},
        BadCase{"task_duration_huge",
                [](auto* s) { s->mutable_io_config()->set_task_duration("P100000000000D"); },
                "ioConfig.taskDuration must be at most"},
        BadCase{"late_year_minus_one",
                [](auto* s) {
                  s->mutable_io_config()->set_late_message_rejection_start_date_time(
                      "-0001-01-01T00:00:00Z");
                },
                "ioConfig.lateMessageRejectionStartDateTime"},
        BadCase{"ts_column_nul",
                [](auto* s) {
                  s->mutable_data_schema()->mutable_timestamp_spec()->set_column(std::string(1, '\0'));
                },
                "dataSchema.timestampSpec.column contains the control character 0x00"},
        BadCase{"dim_invalid_utf8",
                [](auto* s) { s->mutable_data_schema()->mutable_dimensions_spec()->add_dimensions("\xc3("); },
                "is not valid UTF-8"},
        BadCase{"too_many_dimensions",
                [](auto* s) {
                  auto* dims = s->mutable_data_schema()->mutable_dimensions_spec();
                  for (int i = 0; i < 100000; ++i) dims->add_dimensions("d" + std::to_string(i));
                },
                "dataSchema.dimensionsSpec.dimensions has 100002 elements; at most 65536"},
        BadCase{"metric_named_timestamp",
                [](auto* s) { s->mutable_data_schema()->mutable_metrics_spec(1)->set_name("timestamp"); },
                "dataSchema.metricsSpec[1].name \"timestamp\" is the timestamp column"},
        BadCase{"metric_named_time",
                [](auto* s) { s->mutable_data_schema()->mutable_metrics_spec(1)->set_name("__time"); },
                "dataSchema.metricsSpec[1].name"},
        BadCase{"max_bytes_in_memory_huge",
                [](auto* s) { s->mutable_tuning_config()->set_max_bytes_in_memory(INT64_MAX); },
                "tuningConfig.maxBytesInMemory must be at most 68719476736"},
        BadCase{"max_rows_in_memory_huge",
                [](auto* s) { s->mutable_tuning_config()->set_max_rows_in_memory(INT64_MAX); },
                "tuningConfig.maxRowsInMemory must be at most"},
        BadCase{"handoff_mode_99",
                [](auto* s) {
                  s->mutable_tuning_config()->set_handoff_mode(static_cast<v1::HandoffMode>(99));
                },
                "tuningConfig.handoffMode 99 is not one of HANDOFF_MODE_DEEP_STORAGE, HANDOFF_MODE_LOADER"},
        BadCase{"property_value_1mb",
                [](auto* s) {
                  (*s->mutable_io_config()->mutable_consumer_properties())["client.id"] =
                      std::string(1 << 20, 'x');
                },
                "ioConfig.consumerProperties[\"client.id\"] is 1048576 bytes long"},
        BadCase{"properties_200k",
                [](auto* s) {
                  auto* props = s->mutable_io_config()->mutable_consumer_properties();
                  for (int i = 0; i < 200000; ++i) (*props)["x" + std::to_string(i)] = "v";
                },
                "ioConfig.consumerProperties has 200001 entries; at most 1000"}),
    [](const testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

// Merges a JSON transformSpec into the valid spec and normalizes it.
absl::Status WithTransformSpec(const std::string& json) {
  v1::SupervisorSpec spec = ValidSpec();
  v1::TransformSpec transform;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &transform);
  EXPECT_TRUE(parsed.ok()) << parsed.ToString();
  *spec.mutable_data_schema()->mutable_transform_spec() = transform;
  return NormalizeSpec(spec).status();
}

TEST(ValidateSpec, CompilesTheTransformSpec) {
  const absl::Status good = WithTransformSpec(R"json({
    "transforms": [{"type": "expression", "name": "page", "expression": "lower(page)"},
                   {"type": "expression", "name": "day",
                    "expression": "timestamp_format(__time, 'yyyy-MM-dd', '+05:30')"}],
    "filter": {"type": "or", "fields": [{"type": "selector", "dimension": "page", "value": "a"},
                                        {"type": "in", "dimension": "user", "values": ["b"]}]}
  })json");
  EXPECT_TRUE(good.ok()) << good;
  const std::pair<const char*, const char*> cases[] = {
      {R"json({"filter": {"type": "or", "fields": [{"type": "selector", "dimension": "a"},
                                               {"type": "regex", "dimension": "a"}]}})json",
       "dataSchema.transformSpec.filter.fields[1].type: unknown filter type \"regex\"; one of "
       "selector, in, bound, and, or, not"},
      {R"json({"transforms": [{"type": "expression", "name": "x", "expression": "concat(a, b"}]})json",
       "dataSchema.transformSpec.transforms[0].expression: expected ')', got the end at column "
       "12"},
      {R"json({"transforms": [{"type": "expression", "name": "x", "expression": "a"},
                          {"type": "expression", "name": "x", "expression": "b"}]})json",
       "dataSchema.transformSpec.transforms[1].name: \"x\" is the name of an earlier transform"},
      {R"json({"transforms": [{"type": "expression", "name": "", "expression": "a"}]})json",
       "dataSchema.transformSpec.transforms[0].name: required"},
      {R"json({"transforms": [{"type": "expression", "name": "a\u0001", "expression": "a"}]})json",
       "dataSchema.transformSpec.transforms[0].name contains the control character 0x01"},
      {R"json({"transforms": [{"type": "javascript", "name": "a", "expression": "a"}]})json",
       "dataSchema.transformSpec.transforms[0].type: unknown transform type \"javascript\"; "
       "only \"expression\""},
  };
  for (const auto& [json, message] : cases) {
    absl::Status status = WithTransformSpec(json);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_EQ(status.message(), message) << json;
  }
  std::string many = R"({"transforms": [)";
  for (int i = 0; i < 257; ++i) {
    if (i > 0) many += ",";
    many += "{\"type\": \"expression\", \"name\": \"t" + std::to_string(i) +
            "\", \"expression\": \"a\"}";
  }
  many += "]}";
  absl::Status status = WithTransformSpec(many);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("dataSchema.transformSpec.transforms"), std::string::npos)
      << status.message();
}

TEST(ParseSpecTimings, ReadsDurations) {
  v1::SupervisorSpec spec = ValidSpec();
  spec.mutable_io_config()->set_task_duration("PT2M");
  spec.mutable_tuning_config()->set_handoff_condition_timeout("PT0S");
  spec.mutable_io_config()->set_late_message_rejection_period("PT1H");
  auto normalized = NormalizeSpec(spec);
  ASSERT_TRUE(normalized.ok()) << normalized.status();
  auto timings = ParseSpecTimings(*normalized);
  ASSERT_TRUE(timings.ok());
  EXPECT_EQ(timings->task_duration, absl::Minutes(2));
  EXPECT_EQ(timings->handoff_condition_timeout, absl::InfiniteDuration());
  EXPECT_EQ(timings->intermediate_handoff_period, absl::InfiniteDuration());
  EXPECT_EQ(*timings->late_message_rejection_period, absl::Hours(1));
  EXPECT_FALSE(timings->early_message_rejection_period.has_value());
  EXPECT_EQ(timings->poll_timeout, absl::Milliseconds(100));
}

}  // namespace
}  // namespace sluice
