#include "supervisor/compaction/table_upkeep.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "common/status_macros.h"
#include "iceberg/table_reader.h"
#include "supervisor/compaction/iceberg_test_table.h"
#include "supervisor/iceberg/iceberg_orphan_sweeper.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {
namespace {

using testing::TableContent;

constexpr int64_t kStartMs = 1764468000000;

class TableUpkeepTest : public testing::IcebergTableTest {
 protected:
  void SetUp() override {
    testing::IcebergTableTest::SetUp();
    store_ = testing::OpenTestStore(dir_.path());
  }

  // Points the catalog at `next` if it is at `expected`.
  bool Swap(const std::optional<std::string>& expected, const std::string& next) {
    bool swapped = false;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(swapped, txn.SwapIcebergMetadataLocation(
                                                           "sluice", "wiki", expected, next));
                      return absl::OkStatus();
                    })
                    .ok());
    return swapped;
  }

  std::optional<std::string> Catalog() {
    std::optional<std::string> location;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(location,
                                              txn.IcebergMetadataLocation("sluice", "wiki"));
                      return absl::OkStatus();
                    })
                    .ok());
    return location;
  }

  // append a, append b, replace (a, b) by their compaction, append c; each
  // committed to the catalog. Returns the catalog's location.
  std::string AppendAppendReplaceAppend() {
    a_ = Segment(0, 40, 0);
    b_ = Segment(1, 50, 40);
    c_ = Segment(2, 60, 90);
    std::string at = Append(std::nullopt, "seq_a", a_);
    EXPECT_TRUE(Swap(std::nullopt, at));
    std::string next = Append(at, "seq_b", b_);
    EXPECT_TRUE(Swap(at, next));
    at = next;
    compaction_ = Compact({a_, b_});
    auto staged = Replace(at, compaction_);
    EXPECT_TRUE(staged.ok() && staged->metadata_location.has_value()) << staged.status();
    EXPECT_TRUE(Swap(at, *staged->metadata_location));
    at = *staged->metadata_location;
    next = Append(at, "seq_c", c_);
    EXPECT_TRUE(Swap(at, next));
    return next;
  }

  bool Exists(const std::string& uri) { return std::filesystem::exists(testing::LocalPath(uri)); }

  // Two passes of the sweeper at min_age 0 (a file goes on the second pass
  // that sees it unreferenced): the files removed.
  int64_t SweepTwice(const std::string& location) {
    IcebergOrphanSweepOptions options;
    options.min_age = absl::ZeroDuration();
    options.scratch_dir = Scratch();
    IcebergOrphanSweeper sweeper(deep_.get(), options);
    auto first = sweeper.Sweep(target_.location_key, location, absl::FromUnixMillis(kStartMs));
    EXPECT_TRUE(first.ok()) << first.status();
    auto second = sweeper.Sweep(target_.location_key, location, absl::FromUnixMillis(kStartMs + 1));
    EXPECT_TRUE(second.ok()) << second.status();
    return (first.ok() ? *first : 0) + (second.ok() ? *second : 0);
  }

  std::unique_ptr<MetadataStore> store_;
  v1::SegmentDescriptor a_, b_, c_;
  IntervalCompaction compaction_;
};

TEST_F(TableUpkeepTest, ExpiryLetsTheSweeperRemoveWhatOnlyExpiredSnapshotsReferenced) {
  const std::string current = AppendAppendReplaceAppend();
  // Before expiry, every file is referenced by a snapshot: nothing goes.
  ASSERT_EQ(SweepTwice(current), 0);
  auto before = iceberg::ReadTableMetadata(Read(current));
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->snapshots.size(), 4u);
  std::vector<std::string> expired_lists;
  for (size_t i = 0; i < 3; ++i) expired_lists.push_back(before->snapshots[i].manifest_list);
  const std::string current_list = before->snapshots[3].manifest_list;
  std::set<std::string> replaced_files;  // a's and b's data files
  for (const auto& [path, by] : Deleted(before->metadata_log.back())) replaced_files.insert(path);
  ASSERT_EQ(replaced_files.size(), 2u);
  const TableContent live = Content(current);
  ASSERT_EQ(live.files, 2);  // c's and the compacted file

  // All four snapshots are hours old; one is kept: c's append.
  SnapshotExpiryPolicy policy;
  policy.retention = absl::Hours(1);
  policy.keep = 1;
  auto staged = StageSnapshotExpiry(deep_.get(), Scratch(), target_, current, policy,
                                    absl::FromUnixMillis(kStartMs) + absl::Hours(3));
  ASSERT_TRUE(staged.ok()) << staged.status();
  ASSERT_TRUE(staged->has_value());
  EXPECT_EQ((*staged)->expired.size(), 3u);
  EXPECT_TRUE(absl::StrContains((*staged)->metadata_location, "/metadata/00004-"))
      << (*staged)->metadata_location;
  auto swapped = CommitSnapshotExpiry(store_.get(), target_, **staged);
  ASSERT_TRUE(swapped.ok()) << swapped.status();
  EXPECT_TRUE(*swapped);
  EXPECT_EQ(Catalog(), (*staged)->metadata_location);

  // The expired snapshots' manifest lists, the manifests only they named
  // (a's, b's and the replace's rewritten ones) and the replaced data files.
  const int64_t removed = SweepTwice((*staged)->metadata_location);
  EXPECT_EQ(removed, 3 + 4 + 2);
  for (const std::string& list : expired_lists) EXPECT_FALSE(Exists(list)) << list;
  for (const std::string& file : replaced_files) EXPECT_FALSE(Exists(file)) << file;
  EXPECT_TRUE(Exists(current_list));
  EXPECT_TRUE(Exists(current));  // in the metadata-log
  // The table reads as before.
  const TableContent after = Content((*staged)->metadata_location);
  EXPECT_EQ(after.paths, live.paths);
  EXPECT_EQ(after.count_sum, 150);
  auto metadata = iceberg::ReadTableMetadata(Read((*staged)->metadata_location));
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->snapshots.size(), 1u);
  EXPECT_EQ(metadata->metadata_log.back(), current);

  // Nothing more to expire.
  auto again = StageSnapshotExpiry(deep_.get(), Scratch(), target_, (*staged)->metadata_location,
                                   policy, absl::FromUnixMillis(kStartMs) + absl::Hours(3));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->has_value());
}

TEST_F(TableUpkeepTest, RecentSnapshotsAndTheNewestOfTheChainStay) {
  const std::string current = AppendAppendReplaceAppend();
  SnapshotExpiryPolicy policy;
  policy.retention = absl::Hours(1);
  policy.keep = 10;
  auto staged = StageSnapshotExpiry(deep_.get(), Scratch(), target_, current, policy,
                                    absl::FromUnixMillis(kStartMs) + absl::Hours(3));
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_FALSE(staged->has_value());
  policy.keep = 1;
  policy.retention = absl::Hours(24 * 7);
  staged = StageSnapshotExpiry(deep_.get(), Scratch(), target_, current, policy,
                               absl::FromUnixMillis(kStartMs) + absl::Hours(3));
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_FALSE(staged->has_value());
}

TEST_F(TableUpkeepTest, UpkeepMergesPiledUpManifestsAndTheTableReadsTheSame) {
  // Six appends, each its own manifest.
  std::optional<std::string> at;
  for (int i = 0; i < 6; ++i) {
    const std::string next =
        Append(at, absl::StrCat("seq_", i), Segment(i, 10 + i, int64_t{100} * i));
    ASSERT_TRUE(Swap(at, next));
    at = next;
  }
  const TableContent before = Content(*at);
  ASSERT_EQ(before.files, 6);
  v1::SupervisorSpec spec = testing::TestSpec("wiki");
  spec.mutable_iceberg_table()->set_table_namespace("sluice");
  spec.mutable_iceberg_table()->set_table_name("wiki");
  TableUpkeepOptions options;
  options.store = store_.get();
  options.deep_storage = deep_.get();
  options.scratch_dir = Scratch();
  options.manifests.min_count_to_merge = 7;  // not yet
  auto nothing = UpkeepIcebergTable(options, spec, absl::FromUnixMillis(kStartMs));
  ASSERT_TRUE(nothing.ok()) << nothing.status();
  EXPECT_EQ(nothing->manifests_created, 0);
  EXPECT_EQ(Catalog(), at);

  options.manifests.min_count_to_merge = 5;
  auto done = UpkeepIcebergTable(options, spec, absl::FromUnixMillis(kStartMs));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->manifests_replaced, 6);
  EXPECT_EQ(done->manifests_created, 1);
  EXPECT_TRUE(done->expired.empty());
  const std::optional<std::string> merged = Catalog();
  ASSERT_NE(merged, at);
  const TableContent after = Content(*merged);
  EXPECT_EQ(after.paths, before.paths);
  EXPECT_EQ(after.count_sum, before.count_sum);
  EXPECT_EQ(after.operation, "replace");
  // The old manifests stay referenced by the older snapshots: the sweeper
  // removes nothing the table still reads.
  SweepTwice(*merged);
  EXPECT_EQ(Content(*merged).paths, before.paths);
  // A merged table is not merged again.
  auto again = UpkeepIcebergTable(options, spec, absl::FromUnixMillis(kStartMs));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->manifests_created, 0);
}

TEST_F(TableUpkeepTest, AnExpiryStagedBeforeAnotherCommitIsNotSwappedIn) {
  const std::string current = AppendAppendReplaceAppend();
  SnapshotExpiryPolicy policy;
  policy.retention = absl::Hours(1);
  policy.keep = 1;
  auto staged = StageSnapshotExpiry(deep_.get(), Scratch(), target_, current, policy,
                                    absl::FromUnixMillis(kStartMs) + absl::Hours(3));
  ASSERT_TRUE(staged.ok() && staged->has_value()) << staged.status();
  // A publish commits in between.
  const std::string appended = Append(current, "seq_d", Segment(3, 30, 150));
  ASSERT_TRUE(Swap(current, appended));
  auto swapped = CommitSnapshotExpiry(store_.get(), target_, **staged);
  ASSERT_TRUE(swapped.ok()) << swapped.status();
  EXPECT_FALSE(*swapped);
  EXPECT_EQ(Catalog(), appended);
  EXPECT_EQ(Content(appended).count_sum, 180);
}

}  // namespace
}  // namespace sluice::supervisor
