#include "iceberg/manifest_writer.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iceberg/parquet_file_writer.h"
#include "iceberg/table_metadata.h"

namespace sluice {
namespace iceberg {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kT0 = 1709211600000000;  // 2024-02-29T13:00:00Z

AppendPlan Plan() {
  NewTableOptions options;
  options.table_uuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1";
  options.location = "file:///tmp/wiki";
  options.fields = {{"__time", FieldType::kTimestamptz, true}, {"page", FieldType::kString}};
  options.time_column = "__time";
  options.partitioning = TimePartitioning::kDay;
  return *PlanAppend(*NewTableMetadata(options), options.fields);
}

ManifestEntry Entry(const AppendPlan& plan, const std::string& path, int64_t time) {
  absl::StatusOr<WrittenDataFile> data =
      WriteParquetDataFile(plan, {Int64Column("__time", {time})}, 1);
  EXPECT_TRUE(data.ok()) << data.status();
  return ManifestEntry{path, data->file};
}

TEST(ManifestWriterTest, ManifestIsDeterministicAndCarriesTheSpecMetadata) {
  const AppendPlan plan = Plan();
  const std::vector<ManifestEntry> entries = {
      Entry(plan, "file:///tmp/wiki/data/a.parquet", kT0),
      Entry(plan, "file:///tmp/wiki/data/b.parquet", kT0 + 86400000000)};
  absl::StatusOr<WrittenManifest> a = WriteManifest(plan, 1, "file:///tmp/wiki/metadata/m.avro", entries);
  absl::StatusOr<WrittenManifest> b = WriteManifest(plan, 1, "file:///tmp/wiki/metadata/m.avro", entries);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->bytes, b->bytes);
  EXPECT_EQ(a->bytes.substr(0, 4), std::string("Obj\x01", 4));
  EXPECT_EQ(a->file.length, static_cast<int64_t>(a->bytes.size()));
  EXPECT_EQ(a->file.added_rows_count, 2);
  // File metadata the spec requires, and field ids in the Avro schema.
  for (const char* key : {"schema", "schema-id", "partition-spec", "partition-spec-id",
                          "format-version", "content", "avro.schema", "\"field-id\":102",
                          "\"field-id\":1000", "a.parquet", "b.parquet"}) {
    EXPECT_THAT(a->bytes, HasSubstr(key));
  }
  // Partition bounds of the manifest: days 19782 and 19783.
  EXPECT_THAT(a->file.json, HasSubstr("\"partition_lower_bound\":\"464d0000\""));
  EXPECT_THAT(a->file.json, HasSubstr("\"partition_upper_bound\":\"474d0000\""));
}

TEST(ManifestWriterTest, ManifestListCarriesTheParentsManifests) {
  AppendPlan first = Plan();
  absl::StatusOr<WrittenManifest> m1 = WriteManifest(
      first, 1, "file:///tmp/wiki/metadata/m1.avro", {Entry(first, "file:///tmp/wiki/data/1.parquet", kT0)});
  ASSERT_TRUE(m1.ok()) << m1.status();
  absl::StatusOr<std::string> list1 =
      WriteManifestList(first, 1, "file:///tmp/wiki/metadata/snap-1.avro", std::nullopt, {m1->file});
  ASSERT_TRUE(list1.ok()) << list1.status();
  EXPECT_THAT(*list1, HasSubstr("m1.avro"));

  AppendPlan second = first;
  second.parent_snapshot_id = 1;
  second.parent_manifest_list = "file:///tmp/wiki/metadata/snap-1.avro";
  second.sequence_number = 2;
  absl::StatusOr<WrittenManifest> m2 = WriteManifest(
      second, 2, "file:///tmp/wiki/metadata/m2.avro", {Entry(second, "file:///tmp/wiki/data/2.parquet", kT0)});
  ASSERT_TRUE(m2.ok());
  absl::StatusOr<std::string> list2 = WriteManifestList(
      second, 2, "file:///tmp/wiki/metadata/snap-2.avro", absl::string_view(*list1), {m2->file});
  ASSERT_TRUE(list2.ok()) << list2.status();
  EXPECT_THAT(*list2, HasSubstr("m1.avro"));
  EXPECT_THAT(*list2, HasSubstr("m2.avro"));
  EXPECT_THAT(*list2, HasSubstr("parent-snapshot-id"));

  // A parent is required when the plan has one, and must be a manifest list.
  EXPECT_THAT(WriteManifestList(second, 2, "x", std::nullopt, {m2->file}).status().message(),
              HasSubstr("pass its bytes"));
  absl::Status status =
      WriteManifestList(second, 2, "x", absl::string_view("not avro"), {m2->file}).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("avro"));
}

TEST(ManifestWriterTest, EmptyOrOversizedManifestIsRefused) {
  const AppendPlan plan = Plan();
  EXPECT_THAT(WriteManifest(plan, 1, "m.avro", {}).status().message(),
              HasSubstr("at least one data file"));
  const std::vector<ManifestEntry> entries(100001, Entry(plan, "file:///tmp/wiki/data/a.parquet", kT0));
  absl::Status status = WriteManifest(plan, 1, "m.avro", entries).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("100001 data files in one manifest, more than the limit of 100000"));
}

TEST(ManifestWriterTest, MetricsOfAnUnknownFieldAreRefused) {
  const AppendPlan plan = Plan();
  ManifestEntry entry = Entry(plan, "file:///tmp/wiki/data/a.parquet", kT0);
  AppendPlan narrower = plan;
  narrower.schema_json =
      R"({"type":"struct","schema-id":0,"fields":[{"id":2,"name":"page","required":false,"type":"string"}]})";
  EXPECT_THAT(WriteManifest(narrower, 1, "m.avro", {entry}).status().message(),
              HasSubstr("metrics for field id 1, which the schema does not have"));
}

}  // namespace
}  // namespace iceberg
}  // namespace sluice
