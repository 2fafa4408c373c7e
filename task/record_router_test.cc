#include "task/record_router.h"

#include <gtest/gtest.h>

#include "common/spec.h"

namespace sluice::task {
namespace {

// Partitions 0 and 2: sequence 0 is [0, 10) x [0, 5), closed; sequence 1
// starts at {10, 5} and is open.
SequenceList TwoSequences() {
  auto list = SequenceList::FromCheckpoints("b", {{0, {{0, 0}, {2, 0}}}, {1, {{0, 10}, {2, 5}}}},
                                            {0, 2});
  EXPECT_TRUE(list.ok()) << list.status();
  return *list;
}

TEST(RecordRouterTest, SlotsAreDenseAndUnknownPartitionsHaveNone) {
  RecordRouter router({0, 2});
  EXPECT_EQ(router.slots(), 2u);
  EXPECT_EQ(router.SlotOf(0), 0);
  EXPECT_EQ(router.SlotOf(2), 1);
  EXPECT_EQ(router.SlotOf(1), -1);
  EXPECT_EQ(router.SlotOf(3), -1);
  EXPECT_EQ(router.SlotOf(-1), -1);
  EXPECT_EQ(router.PartitionOf(1), 2);
  EXPECT_EQ(router.ToOffsetMap({4, 9}), (OffsetMap{{0, 4}, {2, 9}}));
}

TEST(RecordRouterTest, RoutesToTheFirstSequenceThatTakesTheOffset) {
  RecordRouter router({0, 2});
  router.Refresh(TwoSequences());
  ASSERT_EQ(router.route_count(), 2);
  EXPECT_EQ(router.route_start(1, 0), 10);
  EXPECT_EQ(router.route_start(1, 1), 5);
  EXPECT_EQ(router.Route(0, 0), 0);
  EXPECT_EQ(router.Route(0, 9), 0);
  EXPECT_EQ(router.Route(0, 10), 1);
  EXPECT_EQ(router.Route(0, 1'000'000), 1);
  EXPECT_EQ(router.Route(1, 4), 0);
  EXPECT_EQ(router.Route(1, 5), 1);
  EXPECT_FALSE(router.IsOpenLatest(0));
  EXPECT_TRUE(router.IsOpenLatest(1));
  EXPECT_FALSE(router.final_end_fixed());
  EXPECT_EQ(router.task_end(0), kEndOfPartition);
}

TEST(RecordRouterTest, OffsetsBeforeTheFirstSequenceHaveNoRoute) {
  auto list = SequenceList::FromCheckpoints("b", {{0, {{0, 5}}}}, {0});
  ASSERT_TRUE(list.ok());
  RecordRouter router({0});
  router.Refresh(*list);
  EXPECT_EQ(router.Route(0, 4), -1);
  EXPECT_EQ(router.Route(0, 5), 0);
}

TEST(RecordRouterTest, EmptySequencesAreSkipped) {
  auto list = SequenceList::FromCheckpoints("b", {{3, {{0, 10}}}, {4, {{0, 15}}}, {5, {{0, 15}}}},
                                            {0});
  ASSERT_TRUE(list.ok());
  RecordRouter router({0});
  router.Refresh(*list);
  EXPECT_EQ(router.Route(0, 14), 0);
  EXPECT_EQ(router.Route(0, 15), 2);  // b_4 is [15, 15)
}

TEST(RecordRouterTest, AccountingIsKeptAcrossRefreshesAndDroppedWhenPublished) {
  SequenceList list = TwoSequences();
  RecordRouter router({0, 2});
  router.Refresh(list);
  router.counts(0, 1).set_rows(3);
  router.counts(1, 0).set_unparseable(2);
  router.rows(0) = 3;
  router.rows(1) += 7;
  router.Refresh(list);
  EXPECT_EQ(router.counts(0, 1).rows(), 3);
  EXPECT_EQ(router.RowsOf(0), 3);
  EXPECT_EQ(router.RowsOf(1), 7);
  RecordRouter::Counts counts = router.CountsOf(1);
  ASSERT_EQ(counts.size(), 2u);  // every partition, zero or not
  EXPECT_EQ(counts[0].unparseable(), 2);
  EXPECT_EQ(counts[2].rows(), 0);

  ASSERT_TRUE(list.RemovePublished(0).ok());
  router.Refresh(list);
  ASSERT_EQ(router.route_count(), 1);
  EXPECT_FALSE(router.Has(0));
  EXPECT_TRUE(router.CountsOf(0).empty());
  EXPECT_EQ(router.RowsOf(0), 0);
  EXPECT_EQ(router.counts(0, 0).unparseable(), 2);  // sequence 1 is route 0 now
  EXPECT_EQ(router.RowsOf(1), 7);
}

TEST(RecordRouterTest, RestorePointAccountingRoundTrips) {
  RecordRouter router({0, 2});
  router.Refresh(TwoSequences());
  router.counts(1, 1).set_thrown_away(4);
  router.rows(1) = 11;
  state::RestorePoint point;
  router.AddTo(&point);
  ASSERT_EQ(point.sequence_stats_size(), 2);
  EXPECT_EQ(point.sequence_stats(1).sequence_id(), 1);
  EXPECT_EQ(point.sequence_stats(1).partitions().at(2).thrown_away(), 4);

  RecordRouter restored({0, 2});
  restored.Refresh(TwoSequences());
  for (const state::SequenceStats& stats : point.sequence_stats()) restored.RestoreCounts(stats);
  restored.AddRows(1, 11);
  restored.AddRows(9, 5);  // not in the list: ignored
  EXPECT_EQ(restored.counts(1, 1).thrown_away(), 4);
  EXPECT_EQ(restored.RowsOf(1), 11);
  EXPECT_FALSE(restored.Has(9));
}

TEST(RecordRouterTest, FinalEndComesFromTheList) {
  SequenceList list = TwoSequences();
  const OffsetMap end = {{0, 20}, {2, 8}};
  ASSERT_TRUE(list.SetEndOffsets(end, true, {{0, 12}, {2, 6}}, true).ok());
  RecordRouter router({0, 2});
  router.Refresh(list);
  EXPECT_TRUE(router.final_end_fixed());
  EXPECT_EQ(router.task_end(0), 20);
  EXPECT_EQ(router.task_end(1), 8);
  EXPECT_FALSE(router.IsOpenLatest(1));
}

}  // namespace
}  // namespace sluice::task
