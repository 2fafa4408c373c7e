#include "supervisor/start_offset_policy.h"

#include <gtest/gtest.h>

namespace sluice::supervisor {
namespace {

using Strings = std::vector<std::string>;

StartOffsetInputs Inputs(std::vector<int32_t> partitions) {
  StartOffsetInputs in;
  in.partitions = std::move(partitions);
  for (int32_t p : in.partitions) in.first_partitions.insert(p);
  return in;
}

TEST(PartitionsNeedingWatermarksTest, OnlyThoseWithoutAPreviousGroupEnd) {
  EXPECT_EQ(PartitionsNeedingWatermarks({0, 2, 4}, {{2, 10}}), (std::vector<int32_t>{0, 4}));
  EXPECT_TRUE(PartitionsNeedingWatermarks({1}, {{1, 5}}).empty());
  EXPECT_EQ(PartitionsNeedingWatermarks({3, 1}, {}), (std::vector<int32_t>{3, 1}));
  EXPECT_TRUE(PartitionsNeedingWatermarks({}, {{0, 1}}).empty());
}

TEST(DecideStartOffsetsTest, PreviousGroupEndWinsOverEverything) {
  StartOffsetInputs in = Inputs({0});
  in.next_offsets = {{0, 70}};
  in.committed = {{0, 5}};                  // below the earliest: ignored
  in.watermarks = {{0, {100, 200}}};
  in.use_earliest_offset = true;
  StartOffsetDecision d = DecideStartOffsets(in);
  EXPECT_EQ(d.start, (OffsetMap{{0, 70}}));
  EXPECT_EQ(d.sources, Strings{"0:previous group"});
  EXPECT_TRUE(d.auto_reset.empty());
  EXPECT_FALSE(d.unavailable.has_value());
}

TEST(DecideStartOffsetsTest, StoredOffsetWithinKafka) {
  StartOffsetInputs in = Inputs({0, 1});
  in.committed = {{0, 10}, {1, 100}};
  in.watermarks = {{0, {10, 50}}, {1, {0, 100}}};  // at earliest, at latest: both fine
  StartOffsetDecision d = DecideStartOffsets(in);
  EXPECT_EQ(d.start, (OffsetMap{{0, 10}, {1, 100}}));
  EXPECT_EQ(d.sources, (Strings{"0:stored", "1:stored"}));
  EXPECT_TRUE(d.auto_reset.empty());
  EXPECT_FALSE(d.unavailable.has_value());
}

TEST(DecideStartOffsetsTest, StoredOffsetPastTheLatestIsStillUsed) {
  // Past the end is judged by the status (stream_health), not here.
  StartOffsetInputs in = Inputs({0});
  in.committed = {{0, 500}};
  in.watermarks = {{0, {0, 100}}};
  EXPECT_EQ(DecideStartOffsets(in).start, (OffsetMap{{0, 500}}));
}

TEST(DecideStartOffsetsTest, StoredOffsetGoneWithoutAutoResetStopsAtThatPartition) {
  StartOffsetInputs in = Inputs({0, 1, 2});
  in.committed = {{0, 3}, {1, 4}, {2, 1}};
  in.watermarks = {{0, {0, 9}}, {1, {7, 9}}, {2, {5, 9}}};
  StartOffsetDecision d = DecideStartOffsets(in);
  ASSERT_TRUE(d.unavailable.has_value());
  EXPECT_EQ(*d.unavailable,
            "stored offset 4 of partition 1 is no longer available in Kafka (earliest 7); reset "
            "the supervisor or its offsets, or set resetOffsetAutomatically");
  EXPECT_TRUE(d.auto_reset.empty());
  EXPECT_EQ(d.start, (OffsetMap{{0, 3}}));  // what was decided before partition 1
}

TEST(DecideStartOffsetsTest, StoredOffsetGoneWithAutoResetStartsAtEarliest) {
  StartOffsetInputs in = Inputs({0, 1});
  in.committed = {{0, 3}, {1, 8}};
  in.watermarks = {{0, {6, 9}}, {1, {7, 9}}};
  in.reset_offset_automatically = true;
  StartOffsetDecision d = DecideStartOffsets(in);
  EXPECT_FALSE(d.unavailable.has_value());
  EXPECT_EQ(d.start, (OffsetMap{{0, 6}, {1, 8}}));
  EXPECT_EQ(d.auto_reset, (OffsetMap{{0, 6}}));
  EXPECT_EQ(d.sources, (Strings{"0:auto-reset to earliest", "1:stored"}));
}

TEST(DecideStartOffsetsTest, NoStoredOffsetUsesLatestOrEarliest) {
  StartOffsetInputs in = Inputs({0, 1});
  in.watermarks = {{0, {2, 20}}, {1, {3, 30}}};
  StartOffsetDecision latest = DecideStartOffsets(in);
  EXPECT_EQ(latest.start, (OffsetMap{{0, 20}, {1, 30}}));
  EXPECT_EQ(latest.sources, (Strings{"0:latest", "1:latest"}));

  in.use_earliest_offset = true;
  StartOffsetDecision earliest = DecideStartOffsets(in);
  EXPECT_EQ(earliest.start, (OffsetMap{{0, 2}, {1, 3}}));
  EXPECT_EQ(earliest.sources, (Strings{"0:earliest", "1:earliest"}));
}

TEST(DecideStartOffsetsTest, PartitionsAddedLaterStartAtTheirEarliest) {
  StartOffsetInputs in = Inputs({0});
  in.partitions = {0, 3};  // 3 appeared after the first listing
  in.watermarks = {{0, {1, 10}}, {3, {4, 40}}};
  StartOffsetDecision d = DecideStartOffsets(in);
  EXPECT_EQ(d.start, (OffsetMap{{0, 10}, {3, 4}}));
  EXPECT_EQ(d.sources, (Strings{"0:latest", "3:earliest"}));
}

TEST(DecideStartOffsetsTest, MissingWatermarksCountAsZero) {
  StartOffsetInputs in = Inputs({0, 1});
  in.committed = {{1, 0}};
  StartOffsetDecision d = DecideStartOffsets(in);
  EXPECT_EQ(d.start, (OffsetMap{{0, 0}, {1, 0}}));
  EXPECT_EQ(d.sources, (Strings{"0:latest", "1:stored"}));
  EXPECT_FALSE(d.unavailable.has_value());
}

TEST(DecideStartOffsetsTest, SourcesFollowThePartitionOrderAndMixRules) {
  StartOffsetInputs in = Inputs({4, 0, 2});
  in.next_offsets = {{2, 77}};
  in.committed = {{4, 40}};
  in.watermarks = {{0, {0, 5}}, {4, {10, 50}}};
  StartOffsetDecision d = DecideStartOffsets(in);
  EXPECT_EQ(d.start, (OffsetMap{{0, 5}, {2, 77}, {4, 40}}));
  EXPECT_EQ(d.sources, (Strings{"4:stored", "0:latest", "2:previous group"}));
}

TEST(DecideStartOffsetsTest, EmptyGroup) {
  StartOffsetDecision d = DecideStartOffsets(StartOffsetInputs{});
  EXPECT_TRUE(d.start.empty());
  EXPECT_TRUE(d.sources.empty());
  EXPECT_FALSE(d.unavailable.has_value());
}

TEST(GroupMessageTimeBoundsTest, UnboundedByDefault) {
  SpecTimings timings;
  timings.task_duration = absl::Hours(1);
  MessageTimeBounds b = GroupMessageTimeBounds(timings, 1'000'000);
  EXPECT_EQ(b.min_ms, 0);
  EXPECT_EQ(b.max_ms, 0);
}

TEST(GroupMessageTimeBoundsTest, LatePeriodAndEarlyPeriod) {
  SpecTimings timings;
  timings.task_duration = absl::Seconds(60);
  timings.late_message_rejection_period = absl::Seconds(10);
  timings.early_message_rejection_period = absl::Seconds(5);
  MessageTimeBounds b = GroupMessageTimeBounds(timings, 1'000'000);
  EXPECT_EQ(b.min_ms, 1'000'000 - 10'000);
  EXPECT_EQ(b.max_ms, 1'000'000 + 60'000 + 5'000);
}

TEST(GroupMessageTimeBoundsTest, StartDateWinsOverThePeriod) {
  SpecTimings timings;
  timings.late_message_rejection_start_ms = 123;
  timings.late_message_rejection_period = absl::Seconds(10);
  EXPECT_EQ(GroupMessageTimeBounds(timings, 1'000'000).min_ms, 123);
}

}  // namespace
}  // namespace sluice::supervisor
