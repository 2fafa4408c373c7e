#include "supervisor/compaction/iceberg_replace.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "iceberg/table_reader.h"
#include "supervisor/compaction/iceberg_test_table.h"

namespace sluice::supervisor {
namespace {

using testing::IcebergTableTest;
using testing::TableContent;
using IcebergReplaceTest = IcebergTableTest;

TEST_F(IcebergReplaceTest, ReplacesTheSegmentsFilesByTheCompactedOnesKeepingTheCounts) {
  const v1::SegmentDescriptor a = Segment(0, 40, 0), b = Segment(1, 50, 40), c = Segment(2, 60, 90);
  std::string base = Append(std::nullopt, "seq_a", a);
  base = Append(base, "seq_b", b);
  base = Append(base, "seq_c", c);
  const TableContent before = Content(base);
  ASSERT_EQ(before.files, 3);
  ASSERT_EQ(before.count_sum, 150);

  const IntervalCompaction compaction = Compact({a, b, c});
  auto staged = Replace(base, compaction);
  ASSERT_TRUE(staged.ok()) << staged.status();
  ASSERT_TRUE(staged->metadata_location.has_value()) << staged->skipped;
  EXPECT_EQ(staged->base, base);
  EXPECT_EQ(staged->removed_files, 3);
  EXPECT_EQ(staged->added_files, 1);
  EXPECT_EQ(staged->snapshot_id, IcebergReplaceSnapshotId(compaction));
  EXPECT_TRUE(absl::StrContains(*staged->metadata_location, "/iceberg/sluice/wiki/metadata/00003-"))
      << *staged->metadata_location;

  const TableContent after = Content(*staged->metadata_location);
  EXPECT_EQ(after.operation, "replace");
  EXPECT_EQ(after.snapshot_id, staged->snapshot_id);
  EXPECT_EQ(after.files, 1);
  EXPECT_EQ(after.count_sum, before.count_sum);
  EXPECT_EQ(after.rows, compaction.outputs[0].descriptor.num_rows());
  const std::string added = *after.paths.begin();
  EXPECT_TRUE(absl::StrContains(
      added, absl::StrCat("-", IcebergShortDigest(compaction.outputs[0].descriptor.id()), "-")))
      << added;
  // Every replaced file is DELETED by the replace snapshot.
  const std::map<std::string, int64_t> deleted = Deleted(*staged->metadata_location);
  EXPECT_EQ(deleted.size(), 3u);
  for (const std::string& path : before.paths) {
    ASSERT_EQ(deleted.count(path), 1u) << path;
    EXPECT_EQ(deleted.at(path), staged->snapshot_id);
  }
  // The summary records the rewritten ranges, and no new ones.
  auto metadata = iceberg::ReadTableMetadata(Read(*staged->metadata_location));
  const iceberg::SnapshotInfo* s = metadata->Snapshot(staged->snapshot_id);
  EXPECT_EQ(s->summary.at("sluice.rewritten.kafka.events.0"), "0-150");
  EXPECT_EQ(s->summary.at("sluice.datasource"), "wiki");
  EXPECT_EQ(s->summary.count("sluice.kafka.events.0"), 0u);
  EXPECT_EQ(s->summary.at("deleted-data-files"), "3");

  // Staged again (a retry): the same names, the same document.
  auto again = Replace(base, compaction);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->snapshot_id, staged->snapshot_id);
  // now_ms moved: the document differs only by its timestamp, the data and
  // manifest files are the same.
  EXPECT_EQ(Content(*again->metadata_location).paths, after.paths);
}

TEST_F(IcebergReplaceTest, AnAppendThatWonTheRaceKeepsItsFilesWhenTheReplaceIsStagedAgain) {
  const v1::SegmentDescriptor a = Segment(0, 40, 0), b = Segment(1, 50, 40), c = Segment(2, 60, 90);
  std::string base = Append(std::nullopt, "seq_a", a);
  base = Append(base, "seq_b", b);
  const IntervalCompaction compaction = Compact({a, b});
  auto first = Replace(base, compaction);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->metadata_location.has_value());
  // An append committed on the old base first: the replace's swap would
  // miss; it is staged again on the append's document.
  const std::string appended = Append(base, "seq_c", c);
  const TableContent with_append = Content(appended);
  ASSERT_EQ(with_append.files, 3);
  auto second = Replace(appended, compaction);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(second->metadata_location.has_value()) << second->skipped;
  EXPECT_EQ(second->removed_files, 2);
  const TableContent after = Content(*second->metadata_location);
  EXPECT_EQ(after.files, 2);  // the compacted file and the append's
  EXPECT_EQ(after.count_sum, 150);
  EXPECT_EQ(after.count_sum, with_append.count_sum);
  int appended_files = 0;
  for (const std::string& p : after.paths) {
    appended_files += absl::StrContains(p, IcebergShortDigest(c.id())) ? 1 : 0;
  }
  EXPECT_EQ(appended_files, 1);
  auto metadata = iceberg::ReadTableMetadata(Read(*second->metadata_location));
  EXPECT_EQ(metadata->snapshots.size(), 4u);  // a, b, c, replace
}

TEST_F(IcebergReplaceTest, StagingAgainOnAWinningAppendReusesTheDataFilesAndReadsOnlyWhatItAdded) {
  const v1::SegmentDescriptor a = Segment(0, 40, 0), b = Segment(1, 50, 40), c = Segment(2, 60, 90);
  std::string base = Append(std::nullopt, "seq_a", a);
  base = Append(base, "seq_b", b);
  const IntervalCompaction compaction = Compact({a, b});
  IcebergReplaceReuse reuse;
  auto first = Replace(base, compaction, &reuse);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->metadata_location.has_value());
  EXPECT_EQ(reuse.data_file_writes, 1);
  // Each data file's count sum read once: the two removed, the one added.
  EXPECT_EQ(reuse.column_sums.size(), 3u);
  const int64_t reads_first = reuse.table_file_reads;
  EXPECT_GT(reads_first, 0);
  ASSERT_EQ(reuse.added.size(), 1u);

  // A publish won: staged again on its document with the same reuse, the
  // data files are not written again (the compacted segment's local copy
  // is not even needed) and only the append's manifest list and manifest
  // are read.
  const std::string appended = Append(base, "seq_c", c);
  for (const CompactedSegment& out : compaction.outputs) {
    ASSERT_TRUE(RemoveAll(out.local_path).ok());
  }
  auto second = Replace(appended, compaction, &reuse);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(second->metadata_location.has_value()) << second->skipped;
  EXPECT_EQ(reuse.data_file_writes, 1);
  EXPECT_EQ(reuse.table_file_reads - reads_first, 2);
  EXPECT_EQ(second->removed_files, 2);
  const TableContent after = Content(*second->metadata_location);
  EXPECT_EQ(after.files, 2);
  EXPECT_EQ(after.count_sum, 150);
  EXPECT_EQ(after.paths.count(reuse.added[0].file_path), 1u);

  // Data files written for another schema or spec are written again (here
  // the compacted segment is gone, so writing fails, loudly).
  reuse.written_for = "another schema";
  auto stale = Replace(appended, compaction, &reuse);
  EXPECT_FALSE(stale.ok());
  // Without a reuse nothing is kept between attempts.
  EXPECT_FALSE(Replace(appended, compaction).ok());
}

TEST_F(IcebergReplaceTest, ASegmentWithoutFilesInTheTableLeavesTheTableAlone) {
  // `early` was published before the spec named the table: it has no file.
  const v1::SegmentDescriptor early = Segment(0, 40, 0), b = Segment(1, 50, 40);
  const std::string base = Append(std::nullopt, "seq_b", b);
  const IntervalCompaction compaction = Compact({early, b});
  auto staged = Replace(base, compaction);
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_FALSE(staged->metadata_location.has_value());
  EXPECT_TRUE(absl::StrContains(staged->skipped, "1 of the 2 replaced segments")) << staged->skipped;
  EXPECT_TRUE(absl::StrContains(staged->skipped, early.id())) << staged->skipped;
  // Nothing was written for it: the table's data are the append's file only.
  auto files = deep_->List("iceberg/sluice/wiki/data/");
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 1u);
  // A replace already committed: its segments' files are gone, and a
  // second replace of them stages nothing either.
  const IntervalCompaction again = Compact({b});
  auto replaced = Replace(base, again);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  ASSERT_TRUE(replaced->metadata_location.has_value()) << replaced->skipped;
  auto twice = Replace(*replaced->metadata_location, again);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_FALSE(twice->metadata_location.has_value());
}

TEST_F(IcebergReplaceTest, RowsNotConservedAreRefused) {
  const v1::SegmentDescriptor a = Segment(0, 40, 0), b = Segment(1, 50, 40), c = Segment(2, 60, 90);
  std::string base = Append(std::nullopt, "seq_a", a);
  base = Append(base, "seq_b", b);
  // The output holds c's rows too, which the table's files of a and b lack.
  IntervalCompaction compaction = Compact({a, b, c});
  compaction.replaced = {a, b};
  auto staged = Replace(base, compaction);
  EXPECT_TRUE(absl::IsFailedPrecondition(staged.status())) << staged.status();
  EXPECT_TRUE(absl::StrContains(staged.status().message(), "not conserved")) << staged.status();
  EXPECT_TRUE(absl::StrContains(staged.status().message(), "sluice.wiki")) << staged.status();
}

}  // namespace
}  // namespace sluice::supervisor
