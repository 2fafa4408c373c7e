#include "tools/demo/compaction_watch.h"

#include <limits>

#include "gtest/gtest.h"

namespace sluice {
namespace demo {
namespace {

v1::SegmentDescriptor Segment(int64_t start, int64_t end, int64_t rows, bool used = true,
                              bool handed_off = true) {
  v1::SegmentDescriptor s;
  s.mutable_interval()->set_start_ms(start);
  s.mutable_interval()->set_end_ms(end);
  s.set_num_rows(rows);
  s.set_used(used);
  s.set_handoff_state(handed_off ? v1::HANDOFF_STATE_HANDED_OFF : v1::HANDOFF_STATE_PENDING);
  return s;
}

TEST(CompactionWatchTest, GroupsUsedSegmentsByIntervalOldestFirst) {
  const std::vector<IntervalSegments> got = GroupUsedByInterval(
      {Segment(60, 120, 5), Segment(0, 60, 7), Segment(60, 120, 3, /*used=*/false),
       Segment(0, 60, 1, true, /*handed_off=*/false), Segment(60, 120, 2)});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].start_ms, 0);
  EXPECT_EQ(got[0].segments, 2);
  EXPECT_EQ(got[0].rows, 8);
  EXPECT_EQ(got[0].not_handed_off, 1);
  EXPECT_EQ(got[1].start_ms, 60);
  EXPECT_EQ(got[1].segments, 2);  // the unused one is not counted
  EXPECT_EQ(got[1].rows, 7);
  EXPECT_EQ(got[1].not_handed_off, 0);
}

TEST(CompactionWatchTest, CutoffIsTheSkipBeforeTheEarlierOfNowAndTheNewestEnd) {
  const std::vector<IntervalSegments> intervals =
      GroupUsedByInterval({Segment(0, 60, 1), Segment(60, 120, 1), Segment(120, 180, 1)});
  EXPECT_EQ(CompactionCutoffMs(intervals, /*now_ms=*/1000, /*skip=*/60), 120);
  EXPECT_EQ(CompactionCutoffMs(intervals, /*now_ms=*/150, /*skip=*/60), 90);
  EXPECT_EQ(CompactionCutoffMs({}, 150, 60), std::numeric_limits<int64_t>::min());
}

TEST(CompactionWatchTest, NotCompactedListsOldIntervalsWithTooManyOrPendingSegments) {
  const std::vector<IntervalSegments> intervals = GroupUsedByInterval(
      {Segment(0, 60, 1), Segment(0, 60, 1), Segment(0, 60, 1),                   // 3: too many
       Segment(60, 120, 1), Segment(60, 120, 1),                                  // 2: fine
       Segment(120, 180, 1, true, /*handed_off=*/false),                          // pending
       Segment(180, 240, 1), Segment(180, 240, 1), Segment(180, 240, 1)});        // too new
  const std::vector<IntervalSegments> got = NotCompacted(intervals, /*cutoff_ms=*/180, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].start_ms, 0);
  EXPECT_EQ(got[1].start_ms, 120);
}

TEST(CompactionWatchTest, TallyCountsEachCompactionOnceAcrossStatuses) {
  v1::CompactionStatus first;
  v1::CompactionRecord* a = first.add_recent();
  a->mutable_interval()->set_start_ms(0);
  a->set_rows(1000);
  a->set_duration_ms(200);
  a->set_input_segments(4);
  a->set_committed_at_ms(5000);
  v1::CompactionStatus second = first;
  v1::CompactionRecord* b = second.add_recent();
  *b = *a;
  b->mutable_interval()->set_start_ms(60);
  b->set_rows(3000);
  b->set_duration_ms(100);
  second.set_rows_compacted(4000);
  CompactionTally tally;
  tally.Add(first);
  tally.Add(second);
  tally.Add(second);
  EXPECT_EQ(tally.compactions(), 2);
  EXPECT_EQ(tally.rows(), 4000);
  EXPECT_EQ(tally.duration_ms(), 300);
  EXPECT_EQ(tally.input_segments(), 8);
  EXPECT_EQ(tally.last().rows_compacted(), 4000);
}

}  // namespace
}  // namespace demo
}  // namespace sluice
