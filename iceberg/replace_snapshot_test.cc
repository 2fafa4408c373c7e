// StageReplace on tables written by the real writers (test_table.h): the
// replace snapshot's counts, its manifests (added, rewritten with DELETED
// and EXISTING entries, carried), the conflict and conservation checks, and
// staging again on top of an append that won the race.
#include "iceberg/replace_snapshot.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "iceberg/table_reader.h"
#include "iceberg/test_table.h"

namespace sluice::iceberg {
namespace {

using testing::kT0;
using testing::TestSnapshot;
using testing::TestTable;

constexpr int64_t kDayUs = 86400LL * 1000000;

class ReplaceSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/replace_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    table_ = std::make_unique<TestTable>(root_);
    // Two appends in one day, one in the next day.
    a_ = table_->Uri(table_->Append({"s1", {{0, {0, 2}}}, {1, 2}}));
    b_ = table_->Uri(table_->Append({"s2", {{0, {2, 3}}}, {3}}));
    c_ = table_->Uri(table_->Append({"s3", {{0, {3, 6}}}, {4, 5, 6}, {}, 0, kT0 + kDayUs}));
  }

  TableMetadataInfo Metadata() {
    absl::StatusOr<TableMetadataInfo> m = ReadTableMetadata(table_->metadata());
    EXPECT_TRUE(m.ok()) << m.status();
    return *m;
  }

  const SnapshotInfo& Current(const TableMetadataInfo& m) {
    return *m.Snapshot(*m.current_snapshot_id);
  }

  std::vector<ManifestListEntry> Manifests(const SnapshotInfo& s) {
    absl::StatusOr<std::vector<ManifestListEntry>> list =
        ReadManifestList(*TestTable::Load(s.manifest_list));
    EXPECT_TRUE(list.ok()) << list.status();
    return *list;
  }

  std::vector<ManifestEntryInfo> Entries(const std::string& manifest) {
    absl::StatusOr<std::vector<ManifestEntryInfo>> e = ReadManifest(*TestTable::Load(manifest));
    EXPECT_TRUE(e.ok()) << e.status();
    return *e;
  }

  // The live data files of the current snapshot.
  std::set<std::string> LiveFiles() {
    std::set<std::string> live;
    TableMetadataInfo m = Metadata();
    for (const ManifestListEntry& l : Manifests(Current(m))) {
      for (const ManifestEntryInfo& e : Entries(l.manifest_path)) {
        if (e.status != ManifestEntryInfo::kDeleted) {
          EXPECT_TRUE(live.insert(e.file_path).second);
        }
      }
    }
    return live;
  }

  ReplaceFiles Compact(std::vector<std::string> remove, ManifestEntry add) {
    ReplaceFiles r;
    r.remove = std::move(remove);
    r.add = {std::move(add)};
    r.rewritten_kafka_ranges[{"wiki", 0}] = {{0, 3}};
    return r;
  }

  std::string root_;
  std::unique_ptr<TestTable> table_;
  std::string a_, b_, c_;
};

TEST_F(ReplaceSnapshotTest, RemovesExactlyTheReadFilesAndConservesCounts) {
  const int64_t base = *Metadata().current_snapshot_id;
  ManifestEntry compacted = table_->WriteDataFile("compacted", {1, 2, 3});
  absl::StatusOr<StagedReplace> staged = table_->Replace("r1", Compact({a_, b_}, compacted));
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_EQ(staged->removed_files, 2);
  EXPECT_EQ(staged->removed_records, 3);
  EXPECT_EQ(staged->added_records, 3);
  EXPECT_EQ(staged->rewritten_manifests, 2);
  EXPECT_EQ(staged->carried_manifests, 1);
  ASSERT_EQ(staged->files.size(), 4u);  // added manifest, 2 rewritten, the list

  TableMetadataInfo m = Metadata();
  const SnapshotInfo& s = Current(m);
  EXPECT_EQ(s.parent_snapshot_id, base);
  EXPECT_EQ(s.sequence_number, 4);
  EXPECT_EQ(s.summary.at("operation"), "replace");
  EXPECT_EQ(s.summary.at("added-data-files"), "1");
  EXPECT_EQ(s.summary.at("deleted-data-files"), "2");
  EXPECT_EQ(s.summary.at("added-records"), "3");
  EXPECT_EQ(s.summary.at("deleted-records"), "3");
  EXPECT_EQ(s.summary.at("total-records"), "6");
  EXPECT_EQ(s.summary.at("total-data-files"), "2");
  EXPECT_EQ(s.summary.at("sluice.rewritten.kafka.wiki.0"), "0-3");
  EXPECT_EQ(s.summary.count("sluice.sequence"), 0u);
  EXPECT_EQ(s.summary.count("sluice.kafka.wiki.0"), 0u);

  EXPECT_EQ(LiveFiles(), (std::set<std::string>{compacted.file_path, c_}));

  // The list: the added manifest (ADDED), s3's manifest carried as it was,
  // s1's and s2's rewritten with their entry DELETED by the replace.
  std::vector<ManifestListEntry> list = Manifests(s);
  ASSERT_EQ(list.size(), 4u);
  int deleted_entries = 0;
  for (const ManifestListEntry& l : list) {
    std::vector<ManifestEntryInfo> entries = Entries(l.manifest_path);
    ASSERT_EQ(entries.size(), 1u) << l.manifest_path;
    const ManifestEntryInfo& e = entries[0];
    if (e.file_path == compacted.file_path) {
      EXPECT_EQ(e.status, ManifestEntryInfo::kAdded);
      EXPECT_EQ(l.added_snapshot_id, s.snapshot_id);
      EXPECT_EQ(l.added_files_count, 1);
      EXPECT_EQ(l.sequence_number, 4);
    } else if (e.file_path == c_) {
      EXPECT_EQ(e.status, ManifestEntryInfo::kAdded);  // untouched
      EXPECT_EQ(l.manifest_path, table_->Uri("/metadata/s3-m0.avro"));
      EXPECT_EQ(l.sequence_number, 3);
    } else {
      ++deleted_entries;
      EXPECT_EQ(e.status, ManifestEntryInfo::kDeleted);
      EXPECT_EQ(e.snapshot_id, s.snapshot_id);
      EXPECT_EQ(l.deleted_files_count, 1);
      EXPECT_EQ(l.deleted_rows_count, e.record_count);
      EXPECT_EQ(l.existing_files_count, 0);
      EXPECT_TRUE(absl::StrContains(l.manifest_path, "r1-m0-r")) << l.manifest_path;
    }
  }
  EXPECT_EQ(deleted_entries, 2);
}

TEST_F(ReplaceSnapshotTest, KeepsOtherEntriesOfARewrittenManifestExisting) {
  // One manifest holding two files: the first replace's added manifest.
  ManifestEntry x = table_->WriteDataFile("x", {1, 2});
  ManifestEntry y = table_->WriteDataFile("y", {3});
  ReplaceFiles first;
  first.remove = {a_, b_};
  first.add = {x, y};
  ASSERT_TRUE(table_->Replace("r1", first).ok());
  const int64_t first_sequence = *Metadata().current_snapshot_id;

  ManifestEntry z = table_->WriteDataFile("z", {1, 2});
  absl::StatusOr<StagedReplace> staged = table_->Replace("r2", Compact({x.file_path}, z));
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_EQ(staged->rewritten_manifests, 1);
  // r1's list: its added manifest, two rewritten ones (one DELETED entry
  // each, no live file), s3's; r2 rewrites r1's added manifest, carries
  // s3's and drops the two without live files, as Iceberg's writers do.
  EXPECT_EQ(staged->carried_manifests, 1);
  EXPECT_EQ(Manifests(Current(Metadata())).size(), 3u);
  EXPECT_EQ(LiveFiles(), (std::set<std::string>{y.file_path, z.file_path, c_}));
  for (const ManifestListEntry& l : Manifests(Current(Metadata()))) {
    if (!absl::StrContains(l.manifest_path, "r2-m0-r0")) continue;
    std::vector<ManifestEntryInfo> entries = Entries(l.manifest_path);
    ASSERT_EQ(entries.size(), 2u);
    for (const ManifestEntryInfo& e : entries) {
      if (e.file_path == y.file_path) {
        EXPECT_EQ(e.status, ManifestEntryInfo::kExisting);
        EXPECT_EQ(e.snapshot_id, first_sequence);  // the snapshot that added it
      } else {
        EXPECT_EQ(e.status, ManifestEntryInfo::kDeleted);
      }
    }
    EXPECT_EQ(l.existing_files_count, 1);
    EXPECT_EQ(l.deleted_files_count, 1);
  }
  EXPECT_EQ(Current(Metadata()).summary.at("total-records"), "6");
}

TEST_F(ReplaceSnapshotTest, AFileNoLongerInTheTableIsAConflict) {
  ManifestEntry compacted = table_->WriteDataFile("compacted", {1, 2, 3});
  ASSERT_TRUE(table_->Replace("r1", Compact({a_, b_}, compacted)).ok());
  const std::string before = table_->metadata();
  ManifestEntry again = table_->WriteDataFile("again", {1, 2, 3});
  absl::StatusOr<StagedReplace> staged = table_->Replace("r2", Compact({a_, b_}, again));
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), absl::StatusCode::kAborted) << staged.status();
  EXPECT_TRUE(absl::StrContains(staged.status().message(),
                                absl::StrCat("conflict: file ", a_, " is no longer in the table")))
      << staged.status();
  EXPECT_EQ(table_->metadata(), before);
  // A path the table never had: the same.
  staged = table_->Replace("r3", Compact({table_->Uri("/data/never.parquet")}, again));
  EXPECT_EQ(staged.status().code(), absl::StatusCode::kAborted) << staged.status();
}

TEST_F(ReplaceSnapshotTest, RefusesWhenRowsAreNotConserved) {
  ManifestEntry short_file = table_->WriteDataFile("short", {1, 2});
  absl::StatusOr<StagedReplace> staged = table_->Replace("r1", Compact({a_, b_}, short_file));
  EXPECT_EQ(staged.status().code(), absl::StatusCode::kFailedPrecondition) << staged.status();
  EXPECT_TRUE(absl::StrContains(staged.status().message(), "2 records, the removed files 3"))
      << staged.status();
}

TEST_F(ReplaceSnapshotTest, RollupConservesTheCountColumn) {
  // s1 + s2 hold counts 1, 2, 3 in three rows; rolled up: one row of 6.
  ManifestEntry rolled = table_->WriteDataFile("rolled", {6});
  ReplaceFiles r = Compact({a_, b_}, rolled);
  r.rolled_up = RolledUpCount{"count", 7};
  absl::StatusOr<StagedReplace> staged = table_->Replace("r1", r);
  EXPECT_EQ(staged.status().code(), absl::StatusCode::kFailedPrecondition) << staged.status();
  EXPECT_TRUE(absl::StrContains(staged.status().message(), "sums to 6 over the removed files"))
      << staged.status();
  // Without saying rollup, the row counts differ: refused.
  r.rolled_up.reset();
  EXPECT_EQ(table_->Replace("r1", r).status().code(), absl::StatusCode::kFailedPrecondition);

  ManifestEntry wrong = table_->WriteDataFile("wrong", {5});
  r = Compact({a_, b_}, wrong);
  r.rolled_up = RolledUpCount{"count", 6};
  EXPECT_EQ(table_->Replace("r1", r).status().code(), absl::StatusCode::kFailedPrecondition);

  r = Compact({a_, b_}, rolled);
  r.rolled_up = RolledUpCount{"count", 6};
  staged = table_->Replace("r1", r);
  ASSERT_TRUE(staged.ok()) << staged.status();
  const TableMetadataInfo m = Metadata();
  const SnapshotInfo& s = Current(m);
  EXPECT_EQ(s.summary.at("deleted-records"), "3");
  EXPECT_EQ(s.summary.at("added-records"), "1");
  EXPECT_EQ(s.summary.at("total-records"), "4");
}

TEST_F(ReplaceSnapshotTest, StagedAgainOnTopOfAnAppendThatWonTheRace) {
  const std::string base = table_->metadata();
  ManifestEntry compacted = table_->WriteDataFile("compacted", {1, 2, 3});
  ReplaceFiles r = Compact({a_, b_}, compacted);
  r.snapshot_id = 5000;
  r.manifest_path = table_->Uri("/metadata/race-m0.avro");
  r.manifest_list_path = table_->Uri("/metadata/snap-5000.avro");
  absl::StatusOr<StagedReplace> on_base = StageReplace(base, r, &TestTable::Load);
  ASSERT_TRUE(on_base.ok()) << on_base.status();

  // An append commits first; the replace's swap would miss, so it stages
  // again on the append's metadata.
  const std::string d = table_->Uri(table_->Append({"s4", {{0, {6, 8}}}, {7, 8}}));
  absl::StatusOr<StagedReplace> again = StageReplace(table_->metadata(), r, &TestTable::Load);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->carried_manifests, 2);  // s3's and s4's
  absl::StatusOr<TableMetadataInfo> m = ReadTableMetadata(again->metadata_json);
  ASSERT_TRUE(m.ok()) << m.status();
  const SnapshotInfo& s = *m->Snapshot(5000);
  EXPECT_EQ(s.summary.at("total-records"), "8");
  EXPECT_EQ(s.sequence_number, 5);
  EXPECT_NE(on_base->metadata_json, again->metadata_json);
  ASSERT_TRUE(m->Snapshot(*s.parent_snapshot_id)->summary.count("sluice.sequence"));
  EXPECT_EQ(m->Snapshot(*s.parent_snapshot_id)->summary.at("sluice.sequence"), "s4");
  // And the staged document of the base is no append on top of it: the
  // append's snapshot is not in it.
  absl::StatusOr<TableMetadataInfo> stale = ReadTableMetadata(on_base->metadata_json);
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ(stale->Snapshot(*s.parent_snapshot_id), nullptr);
  (void)d;
}

TEST_F(ReplaceSnapshotTest, EqualInputWritesEqualBytes) {
  ManifestEntry compacted = table_->WriteDataFile("compacted", {1, 2, 3});
  ReplaceFiles r = Compact({a_, b_}, compacted);
  r.snapshot_id = 5000;
  r.manifest_path = table_->Uri("/metadata/same-m0.avro");
  r.manifest_list_path = table_->Uri("/metadata/snap-5000.avro");
  absl::StatusOr<StagedReplace> one = StageReplace(table_->metadata(), r, &TestTable::Load);
  absl::StatusOr<StagedReplace> two = StageReplace(table_->metadata(), r, &TestTable::Load);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->files, two->files);
  EXPECT_EQ(one->metadata_json, two->metadata_json);
}

TEST_F(ReplaceSnapshotTest, RefusesBadRequests) {
  ManifestEntry compacted = table_->WriteDataFile("compacted", {1, 2, 3});
  ReplaceFiles r = Compact({a_, a_}, compacted);
  EXPECT_EQ(table_->Replace("r1", r).status().code(), absl::StatusCode::kInvalidArgument);
  r = Compact({}, compacted);
  EXPECT_EQ(table_->Replace("r1", r).status().code(), absl::StatusCode::kInvalidArgument);
  // Adding a file the table already has.
  r = Compact({a_}, ManifestEntry{c_, compacted.file});
  EXPECT_EQ(table_->Replace("r1", r).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::iceberg
