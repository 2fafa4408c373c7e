// (tests) A datasource's Iceberg table built by the real paths in a local
// deep storage: segments of hour 0 built from test rows and pushed,
// appended one sequence at a time with StageIcebergCommit, compacted with
// segment::CompactSegments and replaced with StageIcebergReplace; and what
// a snapshot's live files hold, read back with iceberg/table_reader.
#ifndef SLUICE_SUPERVISOR_COMPACTION_ICEBERG_TEST_TABLE_H_
#define SLUICE_SUPERVISOR_COMPACTION_ICEBERG_TEST_TABLE_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/open_deep_storage.h"
#include "common/segment/compaction.h"
#include "iceberg/table_reader.h"
#include "supervisor/compaction/iceberg_replace.h"
#include "supervisor/testing/segment_files.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor::testing {

inline constexpr char kHourStart[] = "2026-11-30T02:00:00.000Z_2026-11-30T03:00:00.000Z";

inline std::string LocalPath(const std::string& uri) {
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

class IcebergTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto deep = OpenDeepStorage("file://" + dir_.path() + "/deep");
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = std::move(*deep);
    ASSERT_TRUE(MakeDirs(dir_.path() + "/work").ok());
    v1::SupervisorSpec spec = TestSpec("wiki");
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
    allocated.mutable_interval()->set_start_ms(SegmentHourStartMs());
    allocated.mutable_interval()->set_end_ms(SegmentHourStartMs() + 3600000);
    auto pushed = PushSegment(deep_.get(), dir_.path() + "/work",
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
                                               const IntervalCompaction& c,
                                               IcebergReplaceReuse* reuse = nullptr) {
    IcebergReplaceOptions options;
    options.now_ms = now_ms_++;
    options.count_column = "count";
    return StageIcebergReplace(deep_.get(), Scratch(), target_, base, c, options, reuse);
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

  TempDir dir_;
  std::unique_ptr<DeepStorage> deep_;
  IcebergTarget target_;
  int64_t now_ms_ = 1764468000000;
  int compactions_ = 0;
};

}  // namespace sluice::supervisor::testing

#endif  // SLUICE_SUPERVISOR_COMPACTION_ICEBERG_TEST_TABLE_H_
