#include "supervisor/spec_changes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/spec.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

v1::SupervisorSpec Normalized(v1::SupervisorSpec spec) {
  absl::StatusOr<v1::SupervisorSpec> normalized = NormalizeSpec(std::move(spec));
  EXPECT_TRUE(normalized.ok()) << normalized.status();
  return normalized.value_or(v1::SupervisorSpec());
}

TEST(ChangedSpecFieldsTest, EqualSpecsHaveNone) {
  const v1::SupervisorSpec a = Normalized(testing::TestSpec("ds"));
  EXPECT_THAT(ChangedSpecFields(a, a), IsEmpty());
}

TEST(ChangedSpecFieldsTest, NamesEachFieldByItsJsonPathInFieldOrder) {
  const v1::SupervisorSpec a = Normalized(testing::TestSpec("ds"));
  v1::SupervisorSpec b = a;
  b.mutable_tuning_config()->set_max_rows_per_segment(7);
  b.mutable_io_config()->set_task_count(a.io_config().task_count() + 1);
  b.mutable_data_schema()->mutable_metrics_spec()->Clear();
  (*b.mutable_io_config()->mutable_consumer_properties())["fetch.wait.max.ms"] = "20";
  b.set_suspended(true);
  EXPECT_THAT(ChangedSpecFields(a, b),
              ElementsAre("ioConfig.consumerProperties", "ioConfig.taskCount",
                          "dataSchema.metricsSpec", "tuningConfig.maxRowsPerSegment",
                          "suspended"));
}

TEST(ChangedSpecFieldsTest, MapsCompareAsMapsAndNestedMessagesByField) {
  v1::SupervisorSpec a = Normalized(testing::TestSpec("ds"));
  (*a.mutable_io_config()->mutable_consumer_properties())["a"] = "1";
  (*a.mutable_io_config()->mutable_consumer_properties())["b"] = "2";
  v1::SupervisorSpec b = a;
  b.mutable_io_config()->mutable_consumer_properties()->clear();
  (*b.mutable_io_config()->mutable_consumer_properties())["b"] = "2";
  for (const auto& [k, v] : a.io_config().consumer_properties()) {
    (*b.mutable_io_config()->mutable_consumer_properties())[k] = v;
  }
  EXPECT_THAT(ChangedSpecFields(a, b), IsEmpty());
  b.mutable_io_config()->mutable_idle_config()->set_enabled(true);
  b.mutable_data_schema()->mutable_granularity_spec()->set_query_granularity("MINUTE");
  EXPECT_THAT(ChangedSpecFields(a, b),
              ElementsAre("ioConfig.idleConfig.enabled",
                          "dataSchema.granularitySpec.queryGranularity"));
}

TEST(AppliesLiveTest, CountsDurationsAndTriggersAreLive) {
  EXPECT_TRUE(AppliesLive({}));
  EXPECT_TRUE(AppliesLive({"suspended", "ioConfig.taskCount", "ioConfig.replicas",
                           "ioConfig.stopTaskCount", "ioConfig.taskDuration",
                           "ioConfig.idleConfig.enabled", "ioConfig.idleConfig.inactiveAfterMillis",
                           "tuningConfig.maxRowsPerSegment", "tuningConfig.maxTotalRows"}));
  // The Iceberg table is written by the supervisor at each publish.
  EXPECT_TRUE(AppliesLive({"icebergTable.tableNamespace", "icebergTable.tableName"}));
}

TEST(AppliesLiveTest, WhatARecordBecomesIsNot) {
  for (const char* field :
       {"ioConfig.topic", "ioConfig.consumerProperties", "ioConfig.lateMessageRejectionPeriod",
        "ioConfig.inputFormat.type", "ioConfig.headerBasedFilterConfig.encoding",
        "dataSchema.metricsSpec", "dataSchema.granularitySpec.rollup",
        "dataSchema.transformSpec.transforms", "tuningConfig.maxRowsInMemory",
        "tuningConfig.chatTimeout", "datasource"}) {
    EXPECT_FALSE(AppliesLive({"ioConfig.taskCount", field})) << field;
  }
  // A prefix of a live name is not live.
  EXPECT_FALSE(AppliesLive({"ioConfig.idleConfigX"}));
  EXPECT_FALSE(AppliesLive({"ioConfig.taskCountMax"}));
}

}  // namespace
}  // namespace sluice::supervisor
