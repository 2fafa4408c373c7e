// StageManifestRewrite on tables written by the real writers (test_table.h):
// many appends' manifests merged into one that keeps every live file with
// the snapshot id and sequence number it was added with, the thresholds,
// and a table that reads the same before and after.
#include "iceberg/rewrite_manifests.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "iceberg/table_reader.h"
#include "iceberg/test_table.h"

namespace sluice::iceberg {
namespace {

using testing::TestTable;

// A live data file as a reader plans it: the snapshot that added it and
// its data sequence number (explicit or inherited from its manifest).
struct PlannedFile {
  int64_t snapshot_id = 0;
  int64_t sequence_number = 0;
  int64_t records = 0;
  bool operator==(const PlannedFile& o) const {
    return snapshot_id == o.snapshot_id && sequence_number == o.sequence_number &&
           records == o.records;
  }
};

class RewriteManifestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/rewrite_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    table_ = std::make_unique<TestTable>(root_);
  }

  void Appends(int n) {
    for (int i = 0; i < n; ++i) {
      table_->Append({absl::StrCat("s", appended_), {{0, {appended_, appended_ + 1}}}, {i + 1}});
      ++appended_;
    }
  }

  TableMetadataInfo Metadata() {
    absl::StatusOr<TableMetadataInfo> m = ReadTableMetadata(table_->metadata());
    EXPECT_TRUE(m.ok()) << m.status();
    return *m;
  }

  std::vector<ManifestListEntry> Manifests() {
    const TableMetadataInfo m = Metadata();
    absl::StatusOr<std::vector<ManifestListEntry>> list =
        ReadManifestList(*TestTable::Load(m.Snapshot(*m.current_snapshot_id)->manifest_list));
    EXPECT_TRUE(list.ok()) << list.status();
    return *list;
  }

  std::map<std::string, PlannedFile> Planned() {
    std::map<std::string, PlannedFile> out;
    for (const ManifestListEntry& l : Manifests()) {
      absl::StatusOr<std::vector<ManifestEntryInfo>> entries =
          ReadManifest(*TestTable::Load(l.manifest_path));
      EXPECT_TRUE(entries.ok()) << entries.status();
      for (const ManifestEntryInfo& e : *entries) {
        if (e.status == ManifestEntryInfo::kDeleted) continue;
        EXPECT_EQ(out.count(e.file_path), 0u) << e.file_path << " is live twice";
        out[e.file_path] = {e.snapshot_id.value_or(l.added_snapshot_id),
                            e.sequence_number.value_or(l.sequence_number), e.record_count};
      }
    }
    return out;
  }

  absl::StatusOr<std::optional<StagedManifestRewrite>> Stage(int64_t min_count,
                                                             int64_t target_bytes) {
    RewriteManifestsOptions options;
    options.snapshot_id = table_->NextSnapshotId();
    options.timestamp_ms = 1709211700000;
    options.min_count_to_merge = min_count;
    options.target_size_bytes = target_bytes;
    options.manifest_path_stem = table_->Uri("/metadata/merged");
    options.manifest_list_path = table_->Uri(absl::StrCat("/metadata/snap-merged.avro"));
    options.summary["sluice.datasource"] = "wiki";
    options.previous_metadata_location = table_->metadata_location();
    return StageManifestRewrite(table_->metadata(), options, &TestTable::Load);
  }

  std::string root_;
  std::unique_ptr<TestTable> table_;
  int appended_ = 0;
};

TEST_F(RewriteManifestsTest, MergesTheAppendsManifestsKeepingEveryFileAsItWasAdded) {
  Appends(12);
  ASSERT_EQ(Manifests().size(), 12u);
  const std::map<std::string, PlannedFile> before = Planned();
  const std::string total_before = Metadata().Snapshot(*Metadata().current_snapshot_id)
                                       ->summary.at("total-records");

  auto staged = Stage(10, kDefaultManifestTargetBytes);
  ASSERT_TRUE(staged.ok()) << staged.status();
  ASSERT_TRUE(staged->has_value());
  EXPECT_EQ((*staged)->manifests_replaced, 12);
  EXPECT_EQ((*staged)->manifests_created, 1);
  EXPECT_EQ((*staged)->manifests_kept, 0);
  EXPECT_EQ((*staged)->entries, 12);
  table_->Adopt((*staged)->files, (*staged)->metadata_json);

  const std::vector<ManifestListEntry> after = Manifests();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].existing_files_count, 12);
  EXPECT_EQ(after[0].added_files_count, 0);
  EXPECT_EQ(Planned(), before);  // same files, each with its snapshot and sequence number
  const TableMetadataInfo m = Metadata();
  const SnapshotInfo& current = *m.Snapshot(*m.current_snapshot_id);
  EXPECT_EQ(current.summary.at("operation"), "replace");
  EXPECT_EQ(current.summary.at("added-data-files"), "0");
  EXPECT_EQ(current.summary.at("deleted-data-files"), "0");
  EXPECT_EQ(current.summary.at("total-records"), total_before);
  EXPECT_EQ(current.summary.at("manifests-created"), "1");
  EXPECT_EQ(current.summary.at("manifests-replaced"), "12");
  EXPECT_EQ(current.summary.at("sluice.datasource"), "wiki");

  // Appends after the rewrite add manifests beside the merged one.
  Appends(2);
  EXPECT_EQ(Manifests().size(), 3u);
  EXPECT_EQ(Planned().size(), 14u);
}

TEST_F(RewriteManifestsTest, BelowTheCountNothingIsMergedAndGroupsStayUnderTheTargetSize) {
  Appends(5);
  auto none = Stage(6, kDefaultManifestTargetBytes);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());

  // A target of two manifests' size: groups of two, the fifth kept.
  const std::vector<ManifestListEntry> manifests = Manifests();
  int64_t largest = 0;
  for (const ManifestListEntry& l : manifests) largest = std::max(largest, l.manifest_length);
  const std::map<std::string, PlannedFile> before = Planned();
  auto staged = Stage(2, 2 * largest + 1);
  ASSERT_TRUE(staged.ok()) << staged.status();
  ASSERT_TRUE(staged->has_value());
  EXPECT_EQ((*staged)->manifests_created, 2);
  EXPECT_EQ((*staged)->manifests_replaced, 4);
  EXPECT_EQ((*staged)->manifests_kept, 1);
  table_->Adopt((*staged)->files, (*staged)->metadata_json);
  EXPECT_EQ(Manifests().size(), 3u);
  EXPECT_EQ(Planned(), before);
}

TEST_F(RewriteManifestsTest, AnEmptyTableOrBadOptionsStageNothing) {
  auto empty = Stage(2, kDefaultManifestTargetBytes);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_FALSE(empty->has_value());
  Appends(3);
  EXPECT_EQ(Stage(1, kDefaultManifestTargetBytes).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Stage(2, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::iceberg
