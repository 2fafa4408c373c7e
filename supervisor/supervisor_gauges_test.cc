#include "supervisor/supervisor_gauges.h"

#include <gtest/gtest.h>

namespace sluice::supervisor {
namespace {

std::string Label(const metrics::GaugeSample& sample, const std::string& key) {
  for (const auto& [k, v] : sample.labels) {
    if (k == key) return v;
  }
  return "<none>";
}

TEST(SupervisorGaugesTest, LagPerDatasourceAndPartition) {
  v1::SupervisorStatus a;
  a.set_datasource("a");
  (*a.mutable_lag())[0] = 5;
  (*a.mutable_lag())[1] = -2;
  v1::SupervisorStatus b;
  b.set_datasource("b");
  std::vector<metrics::GaugeSample> samples = PartitionLagSamples({a, b});
  ASSERT_EQ(samples.size(), 2u);
  std::map<std::string, double> by_partition;
  for (const auto& s : samples) {
    EXPECT_EQ(Label(s, "datasource"), "a");
    by_partition[Label(s, "partition")] = s.value;
  }
  EXPECT_EQ(by_partition.at("0"), 5);
  EXPECT_EQ(by_partition.at("1"), -2);
}

TEST(SupervisorGaugesTest, TimeLagOnlyWhereKnown) {
  v1::SupervisorStatus a;
  a.set_datasource("a");
  (*a.mutable_lag())[0] = 5;
  (*a.mutable_lag())[1] = 0;
  (*a.mutable_time_lag_ms())[1] = 0;
  (*a.mutable_time_lag_ms())[2] = 1500;
  std::map<std::string, double> by_partition;
  for (const auto& sample : PartitionTimeLagSamples({a})) {
    EXPECT_EQ(Label(sample, "datasource"), "a");
    by_partition[Label(sample, "partition")] = sample.value;
  }
  EXPECT_EQ(by_partition, (std::map<std::string, double>{{"1", 0}, {"2", 1500}}));
}

TEST(SupervisorGaugesTest, TasksByStateOverReadingAndPublishingGroups) {
  v1::SupervisorStatus s;
  s.set_datasource("ds");
  s.add_active_groups()->add_tasks()->set_state(v1::TASK_STATE_READING);
  s.mutable_active_groups(0)->add_tasks()->set_state(v1::TASK_STATE_READING);
  s.add_publishing_groups()->add_tasks()->set_state(v1::TASK_STATE_PUBLISHING);
  std::vector<metrics::GaugeSample> samples = TaskStateSamples({s});
  ASSERT_EQ(samples.size(), 2u);
  std::map<std::string, double> by_state;
  for (const auto& sample : samples) by_state[Label(sample, "state")] = sample.value;
  EXPECT_EQ(by_state.at("READING"), 2);
  EXPECT_EQ(by_state.at("PUBLISHING"), 1);
  EXPECT_TRUE(TaskStateSamples({}).empty());
}

TEST(SupervisorGaugesTest, HealthAndStatePerDatasource) {
  v1::SupervisorStatus running;
  running.set_datasource("a");
  running.set_state(v1::SUPERVISOR_STATE_RUNNING);
  running.set_healthy(true);
  v1::SupervisorStatus cut_off;
  cut_off.set_datasource("b");
  cut_off.set_state(v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM);
  cut_off.set_healthy(false);

  std::vector<metrics::GaugeSample> health = DatasourceHealthSamples({running, cut_off});
  ASSERT_EQ(health.size(), 2u);
  EXPECT_EQ(Label(health[0], "datasource"), "a");
  EXPECT_EQ(health[0].value, 1);
  EXPECT_EQ(Label(health[1], "datasource"), "b");
  EXPECT_EQ(health[1].value, 0);

  std::vector<metrics::GaugeSample> states = DatasourceStateSamples({running, cut_off});
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(Label(states[0], "state"), "RUNNING");
  EXPECT_EQ(Label(states[1], "datasource"), "b");
  EXPECT_EQ(Label(states[1], "state"), "UNABLE_TO_CONNECT_TO_STREAM");
  EXPECT_EQ(states[1].value, 1);
  EXPECT_TRUE(DatasourceStateSamples({}).empty());
}

TEST(SupervisorGaugesTest, WorkersAliveAndLost) {
  std::vector<v1::WorkerInfo> workers(3);
  workers[0].set_alive(true);
  workers[1].set_alive(false);
  workers[2].set_alive(true);
  std::vector<metrics::GaugeSample> samples = WorkerStateSamples(workers);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(Label(samples[0], "state"), "alive");
  EXPECT_EQ(samples[0].value, 2);
  EXPECT_EQ(Label(samples[1], "state"), "lost");
  EXPECT_EQ(samples[1].value, 1);
  EXPECT_EQ(WorkerStateSamples({})[0].value, 0);
}

}  // namespace
}  // namespace sluice::supervisor
