#include "task/task_spec.h"

#include <gtest/gtest.h>

namespace sluice::task {
namespace {

v1::TaskSpec Spec(int64_t max_bytes_in_memory) {
  v1::TaskSpec spec;
  spec.set_task_id("t1");
  spec.set_datasource("wiki");
  spec.set_base_sequence_name("wiki_base");
  spec.set_topic("wiki");
  (*spec.mutable_consumer_properties())["bootstrap.servers"] = "127.0.0.1:9092";
  (*spec.mutable_start_offsets())[0] = 0;
  v1::DataSchema* schema = spec.mutable_data_schema();
  schema->mutable_timestamp_spec()->set_column("timestamp");
  schema->mutable_granularity_spec()->set_segment_granularity("HOUR");
  v1::MetricSpec* count = schema->add_metrics_spec();
  count->set_type("count");
  count->set_name("count");
  if (max_bytes_in_memory > 0) spec.mutable_tuning_config()->set_max_bytes_in_memory(max_bytes_in_memory);
  return spec;
}

TEST(CapMaxBytesInMemoryTest, AWorkersShareCapsTheSpecsMaxBytesInMemory) {
  absl::StatusOr<TaskSettings> settings = CheckTaskSpec(Spec(128 << 20));
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_TRUE(CapMaxBytesInMemory(32 << 20, &*settings));
  EXPECT_EQ(settings->tuning.max_bytes_in_memory(), 32 << 20);
  // A smaller spec value stands; no share changes nothing.
  EXPECT_FALSE(CapMaxBytesInMemory(64 << 20, &*settings));
  EXPECT_EQ(settings->tuning.max_bytes_in_memory(), 32 << 20);
  EXPECT_FALSE(CapMaxBytesInMemory(0, &*settings));
  EXPECT_EQ(settings->tuning.max_bytes_in_memory(), 32 << 20);
}

TEST(CapMaxBytesInMemoryTest, TheDefaultIsCappedToo) {
  absl::StatusOr<TaskSettings> settings = CheckTaskSpec(Spec(0));
  ASSERT_TRUE(settings.ok()) << settings.status();
  ASSERT_GT(settings->tuning.max_bytes_in_memory(), 16 << 20);
  EXPECT_TRUE(CapMaxBytesInMemory(16 << 20, &*settings));
  EXPECT_EQ(settings->tuning.max_bytes_in_memory(), 16 << 20);
}

}  // namespace
}  // namespace sluice::task
