#include "iceberg/table_reader.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iceberg/limits.h"
#include "iceberg/manifest_writer.h"
#include "iceberg/parquet_file_writer.h"
#include "iceberg/table_metadata.h"

namespace sluice {
namespace iceberg {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kT0 = 1709211600000000;  // 2024-02-29T13:00:00Z

std::vector<FieldSpec> Fields() {
  return {{"__time", FieldType::kTimestamptz, true},
          {"page", FieldType::kString},
          {"count", FieldType::kLong}};
}

std::string NewTable() {
  NewTableOptions options;
  options.table_uuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1";
  options.location = "file:///tmp/wiki";
  options.fields = Fields();
  options.time_column = "__time";
  options.partitioning = TimePartitioning::kDay;
  return *NewTableMetadata(options);
}

WrittenDataFile Data(const AppendPlan& plan, std::vector<int64_t> counts) {
  std::vector<int64_t> times(counts.size(), kT0);
  std::vector<std::optional<std::string>> pages(counts.size(), std::string("Main"));
  absl::StatusOr<WrittenDataFile> data = WriteParquetDataFile(
      plan,
      {Int64Column("__time", times), StringColumn("page", pages), Int64Column("count", counts)},
      counts.size());
  EXPECT_TRUE(data.ok()) << data.status();
  return *data;
}

TEST(TableReaderTest, ReadsWhatTheWritersWrote) {
  const std::string empty = NewTable();
  absl::StatusOr<AppendPlan> plan = PlanAppend(empty, Fields());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const WrittenDataFile data = Data(*plan, {1, 2, 3});
  absl::StatusOr<WrittenManifest> manifest = WriteManifest(
      *plan, 7, "file:///tmp/wiki/metadata/m.avro", {{"file:///tmp/wiki/data/a.parquet", data.file}});
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  absl::StatusOr<std::string> list = WriteManifestList(
      *plan, 7, "file:///tmp/wiki/metadata/snap-7.avro", std::nullopt, {manifest->file});
  ASSERT_TRUE(list.ok()) << list.status();
  SnapshotCommit commit;
  commit.snapshot_id = 7;
  commit.timestamp_ms = 1709211600123;
  commit.manifest_list = "file:///tmp/wiki/metadata/snap-7.avro";
  commit.AddDataFile(data.file);
  commit.summary = {{"sluice.sequence", "seq-1"}, {"sluice.kafka.wiki.0", "0-3"}};
  commit.previous_metadata_location = "file:///tmp/wiki/metadata/00000-a.metadata.json";
  absl::StatusOr<std::string> metadata = AppendSnapshot(empty, *plan, commit);
  ASSERT_TRUE(metadata.ok()) << metadata.status();

  absl::StatusOr<TableMetadataInfo> info = ReadTableMetadata(*metadata);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->format_version, 2);
  EXPECT_EQ(info->location, "file:///tmp/wiki");
  ASSERT_EQ(info->current_snapshot_id, std::optional<int64_t>(7));
  ASSERT_EQ(info->snapshots.size(), 1u);
  const SnapshotInfo& s = info->snapshots[0];
  EXPECT_EQ(s.parent_snapshot_id, std::nullopt);
  EXPECT_EQ(s.sequence_number, 1);
  EXPECT_EQ(s.timestamp_ms, 1709211600123);
  EXPECT_EQ(s.manifest_list, "file:///tmp/wiki/metadata/snap-7.avro");
  EXPECT_EQ(s.summary.at("sluice.kafka.wiki.0"), "0-3");
  EXPECT_EQ(s.summary.at("added-records"), "3");
  EXPECT_EQ(info->schemas.at(info->current_schema_id).size(), 3u);
  EXPECT_EQ(info->schemas.at(info->current_schema_id)[2].name, "count");
  EXPECT_EQ(info->partition_specs.at(info->default_spec_id)[0].transform, "day");
  EXPECT_THAT(info->metadata_log, ElementsAre("file:///tmp/wiki/metadata/00000-a.metadata.json"));
  absl::StatusOr<std::vector<const SnapshotInfo*>> ancestry = info->CurrentAncestry();
  ASSERT_TRUE(ancestry.ok());
  ASSERT_EQ(ancestry->size(), 1u);

  absl::StatusOr<std::vector<ManifestListEntry>> manifests = ReadManifestList(*list);
  ASSERT_TRUE(manifests.ok()) << manifests.status();
  ASSERT_EQ(manifests->size(), 1u);
  EXPECT_EQ((*manifests)[0].manifest_path, "file:///tmp/wiki/metadata/m.avro");
  EXPECT_EQ((*manifests)[0].manifest_length, static_cast<int64_t>(manifest->bytes.size()));
  EXPECT_EQ((*manifests)[0].added_snapshot_id, 7);
  EXPECT_EQ((*manifests)[0].added_files_count, 1);
  EXPECT_EQ((*manifests)[0].added_rows_count, 3);

  absl::StatusOr<std::vector<ManifestEntryInfo>> entries = ReadManifest(manifest->bytes);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  const ManifestEntryInfo& e = (*entries)[0];
  EXPECT_EQ(e.status, ManifestEntryInfo::kAdded);
  EXPECT_EQ(e.snapshot_id, std::optional<int64_t>(7));
  EXPECT_EQ(e.file_path, "file:///tmp/wiki/data/a.parquet");
  EXPECT_EQ(e.file_format, "PARQUET");
  EXPECT_EQ(e.record_count, 3);
  EXPECT_EQ(e.file_size_in_bytes, static_cast<int64_t>(data.bytes.size()));
  EXPECT_EQ(e.partition.at("__time_day"), "19782");

  absl::StatusOr<ParquetFileInfo> parquet = ReadParquetFile(data.bytes, std::string("count"));
  ASSERT_TRUE(parquet.ok()) << parquet.status();
  EXPECT_EQ(parquet->rows, 3);
  EXPECT_EQ(parquet->row_groups, 1);
  EXPECT_THAT(parquet->columns, ElementsAre("__time", "page", "count"));
  EXPECT_EQ(parquet->sum, std::optional<int64_t>(6));
  parquet = ReadParquetFile(data.bytes, std::nullopt);
  ASSERT_TRUE(parquet.ok()) << parquet.status();
  EXPECT_EQ(parquet->sum, std::nullopt);
}

TEST(TableReaderTest, DamagedOrWrongFilesAreErrorsNotShortCounts) {
  absl::StatusOr<AppendPlan> plan = PlanAppend(NewTable(), Fields());
  ASSERT_TRUE(plan.ok());
  const WrittenDataFile data = Data(*plan, {1, 1});
  // Truncated: no footer.
  absl::Status status = ReadParquetFile(data.bytes.substr(0, data.bytes.size() - 10), std::nullopt).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not a readable Parquet file"));
  // A string column cannot be summed; a missing one is named.
  EXPECT_THAT(ReadParquetFile(data.bytes, std::string("page")).status().message(),
              HasSubstr("not an integer"));
  EXPECT_THAT(ReadParquetFile(data.bytes, std::string("nope")).status().message(),
              HasSubstr("no column \"nope\""));
  EXPECT_FALSE(ReadManifest("not avro").ok());
  EXPECT_FALSE(ReadManifestList(data.bytes).ok());
  EXPECT_EQ(ReadTableMetadata("[1,2").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ReadTableMetadata("{\"snapshots\":[{\"snapshot-id\":1}]}").status().message(),
              HasSubstr("snapshot 1 has no \"manifest-list\""));
  // A cycle of parent ids.
  absl::StatusOr<TableMetadataInfo> cyclic = ReadTableMetadata(
      R"({"current-snapshot-id":1,"snapshots":[
          {"snapshot-id":1,"parent-snapshot-id":2,"manifest-list":"a"},
          {"snapshot-id":2,"parent-snapshot-id":1,"manifest-list":"b"}]})");
  ASSERT_TRUE(cyclic.ok()) << cyclic.status();
  EXPECT_THAT(cyclic->CurrentAncestry().status().message(), HasSubstr("cycle"));
}

TEST(TableReaderTest, LimitsAreEnforced) {
  std::string huge(kMaxMetadataJsonBytes + 1, ' ');
  EXPECT_EQ(ReadTableMetadata(huge).status().code(), absl::StatusCode::kResourceExhausted);
  std::string snapshots = "{\"snapshots\":[";
  for (size_t i = 0; i <= kMaxSnapshots; ++i) {
    absl::StrAppend(&snapshots, i ? "," : "", "{\"snapshot-id\":", i, ",\"manifest-list\":\"x\"}");
  }
  snapshots += "]}";
  absl::Status status = ReadTableMetadata(snapshots).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("100001 snapshots, more than the limit of 100000"));
}

}  // namespace
}  // namespace iceberg
}  // namespace sluice
