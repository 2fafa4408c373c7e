#include "iceberg/table_metadata.h"

#include <simdjson.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iceberg/manifest_writer.h"
#include "iceberg/parquet_file_writer.h"

namespace sluice {
namespace iceberg {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kT0 = 1709211600000000;  // 2024-02-29T13:00:00Z

NewTableOptions Options() {
  NewTableOptions options;
  options.table_uuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1";
  options.location = "file:///tmp/wiki";
  options.last_updated_ms = 1709211600000;
  options.fields = {{"__time", FieldType::kTimestamptz, true},
                    {"page", FieldType::kString},
                    {"added", FieldType::kLong}};
  options.time_column = "__time";
  options.partitioning = TimePartitioning::kHour;
  options.properties = {{"sluice.datasource", "wiki"}};
  return options;
}

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& json) {
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  return doc;
}

// Writes one data file, its manifest and the manifest list, then appends
// the snapshot: what the publish path does per commit.
absl::StatusOr<std::string> Append(const std::string& metadata, const std::vector<FieldSpec>& fields,
                                   std::vector<Column> columns, uint64_t rows, int64_t snapshot_id,
                                   std::optional<std::string> parent_list_bytes,
                                   std::string* list_bytes_out = nullptr) {
  absl::StatusOr<AppendPlan> plan = PlanAppend(metadata, fields);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<WrittenDataFile> data = WriteParquetDataFile(*plan, columns, rows);
  if (!data.ok()) return data.status();
  const std::string prefix = absl::StrCat(plan->location, "/metadata/snap-", snapshot_id);
  absl::StatusOr<WrittenManifest> manifest = WriteManifest(
      *plan, snapshot_id, prefix + "-m0.avro",
      {ManifestEntry{absl::StrCat(plan->location, "/data/", snapshot_id, ".parquet"), data->file}});
  if (!manifest.ok()) return manifest.status();
  std::optional<absl::string_view> parent;
  if (parent_list_bytes.has_value()) parent = *parent_list_bytes;
  absl::StatusOr<std::string> list =
      WriteManifestList(*plan, snapshot_id, prefix + ".avro", parent, {manifest->file});
  if (!list.ok()) return list.status();
  if (list_bytes_out != nullptr) *list_bytes_out = *list;
  SnapshotCommit commit;
  commit.snapshot_id = snapshot_id;
  commit.timestamp_ms = 1709211600000 + snapshot_id;
  commit.manifest_list = prefix + ".avro";
  commit.AddDataFile(data->file);
  commit.summary = {{"sluice.kafka.offsets", "wiki/0:0-3"}};
  commit.previous_metadata_location = plan->location + "/metadata/previous.metadata.json";
  return AppendSnapshot(metadata, *plan, commit);
}

TEST(TableMetadataTest, NewTable) {
  absl::StatusOr<std::string> metadata = NewTableMetadata(Options());
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, *metadata);
  EXPECT_EQ(int64_t(doc["format-version"]), 2);
  EXPECT_EQ(std::string_view(doc["table-uuid"]), "9c12d441-03fe-4693-9a96-a0705ddf69c1");
  EXPECT_EQ(int64_t(doc["last-column-id"]), 3);
  EXPECT_EQ(int64_t(doc["last-partition-id"]), 1000);
  EXPECT_EQ(std::string_view(doc["partition-specs"].at(0)["fields"].at(0)["transform"]), "hour");
  EXPECT_EQ(std::string_view(doc["partition-specs"].at(0)["fields"].at(0)["name"]),
            "__time_hour");
  EXPECT_EQ(std::string_view(doc["properties"]["sluice.datasource"]), "wiki");
  EXPECT_EQ(simdjson::dom::array(doc["snapshots"]).size(), 0u);
  EXPECT_EQ(int64_t(doc["current-snapshot-id"]), -1);
  absl::StatusOr<AppendPlan> plan = PlanAppend(*metadata, Options().fields);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->parent_snapshot_id.has_value());
  EXPECT_FALSE(plan->parent_manifest_list.has_value());
  EXPECT_EQ(plan->sequence_number, 1);
  EXPECT_FALSE(plan->schema_changed);
  // Deterministic: the same options give the same document.
  EXPECT_EQ(*metadata, *NewTableMetadata(Options()));
}

TEST(TableMetadataTest, NewTableErrors) {
  NewTableOptions bad_uuid = Options();
  bad_uuid.table_uuid = "not-a-uuid";
  EXPECT_THAT(NewTableMetadata(bad_uuid).status().message(), HasSubstr("not a lowercase"));
  NewTableOptions no_time = Options();
  no_time.time_column = "ts";
  EXPECT_THAT(NewTableMetadata(no_time).status().message(),
              HasSubstr("time column \"ts\" is not among the fields"));
  NewTableOptions too_many = Options();
  for (int i = 0; i < 1000; ++i) too_many.fields.push_back({absl::StrCat("d", i)});
  absl::Status status = NewTableMetadata(too_many).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("1003 fields, more than the limit of 1000"));
  NewTableOptions long_name = Options();
  long_name.fields.push_back({std::string(256, 'n')});
  EXPECT_THAT(NewTableMetadata(long_name).status().message(),
              HasSubstr("256 bytes, more than the limit of 255"));
}

TEST(TableMetadataTest, TwoAppendsAndSchemaEvolution) {
  const NewTableOptions options = Options();
  std::string metadata = *NewTableMetadata(options);

  std::string list1;
  absl::StatusOr<std::string> first =
      Append(metadata, options.fields,
             {Int64Column("__time", {kT0, kT0 + 1}), Int64Column("added", {1, 2})}, 2, 101,
             std::nullopt, &list1);
  ASSERT_TRUE(first.ok()) << first.status();

  // The second append brings a new dimension: a new field id and schema.
  std::vector<FieldSpec> fields = options.fields;
  fields.push_back({"country", FieldType::kString});
  absl::StatusOr<AppendPlan> plan = PlanAppend(*first, fields);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->schema_changed);
  EXPECT_EQ(plan->schema.schema_id, 1);
  EXPECT_EQ(plan->schema.FindByName("country")->id, 4);
  EXPECT_EQ(plan->schema.FindByName("page")->id, 2);
  EXPECT_EQ(plan->sequence_number, 2);
  EXPECT_EQ(plan->parent_snapshot_id, 101);
  EXPECT_EQ(plan->parent_manifest_list, "file:///tmp/wiki/metadata/snap-101.avro");

  const std::vector<std::optional<std::string>> countries = {std::string("PL")};
  absl::StatusOr<std::string> second =
      Append(*first, fields, {Int64Column("__time", {kT0 + 3600000000}), StringColumn("country", countries)},
             1, 102, list1);
  ASSERT_TRUE(second.ok()) << second.status();

  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, *second);
  EXPECT_EQ(int64_t(doc["current-snapshot-id"]), 102);
  EXPECT_EQ(int64_t(doc["current-schema-id"]), 1);
  EXPECT_EQ(int64_t(doc["last-column-id"]), 4);
  EXPECT_EQ(int64_t(doc["last-sequence-number"]), 2);
  EXPECT_EQ(simdjson::dom::array(doc["schemas"]).size(), 2u);
  EXPECT_EQ(simdjson::dom::array(doc["snapshots"]).size(), 2u);
  EXPECT_EQ(simdjson::dom::array(doc["snapshot-log"]).size(), 2u);
  EXPECT_EQ(simdjson::dom::array(doc["metadata-log"]).size(), 2u);
  EXPECT_EQ(int64_t(doc["refs"]["main"]["snapshot-id"]), 102);
  simdjson::dom::element snapshot = doc["snapshots"].at(1);
  EXPECT_EQ(int64_t(snapshot["parent-snapshot-id"]), 101);
  EXPECT_EQ(int64_t(snapshot["sequence-number"]), 2);
  EXPECT_EQ(std::string_view(snapshot["summary"]["operation"]), "append");
  EXPECT_EQ(std::string_view(snapshot["summary"]["total-records"]), "3");
  EXPECT_EQ(std::string_view(snapshot["summary"]["added-records"]), "1");
  EXPECT_EQ(std::string_view(snapshot["summary"]["sluice.kafka.offsets"]), "wiki/0:0-3");

  // Same inputs, same bytes (metadata, and through it every file).
  EXPECT_EQ(*first, *Append(metadata, options.fields,
                            {Int64Column("__time", {kT0, kT0 + 1}), Int64Column("added", {1, 2})},
                            2, 101, std::nullopt));
}

TEST(TableMetadataTest, TypeChangeIsRefused) {
  const std::string metadata = *NewTableMetadata(Options());
  absl::Status status = PlanAppend(metadata, {{"page", FieldType::kLong}}).status();
  EXPECT_THAT(status.message(), HasSubstr("\"page\" is string in the table and long in the request"));
  status = PlanAppend(metadata, {{"new_required", FieldType::kString, true}}).status();
  EXPECT_THAT(status.message(), HasSubstr("new field \"new_required\" must be optional"));
}

TEST(TableMetadataTest, StalePlanIsAConflict) {
  const NewTableOptions options = Options();
  const std::string metadata = *NewTableMetadata(options);
  absl::StatusOr<AppendPlan> stale = PlanAppend(metadata, options.fields);
  ASSERT_TRUE(stale.ok());
  absl::StatusOr<std::string> moved_on =
      Append(metadata, options.fields, {Int64Column("__time", {kT0})}, 1, 7, std::nullopt);
  ASSERT_TRUE(moved_on.ok()) << moved_on.status();
  SnapshotCommit commit;
  commit.snapshot_id = 8;
  commit.manifest_list = "file:///tmp/wiki/metadata/snap-8.avro";
  absl::Status status = AppendSnapshot(*moved_on, *stale, commit).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(status.message(), HasSubstr("plan again"));
}

// Metadata another writer made (fields and a snapshot this library does not
// write, a property, an extra ref): an append keeps all of it.
TEST(TableMetadataTest, AppendKeepsAnotherWritersSnapshot) {
  const std::string theirs = R"({
    "format-version": 2,
    "table-uuid": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    "location": "s3://bucket/wiki",
    "last-sequence-number": 5,
    "last-updated-ms": 1700000000000,
    "last-column-id": 2,
    "current-schema-id": 0,
    "schemas": [{"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "__time", "required": true, "type": "timestamptz"},
      {"id": 2, "name": "page", "required": false, "type": "string"}]}],
    "default-spec-id": 0,
    "partition-specs": [{"spec-id": 0, "fields": [
      {"source-id": 1, "field-id": 1000, "name": "__time_day", "transform": "day"}]}],
    "last-partition-id": 1000,
    "default-sort-order-id": 0,
    "sort-orders": [{"order-id": 0, "fields": []}],
    "properties": {"owner": "spark"},
    "current-snapshot-id": 4242,
    "snapshots": [{"snapshot-id": 4242, "sequence-number": 5, "timestamp-ms": 1700000000000,
      "manifest-list": "s3://bucket/wiki/metadata/snap-4242.avro",
      "summary": {"operation": "append", "spark.app.id": "app-1", "total-records": "10",
                  "total-data-files": "1", "total-files-size": "100", "total-delete-files": "0",
                  "total-position-deletes": "0", "total-equality-deletes": "0"},
      "schema-id": 0}],
    "snapshot-log": [{"timestamp-ms": 1700000000000, "snapshot-id": 4242}],
    "metadata-log": [],
    "refs": {"main": {"snapshot-id": 4242, "type": "branch"},
             "audit": {"snapshot-id": 4242, "type": "tag"}},
    "statistics": []
  })";
  absl::StatusOr<AppendPlan> plan =
      PlanAppend(theirs, {{"__time", FieldType::kTimestamptz, true}, {"page", FieldType::kString}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->schema_changed);
  EXPECT_EQ(plan->sequence_number, 6);
  EXPECT_EQ(plan->parent_snapshot_id, 4242);
  EXPECT_EQ(plan->parent_manifest_list, "s3://bucket/wiki/metadata/snap-4242.avro");

  SnapshotCommit commit;
  commit.snapshot_id = 5000;
  commit.timestamp_ms = 1700000001000;
  commit.manifest_list = "s3://bucket/wiki/metadata/snap-5000.avro";
  commit.added_data_files = 1;
  commit.added_records = 3;
  commit.added_files_size = 50;
  absl::StatusOr<std::string> ours = AppendSnapshot(theirs, *plan, commit);
  ASSERT_TRUE(ours.ok()) << ours.status();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, *ours);
  simdjson::dom::array snapshots = doc["snapshots"];
  ASSERT_EQ(snapshots.size(), 2u);
  EXPECT_EQ(int64_t(snapshots.at(0)["snapshot-id"]), 4242);
  EXPECT_EQ(std::string_view(snapshots.at(0)["summary"]["spark.app.id"]), "app-1");
  EXPECT_EQ(int64_t(snapshots.at(1)["parent-snapshot-id"]), 4242);
  EXPECT_EQ(std::string_view(snapshots.at(1)["summary"]["total-records"]), "13");
  EXPECT_EQ(std::string_view(doc["properties"]["owner"]), "spark");
  EXPECT_EQ(int64_t(doc["refs"]["audit"]["snapshot-id"]), 4242);
  EXPECT_EQ(int64_t(doc["refs"]["main"]["snapshot-id"]), 5000);
  EXPECT_EQ(int64_t(doc["last-sequence-number"]), 6);
  EXPECT_TRUE(doc["statistics"].is_array());

  commit.summary = {{"operation", "overwrite"}};
  EXPECT_THAT(AppendSnapshot(theirs, *plan, commit).status().message(),
              HasSubstr("summary key \"operation\" is set by the library"));
}

}  // namespace
}  // namespace iceberg
}  // namespace sluice
