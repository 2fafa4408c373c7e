#include "task/sequences.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/file_util.h"
#include "common/spec.h"
#include "google/protobuf/util/message_differencer.h"

namespace sluice::task {
namespace {

constexpr int64_t kEnd = kEndOfPartition;

SequenceList Fresh() {
  auto list = SequenceList::FromCheckpoints("wiki_abc", {{0, {{0, 10}, {1, 20}}}}, {1, 0});
  EXPECT_TRUE(list.ok()) << list.status();
  return *list;
}

TEST(SequenceListTest, FreshTaskHasOneOpenSequence) {
  SequenceList list = Fresh();
  ASSERT_EQ(list.sequences().size(), 1u);
  const Sequence& s = list.latest();
  EXPECT_EQ(s.name, "wiki_abc_0");
  EXPECT_EQ(s.start, (OffsetMap{{0, 10}, {1, 20}}));
  EXPECT_EQ(s.end, (OffsetMap{{0, kEnd}, {1, kEnd}}));
  EXPECT_FALSE(s.checkpointed);
  EXPECT_FALSE(list.final_end_fixed());
}

TEST(SequenceListTest, CheckpointsBuildClosedSequencesAndRouteToTheFirstThatFits) {
  auto list = SequenceList::FromCheckpoints(
      "b", {{3, {{0, 10}}}, {4, {{0, 15}}}, {5, {{0, 15}}}, {6, {{0, 30}}}}, {0});
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->sequences().size(), 4u);
  EXPECT_TRUE(list->sequences()[0].checkpointed);
  EXPECT_EQ(list->sequences()[1].name, "b_4");
  EXPECT_EQ(list->Route(0, 9), -1);
  EXPECT_EQ(list->Route(0, 10), 0);
  EXPECT_EQ(list->Route(0, 14), 0);
  EXPECT_EQ(list->Route(0, 15), 2);  // b_4 is empty on partition 0: [15, 15)
  EXPECT_EQ(list->Route(0, 29), 2);
  EXPECT_EQ(list->Route(0, 30), 3);
  EXPECT_EQ(list->Route(0, 1'000'000), 3);
  EXPECT_EQ(list->Route(7, 12), -1);
}

TEST(SequenceListTest, BadCheckpointsAreInvalidArgument) {
  auto missing = SequenceList::FromCheckpoints("b", {{0, {{0, 1}}}}, {0, 1});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  auto backwards = SequenceList::FromCheckpoints("b", {{0, {{0, 10}}}, {1, {{0, 5}}}}, {0});
  EXPECT_EQ(backwards.status().code(), absl::StatusCode::kInvalidArgument);
  auto ids = SequenceList::FromCheckpoints("b", {{1, {{0, 1}}}, {1, {{0, 5}}}}, {0});
  EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument);
  auto none = SequenceList::FromCheckpoints("b", {}, {0});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SequenceListTest, SetEndOffsetsClosesTheLatestAndOpensTheNext) {
  SequenceList list = Fresh();
  auto outcome = list.SetEndOffsets({{0, 15}, {1, 25}}, false, {{0, 12}, {1, 25}}, true);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->duplicate);
  EXPECT_EQ(outcome->latest_id, 1);
  ASSERT_EQ(list.sequences().size(), 2u);
  EXPECT_TRUE(list.sequences()[0].checkpointed);
  EXPECT_EQ(list.sequences()[0].end, (OffsetMap{{0, 15}, {1, 25}}));
  EXPECT_EQ(list.latest().name, "wiki_abc_1");
  EXPECT_EQ(list.latest().start, (OffsetMap{{0, 15}, {1, 25}}));
  EXPECT_FALSE(list.latest().checkpointed);
  EXPECT_EQ(list.Route(0, 14), 0);
  EXPECT_EQ(list.Route(0, 15), 1);
}

// A pauseless checkpoint ended sequence 0 at {0:15, 1:25}, past the records
// that exist; the task read {0:13, 1:25}. The supervisor moves it back.
SequenceList CheckpointedAhead() {
  SequenceList list = Fresh();
  EXPECT_TRUE(list.SetEndOffsets({{0, 15}, {1, 25}}, false, {{0, 12}, {1, 24}}, true).ok());
  return list;
}

TEST(SequenceListTest, ACheckpointMovesBackToWhatWasRead) {
  SequenceList list = CheckpointedAhead();
  auto moved = list.SetEndOffsets({{0, 13}, {1, 25}}, false, {{0, 13}, {1, 25}}, true);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_FALSE(moved->duplicate);
  EXPECT_EQ(moved->latest_id, 1);
  EXPECT_EQ(moved->end_offsets, (OffsetMap{{0, 13}, {1, 25}}));
  ASSERT_EQ(list.sequences().size(), 2u);
  EXPECT_EQ(list.sequences()[0].end, (OffsetMap{{0, 13}, {1, 25}}));
  EXPECT_EQ(list.latest().start, (OffsetMap{{0, 13}, {1, 25}}));
  EXPECT_FALSE(list.latest().checkpointed);
  EXPECT_TRUE(SequenceList::IsFullyRead(list.sequences()[0], {{0, 13}, {1, 25}}));
  EXPECT_EQ(list.Route(0, 12), 0);
  EXPECT_EQ(list.Route(0, 13), 1);
  // The repeat is a duplicate.
  auto again = list.SetEndOffsets({{0, 13}, {1, 25}}, false, {{0, 13}, {1, 25}}, true);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->duplicate);
}

TEST(SequenceListTest, AFinalEndBeforeTheLatestStartMovesItBackAndEndsTheTask) {
  SequenceList list = CheckpointedAhead();
  // Partition 0 never reached 15; partition 1 was read past 25.
  auto final_end = list.SetEndOffsets({{0, 13}, {1, 30}}, true, {{0, 13}, {1, 28}}, true);
  ASSERT_TRUE(final_end.ok()) << final_end.status();
  EXPECT_EQ(final_end->end_offsets, (OffsetMap{{0, 13}, {1, 30}}));
  EXPECT_EQ(list.sequences()[0].end, (OffsetMap{{0, 13}, {1, 25}}));
  EXPECT_EQ(list.latest().start, (OffsetMap{{0, 13}, {1, 25}}));
  EXPECT_EQ(list.latest().end, (OffsetMap{{0, 13}, {1, 30}}));
  EXPECT_TRUE(list.latest().checkpointed);
  EXPECT_TRUE(list.final_end_fixed());
  EXPECT_EQ(list.task_end(), (OffsetMap{{0, 13}, {1, 30}}));
  // It survives the persisted form.
  auto reloaded = SequenceList::FromRecord("wiki_abc", list.ToRecord(), {0, 1});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ(reloaded->sequences()[0].end, (OffsetMap{{0, 13}, {1, 25}}));
  auto again = list.SetEndOffsets({{0, 13}, {1, 30}}, true, {{0, 13}, {1, 28}}, true);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->duplicate);
}

TEST(SequenceListTest, ACheckpointMovesBackAndTheNextOneIsSetInOneCall) {
  SequenceList list = CheckpointedAhead();
  // Partition 0 never reached 15; partition 1 was read on to 27: the
  // supervisor moved checkpoint 1 to {0:13, 1:25} and recorded checkpoint 2
  // at {0:13, 1:27}.
  auto both = list.SetEndOffsets({{0, 13}, {1, 27}}, false, {{0, 13}, {1, 27}}, true);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->latest_id, 2);
  ASSERT_EQ(list.sequences().size(), 3u);
  EXPECT_EQ(list.sequences()[0].end, (OffsetMap{{0, 13}, {1, 25}}));
  EXPECT_EQ(list.sequences()[1].start, (OffsetMap{{0, 13}, {1, 25}}));
  EXPECT_EQ(list.sequences()[1].end, (OffsetMap{{0, 13}, {1, 27}}));
  EXPECT_TRUE(list.sequences()[1].checkpointed);
  EXPECT_EQ(list.latest().start, (OffsetMap{{0, 13}, {1, 27}}));
  EXPECT_FALSE(list.latest().checkpointed);
  auto again = list.SetEndOffsets({{0, 13}, {1, 27}}, false, {{0, 13}, {1, 27}}, true);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->duplicate);
}

TEST(SequenceListTest, ACheckpointDoesNotMoveBackPastWhatWasRead) {
  SequenceList list = CheckpointedAhead();
  const std::vector<Sequence> before = list.sequences();
  // Read to 14: 13 would cut record 13 out of sequence 0 after the fact.
  auto passed = list.SetEndOffsets({{0, 13}, {1, 25}}, false, {{0, 14}, {1, 25}}, true);
  EXPECT_EQ(passed.status().code(), absl::StatusCode::kAborted) << passed.status();
  // Before the previous sequence's start.
  auto early = list.SetEndOffsets({{0, 9}, {1, 25}}, false, {{0, 9}, {1, 20}}, true);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kInvalidArgument) << early.status();
  // Not fenced.
  auto unfenced = list.SetEndOffsets({{0, 13}, {1, 25}}, true, {{0, 13}, {1, 25}}, false);
  EXPECT_EQ(unfenced.status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(list.sequences().size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(list.sequences()[i].start, before[i].start);
    EXPECT_EQ(list.sequences()[i].end, before[i].end);
  }
  // With the previous sequence published there is nothing to move.
  SequenceList alone = CheckpointedAhead();
  ASSERT_TRUE(alone.SetEndOffsets({{0, 16}, {1, 26}}, false, {{0, 16}, {1, 26}}, true).ok());
  ASSERT_TRUE(alone.RemovePublished(0).ok());
  ASSERT_TRUE(alone.RemovePublished(1).ok());
  ASSERT_EQ(alone.sequences().size(), 1u);
  auto published = alone.SetEndOffsets({{0, 15}, {1, 26}}, false, {{0, 15}, {1, 26}}, true);
  EXPECT_EQ(published.status().code(), absl::StatusCode::kInvalidArgument) << published.status();
}

TEST(SequenceListTest, ExactRepeatIsADuplicateAndChangesNothing) {
  SequenceList list = Fresh();
  ASSERT_TRUE(list.SetEndOffsets({{0, 15}, {1, 25}}, false, {{0, 12}, {1, 25}}, true).ok());
  // Repeated while not paused: still recognised, before the paused rule.
  auto again = list.SetEndOffsets({{0, 15}, {1, 25}}, false, {{0, 40}, {1, 40}}, false);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(list.sequences().size(), 2u);
  // The latest start of a fresh task is also a duplicate (no progress round).
  SequenceList fresh = Fresh();
  auto same = fresh.SetEndOffsets({{0, 10}, {1, 20}}, false, {{0, 10}, {1, 20}}, true);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->duplicate);
  EXPECT_EQ(fresh.sequences().size(), 1u);
}

TEST(SequenceListTest, FinishFixesTheEndAndARepeatIsADuplicate) {
  SequenceList list = Fresh();
  auto outcome = list.SetEndOffsets({{0, 50}, {1, 60}}, true, {{0, 12}, {1, 25}}, true);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->duplicate);
  EXPECT_EQ(outcome->latest_id, 0);
  EXPECT_TRUE(list.final_end_fixed());
  EXPECT_EQ(list.task_end(), (OffsetMap{{0, 50}, {1, 60}}));
  EXPECT_TRUE(list.latest().checkpointed);
  auto again = list.SetEndOffsets({{0, 50}, {1, 60}}, true, {{0, 50}, {1, 60}}, false);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  auto other = list.SetEndOffsets({{0, 70}, {1, 70}}, true, {{0, 50}, {1, 60}}, true);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  auto checkpoint = list.SetEndOffsets({{0, 70}, {1, 70}}, false, {{0, 50}, {1, 60}}, true);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SequenceListTest, EachRejectionPathHasItsCode) {
  SequenceList list = Fresh();
  const OffsetMap current = {{0, 12}, {1, 25}};
  // Foreign partition.
  auto foreign = list.SetEndOffsets({{0, 15}, {1, 25}, {2, 3}}, false, current, true);
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(foreign.status().message().find("partition 2"), std::string::npos);
  // Missing partition.
  auto partial = list.SetEndOffsets({{0, 15}}, false, current, true);
  EXPECT_EQ(partial.status().code(), absl::StatusCode::kInvalidArgument);
  // END_OF_PARTITION is not an end.
  auto eop = list.SetEndOffsets({{0, kEnd}, {1, 25}}, false, current, true);
  EXPECT_EQ(eop.status().code(), absl::StatusCode::kInvalidArgument);
  // Not paused.
  auto running = list.SetEndOffsets({{0, 15}, {1, 25}}, false, current, false);
  EXPECT_EQ(running.status().code(), absl::StatusCode::kFailedPrecondition);
  // Behind what the task read.
  auto behind = list.SetEndOffsets({{0, 11}, {1, 25}}, false, current, true);
  EXPECT_EQ(behind.status().code(), absl::StatusCode::kAborted);
  EXPECT_NE(behind.status().message().find("already read past"), std::string::npos);
  EXPECT_NE(behind.status().message().find("current offset is 12"), std::string::npos);
  // Nothing changed through all of that.
  EXPECT_EQ(list.sequences().size(), 1u);
  EXPECT_FALSE(list.latest().checkpointed);
}

TEST(SequenceListTest, AnEndBeforeTheLatestStartMovesItBackOnlyWhereNothingWasReadPastIt) {
  // A lagging replica: its sequence 1 starts at 100 (the group's maximum) but
  // it has read only to 80. An end before 80 would cut what it read.
  auto list = SequenceList::FromCheckpoints("b", {{0, {{0, 0}}}, {1, {{0, 100}}}}, {0});
  ASSERT_TRUE(list.ok());
  auto cut = list->SetEndOffsets({{0, 70}}, false, {{0, 80}}, true);
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kAborted) << cut.status();
  EXPECT_EQ(list->latest().start, (OffsetMap{{0, 100}}));
  auto fine = list->SetEndOffsets({{0, 120}}, false, {{0, 80}}, true);
  EXPECT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(list->latest().start, (OffsetMap{{0, 120}}));
}

TEST(SequenceListTest, PublishedSequencesLeaveInOrder) {
  SequenceList list = Fresh();
  ASSERT_TRUE(list.SetEndOffsets({{0, 15}, {1, 25}}, false, {{0, 15}, {1, 25}}, true).ok());
  EXPECT_FALSE(SequenceList::IsFullyRead(list.sequences()[0], {{0, 14}, {1, 25}}));
  EXPECT_TRUE(SequenceList::IsFullyRead(list.sequences()[0], {{0, 15}, {1, 25}}));
  EXPECT_FALSE(SequenceList::IsFullyRead(list.sequences()[1], {{0, 99}, {1, 99}}));
  EXPECT_EQ(list.RemovePublished(1).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(list.RemovePublished(0).ok());
  EXPECT_EQ(list.last_published_id(), 0);
  EXPECT_EQ(list.RemovePublished(1).code(), absl::StatusCode::kFailedPrecondition);  // open
  ASSERT_TRUE(list.SetEndOffsets({{0, 20}, {1, 30}}, true, {{0, 15}, {1, 25}}, true).ok());
  ASSERT_TRUE(list.RemovePublished(1).ok());
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(list.final_end_fixed());
}

TEST(SequenceListTest, SaveAndLoadRoundTripAndRejectCorruptFiles) {
  char tmpl[] = "/tmp/sluice_sequences_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  SequenceList list = Fresh();
  ASSERT_TRUE(list.SetEndOffsets({{0, 15}, {1, 25}}, false, {{0, 15}, {1, 25}}, true).ok());
  ASSERT_TRUE(list.RemovePublished(0).ok());
  ASSERT_TRUE(list.Save(dir + "/sequences.json").ok());
  auto loaded = SequenceList::Load(dir + "/sequences.json", "wiki_abc", {0, 1});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(loaded->ToRecord(), list.ToRecord()));
  EXPECT_EQ(loaded->last_published_id(), 0);

  // Another task's file (different base name) is refused.
  auto foreign = SequenceList::Load(dir + "/sequences.json", "other", {0, 1});
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kDataLoss);
  ASSERT_TRUE(WriteFileAtomically(dir + "/bad.json", "{not json").ok());
  EXPECT_EQ(SequenceList::Load(dir + "/bad.json", "wiki_abc", {0, 1}).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(SequenceList::Load(dir + "/absent.json", "wiki_abc", {0, 1}).status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(RemoveAll(dir).ok());
}

}  // namespace
}  // namespace sluice::task
