#include "task/sequence_store.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/spec.h"

namespace sluice::task {
namespace {

std::string FreshDir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/sequence_store_test_", name);
  EXPECT_TRUE(RemoveAll(dir).ok());
  EXPECT_TRUE(MakeDirs(dir).ok());
  return dir;
}

const std::vector<std::pair<int32_t, OffsetMap>> kStart = {{0, {{0, 10}, {1, 20}}}};

TEST(SequenceStoreTest, LoadCreatesTheListFromCheckpointsThenReadsItBack) {
  const std::string path = FreshDir("load") + "/sequences.json";
  SequenceStore store(path, "wiki", {0, 1});
  EXPECT_FALSE(store.loaded());
  EXPECT_FALSE(store.Latest().has_value());
  EXPECT_FALSE(store.TaskEnd().has_value());
  absl::StatusOr<bool> from_disk = store.Load(kStart);
  ASSERT_TRUE(from_disk.ok()) << from_disk.status();
  EXPECT_FALSE(*from_disk);
  EXPECT_TRUE(store.loaded());
  EXPECT_TRUE(PathExists(path));
  ASSERT_TRUE(store.Latest().has_value());
  EXPECT_EQ(store.Latest()->name, "wiki_0");
  EXPECT_EQ(store.last_published_id(), -1);

  SequenceStore again(path, "wiki", {0, 1});
  // Other checkpoints do not matter once the file exists.
  from_disk = again.Load({{0, {{0, 99}, {1, 99}}}});
  ASSERT_TRUE(from_disk.ok()) << from_disk.status();
  EXPECT_TRUE(*from_disk);
  EXPECT_EQ(again.Latest()->start, (OffsetMap{{0, 10}, {1, 20}}));
}

TEST(SequenceStoreTest, SetEndOffsetsIsPersistedBeforeItIsKept) {
  const std::string path = FreshDir("set_end") + "/sequences.json";
  SequenceStore store(path, "wiki", {0, 1});
  EXPECT_EQ(store.SetEndOffsets({{0, 15}, {1, 25}}, false, {}, true).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store.Load(kStart).ok());
  const OffsetMap current = {{0, 15}, {1, 25}};
  absl::StatusOr<SequenceList::SetEndOutcome> outcome =
      store.SetEndOffsets(current, false, current, true);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->duplicate);
  EXPECT_EQ(outcome->latest_id, 1);
  EXPECT_EQ(store.Latest()->name, "wiki_1");
  // The repeat is recognised and changes nothing.
  outcome = store.SetEndOffsets(current, false, current, true);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->duplicate);
  EXPECT_EQ(store.Snapshot().sequences().size(), 2u);
  // Not paused: refused, unchanged.
  EXPECT_EQ(store.SetEndOffsets({{0, 30}, {1, 30}}, true, current, false).status().code(),
            absl::StatusCode::kFailedPrecondition);

  SequenceStore reloaded(path, "wiki", {0, 1});
  ASSERT_TRUE(reloaded.Load(kStart).ok());
  EXPECT_EQ(reloaded.Snapshot().sequences().size(), 2u);
}

TEST(SequenceStoreTest, OnPublishedRemovesTheSequenceAndSavesTheList) {
  const std::string path = FreshDir("published") + "/sequences.json";
  SequenceStore store(path, "wiki", {0, 1});
  ASSERT_TRUE(store.Load(kStart).ok());
  PublishListener& listener = store;
  // The open sequence cannot be published.
  EXPECT_FALSE(listener.OnPublished(0).ok());
  const OffsetMap current = {{0, 15}, {1, 25}};
  ASSERT_TRUE(store.SetEndOffsets(current, false, current, true).ok());
  EXPECT_FALSE(store.AllReadIsPublished(current));
  ASSERT_TRUE(listener.OnPublished(0).ok());
  EXPECT_EQ(store.last_published_id(), 0);
  ASSERT_EQ(store.Snapshot().sequences().size(), 1u);
  EXPECT_TRUE(store.AllReadIsPublished(current));
  EXPECT_FALSE(store.AllReadIsPublished({{0, 16}, {1, 25}}));

  v1::TaskStatus status;
  store.FillStatus({}, &status);
  EXPECT_EQ(status.latest_sequence_id(), 1);
  ASSERT_EQ(status.checkpoints_size(), 1);
  EXPECT_EQ(status.checkpoints(0).sequence_id(), 1);
  EXPECT_EQ(status.start_offsets().at(0), 15);

  SequenceStore reloaded(path, "wiki", {0, 1});
  ASSERT_TRUE(reloaded.Load(kStart).ok());
  EXPECT_EQ(reloaded.last_published_id(), 0);
}

TEST(SequenceStoreTest, StatusBeforeLoadShowsTheSpecStart) {
  SequenceStore store(FreshDir("status") + "/sequences.json", "wiki", {0});
  v1::TaskStatus status;
  store.FillStatus({{0, 7}}, &status);
  EXPECT_EQ(status.start_offsets().at(0), 7);
  EXPECT_EQ(status.checkpoints_size(), 0);
  EXPECT_TRUE(status.end_offsets().empty());
}

}  // namespace
}  // namespace sluice::task
