#include "supervisor/compaction/iceberg_replace.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"
#include "common/segment/compaction.h"
#include "common/status_macros.h"
#include "iceberg/table_reader.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

constexpr char kHourStart[] = "2026-11-30T02:00:00.000Z_2026-11-30T03:00:00.000Z";

std::string LocalPath(const std::string& uri) {
  return absl::StartsWith(uri, "file://") ? uri.substr(7) : uri;
}

// What a snapshot's live files hold.
struct TableContent {
  int64_t files = 0;
  int64_t rows = 0;
  int64_t count_sum = 0;
  std::set<std::string> paths;
  std::string operation;
  int64_t snapshot_id = 0;
};

class IcebergReplaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto deep = OpenDeepStorage("file://" + dir_.path() + "/deep");
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = std::move(*deep);
    ASSERT_TRUE(MakeDirs(dir_.path() + "/work").ok());
    v1::SupervisorSpec spec = testing::TestSpec("wiki");
    spec.mutable_iceberg_table()->set_table_namespace("sluice");
    spec.mutable_iceberg_table()->set_table_name("wiki");
    target_ = *IcebergTargetOf(spec, *deep_);
  }

  std::string Scratch() const { return dir_.path() + "/scratch"; }

  // A real segment of hour 0 (`rows` test rows, partition 0's [start,
  // start + rows)), pushed to deep storage.
  v1::SegmentDescriptor Segment(int partition_num, int rows, int64_t start) {
    v1::AllocateSegmentResponse allocated;
    allocated.set_version("2026-11-30T02:00:00.000Z");
    allocated.set_partition_num(partition_num);
    allocated.set_segment_id(absl::StrCat("wiki_", kHourStart, "_2026-11-30T02:00:00.000Z_",
                                          partition_num));
    allocated.mutable_interval()->set_start_ms(testing::SegmentHourStartMs());
    allocated.mutable_interval()->set_end_ms(testing::SegmentHourStartMs() + 3600000);
    auto pushed = testing::PushSegment(deep_.get(), dir_.path() + "/work",
                                       absl::StrCat("wiki/seg", partition_num, ".sluice"), "wiki",
                                       allocated, rows, {{0, {start, start + rows}}});
    EXPECT_TRUE(pushed.ok()) << pushed.status();
    return *pushed;
  }

  // The append of one sequence's segment on `base` (nullopt: a new table).
  std::string Append(const std::optional<std::string>& base, const std::string& sequence,
                     const v1::SegmentDescriptor& segment) {
    IcebergCommitInput input;
    input.sequence_name = sequence;
    input.segments = {segment};
    input.now_ms = now_ms_++;
    const int64_t start = segment.provenance().ranges(0).start_offset();
    const int64_t end = segment.provenance().ranges(0).end_offset();
    input.kafka_ranges["sluice.kafka.events.0"] = absl::StrCat(start, "-", end);
    auto staged = StageIcebergCommit(deep_.get(), Scratch(), target_, base, input);
    EXPECT_TRUE(staged.ok()) << staged.status();
    return staged->metadata_location;
  }

  // `inputs` compacted (rollup) into one segment of a newer version, pushed.
  IntervalCompaction Compact(const std::vector<v1::SegmentDescriptor>& inputs) {
    IntervalCompaction c;
    c.datasource = "wiki";
    c.interval = inputs[0].interval();
    c.replaced = inputs;
    segment::CompactionOptions options;
    for (const v1::SegmentDescriptor& s : inputs) options.input_paths.push_back(LocalPath(s.path()));
    options.version = "2026-12-06T00:00:00.000Z";
    options.segment_id = absl::StrCat("wiki_", kHourStart, "_", options.version, "_0");
    options.path = absl::StrCat(dir_.path(), "/work/compacted-", compactions_++, ".seg");
    auto info = segment::CompactSegments(options);
    EXPECT_TRUE(info.ok()) << info.status();
    auto uri = deep_->Push(options.path, absl::StrCat("wiki/compacted-", compactions_, ".sluice"));
    EXPECT_TRUE(uri.ok()) << uri.status();
    CompactedSegment out;
    out.local_path = options.path;
    v1::SegmentDescriptor& d = out.descriptor;
    d.set_id(options.segment_id);
    d.set_datasource("wiki");
    *d.mutable_interval() = inputs[0].interval();
    d.set_version(options.version);
    d.set_num_rows(static_cast<int64_t>(info->num_rows));
    d.set_size_bytes(static_cast<int64_t>(info->size_bytes));
    d.set_checksum(info->checksum);
    d.set_path(*uri);
    d.mutable_provenance()->set_topic(info->provenance.topic);
    for (const segment::PartitionRange& r : info->provenance.ranges) {
      v1::PartitionRange* range = d.mutable_provenance()->add_ranges();
      range->set_partition(r.partition);
      range->set_start_offset(r.start_offset);
      range->set_end_offset(r.end_offset);
      range->set_rows(r.rows);
    }
    c.outputs.push_back(std::move(out));
    return c;
  }

  absl::StatusOr<StagedIcebergReplace> Replace(const std::string& base,
                                               const IntervalCompaction& c) {
    IcebergReplaceOptions options;
    options.now_ms = now_ms_++;
    options.count_column = "count";
    return StageIcebergReplace(deep_.get(), Scratch(), target_, base, c, options);
  }

  std::string Read(const std::string& uri) {
    auto bytes = ReadFile(LocalPath(uri));
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    return bytes.ok() ? *bytes : "";
  }

  // The live files of the current snapshot of the document at `location`,
  // read with the table readers, each Parquet file decoded.
  TableContent Content(const std::string& location) {
    TableContent out;
    auto metadata = iceberg::ReadTableMetadata(Read(location));
    EXPECT_TRUE(metadata.ok()) << metadata.status();
    const iceberg::SnapshotInfo* current = metadata->Snapshot(*metadata->current_snapshot_id);
    out.snapshot_id = current->snapshot_id;
    out.operation = current->summary.at("operation");
    auto list = iceberg::ReadManifestList(Read(current->manifest_list));
    EXPECT_TRUE(list.ok()) << list.status();
    for (const iceberg::ManifestListEntry& m : *list) {
      auto entries = iceberg::ReadManifest(Read(m.manifest_path));
      EXPECT_TRUE(entries.ok()) << entries.status();
      for (const iceberg::ManifestEntryInfo& e : *entries) {
        if (e.status == iceberg::ManifestEntryInfo::kDeleted) continue;
        auto info = iceberg::ReadParquetFile(Read(e.file_path), "count");
        EXPECT_TRUE(info.ok()) << info.status();
        EXPECT_EQ(info->rows, e.record_count);
        ++out.files;
        out.rows += info->rows;
        out.count_sum += info->sum.value_or(0);
        out.paths.insert(e.file_path);
      }
    }
    return out;
  }

  // The DELETED entries of the current snapshot's manifests: path -> the
  // snapshot id that deleted it.
  std::map<std::string, int64_t> Deleted(const std::string& location) {
    std::map<std::string, int64_t> out;
    auto metadata = iceberg::ReadTableMetadata(Read(location));
    const iceberg::SnapshotInfo* current = metadata->Snapshot(*metadata->current_snapshot_id);
    auto list = iceberg::ReadManifestList(Read(current->manifest_list));
    for (const iceberg::ManifestListEntry& m : *list) {
      auto entries = iceberg::ReadManifest(Read(m.manifest_path));
      for (const iceberg::ManifestEntryInfo& e : *entries) {
        if (e.status == iceberg::ManifestEntryInfo::kDeleted) {
          out[e.file_path] = e.snapshot_id.value_or(m.added_snapshot_id);
        }
      }
    }
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<DeepStorage> deep_;
  IcebergTarget target_;
  int64_t now_ms_ = 1764468000000;
  int compactions_ = 0;
};

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
