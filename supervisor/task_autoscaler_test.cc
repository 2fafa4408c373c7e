#include "supervisor/task_autoscaler.h"

#include "gtest/gtest.h"

namespace sluice::supervisor {
namespace {

// Druid's defaults with small times: a sample a second, a 10 s range,
// decisions every 5 s after 10 s, actions at least 20 s apart.
v1::AutoScalerConfig Config() {
  v1::AutoScalerConfig c;
  c.set_enable_task_auto_scaler(true);
  c.set_auto_scaler_strategy("lagBased");
  c.set_task_count_min(1);
  c.set_task_count_max(4);
  c.set_lag_collection_interval_millis(1000);
  c.set_lag_collection_range_millis(10000);
  c.set_scale_out_threshold(1000);
  c.set_trigger_scale_out_fraction_threshold(0.3);
  c.set_scale_in_threshold(10);
  c.set_trigger_scale_in_fraction_threshold(0.9);
  c.set_scale_action_start_delay_millis(10000);
  c.set_scale_action_period_millis(5000);
  c.set_scale_in_step(1);
  c.set_scale_out_step(2);
  c.set_min_trigger_scale_action_frequency_millis(20000);
  c.set_lag_aggregate("SUM");
  return c;
}

const absl::Time kStart = absl::FromUnixSeconds(1000000);

// Feeds one observation a second from `from` (seconds after kStart) to
// `to`, each with total lag `lag` over two partitions.
void Feed(TaskAutoScaler& scaler, int from, int to, int64_t lag) {
  for (int s = from; s <= to; ++s) {
    scaler.Observe({{0, lag / 2}, {1, lag - lag / 2}}, kStart + absl::Seconds(s));
  }
}

TEST(TaskAutoScaler, AggregatesPositiveLagsBySumMaxOrAverage) {
  const OffsetMap lags = {{0, 30}, {1, 10}, {2, -5}};
  EXPECT_EQ(TaskAutoScaler::Aggregate(lags, "SUM"), 40);
  EXPECT_EQ(TaskAutoScaler::Aggregate(lags, "MAX"), 30);
  EXPECT_EQ(TaskAutoScaler::Aggregate(lags, "AVERAGE"), 13);
  EXPECT_EQ(TaskAutoScaler::Aggregate({}, "AVERAGE"), 0);
}

TEST(TaskAutoScaler, ScalesOutOnlyOnceTheRangeIsCoveredAndTheStartDelayPassed) {
  v1::AutoScalerConfig config = Config();
  config.set_scale_action_start_delay_millis(5000);
  TaskAutoScaler scaler(config, kStart);
  Feed(scaler, 0, 4, 5000);
  // Before the start delay (5 s): nothing.
  EXPECT_FALSE(scaler.Decide(1, 8, kStart + absl::Seconds(4)));
  Feed(scaler, 5, 9, 5000);
  // The samples cover 9 s of the 10 s range: nothing yet.
  EXPECT_FALSE(scaler.Decide(1, 8, kStart + absl::Seconds(9)));
  Feed(scaler, 10, 15, 5000);
  auto proposal = scaler.Decide(1, 8, kStart + absl::Seconds(15));
  ASSERT_TRUE(proposal);
  EXPECT_EQ(proposal->from, 1);
  EXPECT_EQ(proposal->to, 3);  // + scaleOutStep 2
  EXPECT_NE(proposal->reason.find("scale out: 11 of 11 lag samples"), std::string::npos)
      << proposal->reason;
}

TEST(TaskAutoScaler, ScaleOutStopsAtTaskCountMaxAndThePartitionCount) {
  {
    TaskAutoScaler scaler(Config(), kStart);
    Feed(scaler, 0, 12, 5000);
    auto proposal = scaler.Decide(3, 8, kStart + absl::Seconds(12));
    ASSERT_TRUE(proposal);
    EXPECT_EQ(proposal->to, 4);  // taskCountMax
  }
  {
    TaskAutoScaler scaler(Config(), kStart);
    Feed(scaler, 0, 12, 5000);
    auto proposal = scaler.Decide(1, 2, kStart + absl::Seconds(12));
    ASSERT_TRUE(proposal);
    EXPECT_EQ(proposal->to, 2);  // the topic has 2 partitions
  }
  {
    TaskAutoScaler scaler(Config(), kStart);
    Feed(scaler, 0, 12, 5000);
    EXPECT_FALSE(scaler.Decide(4, 8, kStart + absl::Seconds(12)));  // at the max
    EXPECT_FALSE(scaler.Decide(1, 0, kStart + absl::Seconds(18)));  // partitions unknown
  }
}

TEST(TaskAutoScaler, TheScaleOutFractionCountsSamplesAtOrAboveTheThreshold) {
  TaskAutoScaler scaler(Config(), kStart);
  Feed(scaler, 0, 8, 0);       // 9 samples within
  Feed(scaler, 9, 11, 1000);   // 3 at the threshold: 3 of 11 in range >= 0.3? 0.27
  EXPECT_FALSE(scaler.Decide(2, 8, kStart + absl::Seconds(11)));
  Feed(scaler, 12, 16, 1000);  // period 5 s later: 8 of 11 at the threshold
  auto proposal = scaler.Decide(2, 8, kStart + absl::Seconds(16));
  ASSERT_TRUE(proposal);
  EXPECT_EQ(proposal->to, 4);
}

TEST(TaskAutoScaler, ScalesInWhenNearlyAllSamplesAreWithinAndNotBelowTheMin) {
  TaskAutoScaler scaler(Config(), kStart);
  Feed(scaler, 0, 12, 10);
  auto proposal = scaler.Decide(3, 8, kStart + absl::Seconds(12));
  ASSERT_TRUE(proposal);
  EXPECT_EQ(proposal->to, 2);  // - scaleInStep 1
  EXPECT_NE(proposal->reason.find("scale in"), std::string::npos);

  TaskAutoScaler at_min(Config(), kStart);
  Feed(at_min, 0, 12, 0);
  EXPECT_FALSE(at_min.Decide(1, 8, kStart + absl::Seconds(12)));
}

TEST(TaskAutoScaler, DecidesOncePerPeriodAndWaitsTheCooldownAfterAnAction) {
  TaskAutoScaler scaler(Config(), kStart);
  Feed(scaler, 0, 12, 5000);
  ASSERT_TRUE(scaler.Decide(1, 8, kStart + absl::Seconds(12)));
  // Within the action period: no second look.
  EXPECT_FALSE(scaler.Decide(1, 8, kStart + absl::Seconds(13)));
  scaler.NoteScaled(kStart + absl::Seconds(13));
  v1::AutoScalerStatus status;
  scaler.FillStatus(&status);
  EXPECT_EQ(status.samples(), 0);  // they start over
  Feed(scaler, 14, 30, 5000);
  // Covered again at 24 s, but the cooldown (20 s from 13 s) lasts to 33 s.
  EXPECT_FALSE(scaler.Decide(3, 8, kStart + absl::Seconds(30)));
  Feed(scaler, 31, 40, 5000);
  auto proposal = scaler.Decide(3, 8, kStart + absl::Seconds(40));
  ASSERT_TRUE(proposal);
  EXPECT_EQ(proposal->to, 4);
}

TEST(TaskAutoScaler, SamplesFewerThanTheIntervalAllowsStillCoverTheRange) {
  // Runs every 4 s (ioConfig.period), samples every 1 s at most: the range
  // is covered 10 s after the first sample all the same.
  TaskAutoScaler scaler(Config(), kStart);
  for (int s = 0; s <= 8; s += 4) scaler.Observe({{0, 5000}}, kStart + absl::Seconds(s));
  EXPECT_FALSE(scaler.Decide(1, 8, kStart + absl::Seconds(8)));
  scaler.Observe({{0, 5000}}, kStart + absl::Seconds(12));
  auto proposal = scaler.Decide(1, 8, kStart + absl::Seconds(13));
  ASSERT_TRUE(proposal);
  EXPECT_NE(proposal->reason.find("3 of 3 lag samples"), std::string::npos) << proposal->reason;
}

TEST(TaskAutoScaler, StatusCountsTheSamplesInRange) {
  TaskAutoScaler scaler(Config(), kStart);
  Feed(scaler, 0, 4, 5000);
  Feed(scaler, 5, 6, 4);
  v1::AutoScalerStatus status;
  scaler.FillStatus(&status);
  EXPECT_EQ(status.samples(), 7);
  EXPECT_EQ(status.samples_above_scale_out(), 5);
  EXPECT_EQ(status.samples_below_scale_in(), 2);
  EXPECT_EQ(status.last_lag(), 4);
}

}  // namespace
}  // namespace sluice::supervisor
