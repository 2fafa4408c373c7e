// Writes a small Iceberg table with //iceberg into a directory and registers
// it in a SQLite file laid out like the Iceberg SQL catalog (pyiceberg's
// SqlCatalog, Java's JdbcCatalog), for the iceberg tier's reader checks
// (check_table.py):
//   write_test_table create DIR   the table DIR/wiki (catalog "sluice",
//       namespace "default", table "wiki") with two snapshots: two data
//       files in two day partitions, then a third file after a schema
//       evolution (a new column "country")
//   write_test_table append DIR   one more snapshot on top of whatever the
//       catalog points at (another writer's snapshot included), swapped in
//       with the catalog's compare-and-swap on metadata_location
//   write_test_table replace DIR  a compaction of day 2024-03-01: stages a
//       replace snapshot (1006) of its two files (1001-1, 1002-0) by one
//       file of the same four rows on the current metadata, then, before
//       the swap, another writer's append (1005, day 2024-03-05) wins the
//       race; the replace's swap misses, it is staged again on the append
//       and swapped in
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "iceberg/manifest_writer.h"
#include "iceberg/parquet_file_writer.h"
#include "iceberg/replace_snapshot.h"
#include "iceberg/table_metadata.h"

namespace sluice {
namespace iceberg {
namespace {

constexpr int64_t kHour = 3600000000;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kFeb29 = 1709164800000000;  // 2024-02-29T00:00:00Z
constexpr char kCatalog[] = "sluice";
constexpr char kNamespace[] = "default";
constexpr char kTable[] = "wiki";

std::string LocalPath(const std::string& uri) {
  return absl::StartsWith(uri, "file://") ? uri.substr(7) : uri;
}

absl::Status WriteFile(const std::string& uri, const std::string& bytes) {
  const std::filesystem::path path(LocalPath(uri));
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& uri) {
  std::ifstream in(LocalPath(uri), std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", uri));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Catalog {
 public:
  ~Catalog() {
    if (db_ != nullptr) sqlite3_close(db_);
  }
  absl::Status Open(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
      return absl::InternalError(absl::StrCat("sqlite3_open ", path));
    }
    return Exec(
        "CREATE TABLE IF NOT EXISTS iceberg_tables (catalog_name VARCHAR(255) NOT NULL, "
        "table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, "
        "metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), "
        "iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name));"
        "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (catalog_name VARCHAR(255) NOT "
        "NULL, namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, "
        "property_value VARCHAR(1000) NOT NULL, PRIMARY KEY (catalog_name, namespace, "
        "property_key));");
  }
  absl::Status Exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      absl::Status status = absl::InternalError(absl::StrCat(sql, ": ", error));
      sqlite3_free(error);
      return status;
    }
    return absl::OkStatus();
  }
  // Binds text parameters ?1.. and runs; returns the rows changed.
  absl::StatusOr<int> Run(const std::string& sql, const std::vector<std::string>& params,
                          std::string* first_column = nullptr) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      return absl::InternalError(absl::StrCat(sql, ": ", sqlite3_errmsg(db_)));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      sqlite3_bind_text(stmt, static_cast<int>(i + 1), params[i].c_str(), -1, SQLITE_TRANSIENT);
    }
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && first_column != nullptr) {
      *first_column = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      rc = SQLITE_DONE;
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) return absl::InternalError(absl::StrCat(sql, ": ", sqlite3_errmsg(db_)));
    return sqlite3_changes(db_);
  }

 private:
  sqlite3* db_ = nullptr;
};

std::string MetadataUri(const AppendPlan& plan, int version) {
  return absl::StrFormat("%s/metadata/%05d-%s.metadata.json", plan.location, version,
                         plan.table_uuid);
}

int MetadataVersion(const std::string& uri) {
  const std::string name = std::filesystem::path(LocalPath(uri)).filename().string();
  return std::atoi(name.substr(0, name.find('-')).c_str());
}

struct DataFileInput {
  std::vector<Column> columns;
  uint64_t rows;
};

// One append: data files, a manifest, the manifest list, the metadata.
absl::StatusOr<std::string> Append(const std::string& metadata, const std::vector<FieldSpec>& fields,
                                   std::vector<DataFileInput> files, int64_t snapshot_id,
                                   const std::optional<std::string>& metadata_uri,
                                   const std::string& kafka_range) {
  SLUICE_ASSIGN_OR_RETURN(AppendPlan plan, PlanAppend(metadata, fields));
  std::vector<ManifestEntry> entries;
  SnapshotCommit commit;
  for (size_t i = 0; i < files.size(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(WrittenDataFile data,
                            WriteParquetDataFile(plan, files[i].columns, files[i].rows));
    const std::string uri = absl::StrFormat("%s/data/day=%d/%d-%d.parquet", plan.location,
                                            *data.file.partition_value, snapshot_id, i);
    SLUICE_RETURN_IF_ERROR(WriteFile(uri, data.bytes));
    commit.AddDataFile(data.file);
    entries.push_back(ManifestEntry{uri, std::move(data.file)});
  }
  const std::string manifest_uri =
      absl::StrFormat("%s/metadata/%d-m0.avro", plan.location, snapshot_id);
  SLUICE_ASSIGN_OR_RETURN(WrittenManifest manifest,
                          WriteManifest(plan, snapshot_id, manifest_uri, entries));
  SLUICE_RETURN_IF_ERROR(WriteFile(manifest_uri, manifest.bytes));
  std::optional<std::string> parent_list;
  if (plan.parent_manifest_list.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(parent_list, ReadFile(*plan.parent_manifest_list));
  }
  const std::string list_uri = absl::StrFormat("%s/metadata/snap-%d.avro", plan.location, snapshot_id);
  std::optional<absl::string_view> parent_view;
  if (parent_list.has_value()) parent_view = *parent_list;
  SLUICE_ASSIGN_OR_RETURN(std::string list, WriteManifestList(plan, snapshot_id, list_uri,
                                                              parent_view, {manifest.file}));
  SLUICE_RETURN_IF_ERROR(WriteFile(list_uri, list));
  commit.snapshot_id = snapshot_id;
  commit.timestamp_ms = 1709300000000 + snapshot_id;
  commit.manifest_list = list_uri;
  commit.summary = {{"sluice.kafka.ranges", kafka_range}};
  commit.previous_metadata_location = metadata_uri;
  SLUICE_ASSIGN_OR_RETURN(std::string next, AppendSnapshot(metadata, plan, commit));
  const std::string next_uri =
      MetadataUri(plan, metadata_uri.has_value() ? MetadataVersion(*metadata_uri) + 1 : 1);
  SLUICE_RETURN_IF_ERROR(WriteFile(next_uri, next));
  return next_uri;
}

std::vector<FieldSpec> FirstFields() {
  return {{"__time", FieldType::kTimestamptz, true},
          {"page", FieldType::kString},
          {"tags", FieldType::kStringList},
          {"added", FieldType::kLong},
          {"ratio", FieldType::kDouble}};
}

std::vector<std::optional<std::string>> Strings(std::vector<std::optional<std::string>> v) {
  return v;
}

absl::Status Create(const std::string& dir) {
  NewTableOptions options;
  options.table_uuid = "5d0e6a2c-3f41-4b7a-9c8e-1a2b3c4d5e6f";
  options.location = absl::StrCat("file://", dir, "/", kTable);
  options.last_updated_ms = 1709300000000;
  options.fields = FirstFields();
  options.time_column = "__time";
  options.partitioning = TimePartitioning::kDay;
  options.properties = {{"sluice.datasource", kTable}};
  SLUICE_ASSIGN_OR_RETURN(std::string metadata, NewTableMetadata(options));
  const std::string v0 = absl::StrFormat("%s/metadata/00000-%s.metadata.json", options.location,
                                         options.table_uuid);
  SLUICE_RETURN_IF_ERROR(WriteFile(v0, metadata));

  // Snapshot 1: 2024-02-29 (3 rows) and 2024-03-01 (2 rows).
  std::vector<DataFileInput> first(2);
  first[0].rows = 3;
  first[0].columns = {
      Int64Column("__time", {kFeb29 + kHour, kFeb29 + 2 * kHour, kFeb29 + 23 * kHour}),
      StringColumn("page", Strings({std::string("Apple"), std::string("Banana"), std::nullopt})),
      StringListColumn("tags", std::vector<std::optional<std::vector<std::string>>>{
                                   std::vector<std::string>{"fruit", "red"}, std::nullopt,
                                   std::vector<std::string>{}}),
      Int64Column("added", {10, 20, 30}),
      DoubleColumn("ratio", {0.5, 1.5, 2.5})};
  first[1].rows = 2;
  first[1].columns = {
      Int64Column("__time", {kFeb29 + kDay + kHour, kFeb29 + kDay + 5 * kHour}),
      StringColumn("page", Strings({std::string("Mango"), std::string("Zucchini")})),
      StringListColumn("tags", std::vector<std::optional<std::vector<std::string>>>{
                                   std::vector<std::string>{"fruit"},
                                   std::vector<std::string>{"vegetable", "green"}}),
      Int64Column("added", {40, 50}),
      DoubleColumn("ratio", {3.5, 4.5})};
  SLUICE_ASSIGN_OR_RETURN(std::string v1, Append(metadata, FirstFields(), std::move(first), 1001,
                                                 v0, "wiki/0:0-5"));
  SLUICE_ASSIGN_OR_RETURN(std::string m1, ReadFile(v1));

  // Snapshot 2: a new dimension "country"; 2024-03-01 (2 rows).
  std::vector<FieldSpec> fields = FirstFields();
  fields.push_back({"country", FieldType::kString});
  std::vector<DataFileInput> second(1);
  second[0].rows = 2;
  second[0].columns = {
      Int64Column("__time", {kFeb29 + kDay + 6 * kHour, kFeb29 + kDay + 7 * kHour}),
      StringColumn("page", Strings({std::string("Kiwi"), std::string("Lime")})),
      StringColumn("country", Strings({std::string("NZ"), std::string("MX")})),
      Int64Column("added", {60, 70})};
  SLUICE_ASSIGN_OR_RETURN(std::string v2,
                          Append(m1, fields, std::move(second), 1002, v1, "wiki/0:5-7"));

  Catalog catalog;
  SLUICE_RETURN_IF_ERROR(catalog.Open(dir + "/catalog.db"));
  SLUICE_RETURN_IF_ERROR(catalog
                             .Run("INSERT INTO iceberg_namespace_properties VALUES (?1, ?2, "
                                  "'exists', 'true')",
                                  {kCatalog, kNamespace})
                             .status());
  SLUICE_RETURN_IF_ERROR(catalog
                             .Run("INSERT INTO iceberg_tables VALUES (?1, ?2, ?3, ?4, ?5, 'TABLE')",
                                  {kCatalog, kNamespace, kTable, v2, v1})
                             .status());
  std::cout << v2 << "\n";
  return absl::OkStatus();
}

absl::StatusOr<std::string> CurrentLocation(Catalog& catalog) {
  std::string current;
  SLUICE_RETURN_IF_ERROR(catalog
                             .Run("SELECT metadata_location FROM iceberg_tables WHERE "
                                  "catalog_name = ?1 AND table_namespace = ?2 AND table_name = ?3",
                                  {kCatalog, kNamespace, kTable}, &current)
                             .status());
  if (current.empty()) return absl::NotFoundError("the catalog has no table wiki");
  return current;
}

// The catalog's compare-and-swap: false when another writer moved the table.
absl::StatusOr<bool> Swap(Catalog& catalog, const std::string& current, const std::string& next) {
  SLUICE_ASSIGN_OR_RETURN(
      int changed,
      catalog.Run("UPDATE iceberg_tables SET metadata_location = ?1, previous_metadata_location = "
                  "?2 WHERE catalog_name = ?3 AND table_namespace = ?4 AND table_name = ?5 AND "
                  "metadata_location = ?2",
                  {next, current, kCatalog, kNamespace, kTable}));
  return changed == 1;
}

// Stages the compaction of day 2024-03-01 on `current` (attempt `attempt`:
// its manifests and list get their own names) and returns the next
// metadata document's location.
absl::StatusOr<std::string> StageCompaction(const std::string& current, int attempt,
                                            const std::string& compacted_uri,
                                            const DataFile& compacted) {
  SLUICE_ASSIGN_OR_RETURN(std::string metadata, ReadFile(current));
  SLUICE_ASSIGN_OR_RETURN(AppendPlan plan, PlanAppend(metadata, {}));
  const int64_t snapshot_id = 1006;
  ReplaceFiles r;
  r.snapshot_id = snapshot_id;
  r.timestamp_ms = 1709300000000 + snapshot_id;
  r.remove = {absl::StrCat(plan.location, "/data/day=19783/1001-1.parquet"),
              absl::StrCat(plan.location, "/data/day=19783/1002-0.parquet")};
  r.add = {ManifestEntry{compacted_uri, compacted}};
  r.manifest_path = absl::StrFormat("%s/metadata/%d-a%d-m0.avro", plan.location, snapshot_id, attempt);
  r.manifest_list_path =
      absl::StrFormat("%s/metadata/snap-%d-a%d.avro", plan.location, snapshot_id, attempt);
  r.rewritten_kafka_ranges[{"wiki", 0}] = {{3, 7}};
  r.previous_metadata_location = current;
  SLUICE_ASSIGN_OR_RETURN(StagedReplace staged, StageReplace(metadata, r, &ReadFile));
  for (const auto& [uri, bytes] : staged.files) SLUICE_RETURN_IF_ERROR(WriteFile(uri, bytes));
  const std::string next = MetadataUri(plan, MetadataVersion(current) + 1);
  SLUICE_RETURN_IF_ERROR(WriteFile(next, staged.metadata_json));
  std::cerr << "staged replace attempt " << attempt << " on " << current << ": removes "
            << staged.removed_files << " files (" << staged.removed_records << " records), "
            << staged.rewritten_manifests << " manifests rewritten, " << staged.carried_manifests
            << " carried\n";
  return next;
}

absl::Status ReplaceWithARace(const std::string& dir) {
  Catalog catalog;
  SLUICE_RETURN_IF_ERROR(catalog.Open(dir + "/catalog.db"));
  SLUICE_ASSIGN_OR_RETURN(const std::string base, CurrentLocation(catalog));
  SLUICE_ASSIGN_OR_RETURN(std::string base_metadata, ReadFile(base));
  SLUICE_ASSIGN_OR_RETURN(AppendPlan plan, PlanAppend(base_metadata, {}));
  // The compacted file: the rows of 1001-1 and 1002-0 (2024-03-01), in
  // time order, every column the two files had.
  const int64_t d = kFeb29 + kDay;
  SLUICE_ASSIGN_OR_RETURN(
      WrittenDataFile compacted,
      WriteParquetDataFile(
          plan,
          {Int64Column("__time", {d + kHour, d + 5 * kHour, d + 6 * kHour, d + 7 * kHour}),
           StringColumn("page", Strings({std::string("Mango"), std::string("Zucchini"),
                                         std::string("Kiwi"), std::string("Lime")})),
           StringListColumn("tags", std::vector<std::optional<std::vector<std::string>>>{
                                        std::vector<std::string>{"fruit"},
                                        std::vector<std::string>{"vegetable", "green"},
                                        std::nullopt, std::nullopt}),
           Int64Column("added", {40, 50, 60, 70}),
           DoubleColumn("ratio", {3.5, 4.5, 0, 0}, {1, 1, 0, 0}),
           StringColumn("country",
                        Strings({std::nullopt, std::nullopt, std::string("NZ"), std::string("MX")}))},
          4));
  const std::string compacted_uri =
      absl::StrFormat("%s/data/day=%d/1006-compacted.parquet", plan.location,
                      *compacted.file.partition_value);
  SLUICE_RETURN_IF_ERROR(WriteFile(compacted_uri, compacted.bytes));
  SLUICE_ASSIGN_OR_RETURN(std::string staged,
                          StageCompaction(base, 1, compacted_uri, compacted.file));

  // Another writer's append (2024-03-05) commits first.
  std::vector<DataFileInput> files(1);
  files[0].rows = 1;
  files[0].columns = {Int64Column("__time", {kFeb29 + 5 * kDay}),
                      StringColumn("page", Strings({std::string("Quince")})),
                      Int64Column("added", {90})};
  SLUICE_ASSIGN_OR_RETURN(std::string appended,
                          Append(base_metadata, {{"__time", FieldType::kTimestamptz, true},
                                                 {"page", FieldType::kString},
                                                 {"added", FieldType::kLong}},
                                 std::move(files), 1005, base, "wiki/0:10-11"));
  SLUICE_ASSIGN_OR_RETURN(bool swapped, Swap(catalog, base, appended));
  if (!swapped) return absl::AbortedError("the append lost its swap");

  // The replace's swap misses: stage again on the append and swap.
  SLUICE_ASSIGN_OR_RETURN(swapped, Swap(catalog, base, staged));
  if (swapped) return absl::InternalError("the replace swapped in over the append");
  std::cerr << "the replace's swap missed (the append won): staging again\n";
  SLUICE_ASSIGN_OR_RETURN(const std::string current, CurrentLocation(catalog));
  SLUICE_ASSIGN_OR_RETURN(staged, StageCompaction(current, 2, compacted_uri, compacted.file));
  SLUICE_ASSIGN_OR_RETURN(swapped, Swap(catalog, current, staged));
  if (!swapped) return absl::AbortedError("another writer moved the table");
  std::cout << staged << "\n";
  return absl::OkStatus();
}

absl::Status AppendOnTop(const std::string& dir) {
  Catalog catalog;
  SLUICE_RETURN_IF_ERROR(catalog.Open(dir + "/catalog.db"));
  std::string current;
  SLUICE_RETURN_IF_ERROR(catalog
                             .Run("SELECT metadata_location FROM iceberg_tables WHERE "
                                  "catalog_name = ?1 AND table_namespace = ?2 AND table_name = ?3",
                                  {kCatalog, kNamespace, kTable}, &current)
                             .status());
  if (current.empty()) return absl::NotFoundError("the catalog has no table wiki");
  SLUICE_ASSIGN_OR_RETURN(std::string metadata, ReadFile(current));
  std::vector<FieldSpec> fields = {{"__time", FieldType::kTimestamptz, true},
                                   {"page", FieldType::kString},
                                   {"country", FieldType::kString}};
  std::vector<DataFileInput> files(1);
  files[0].rows = 2;
  files[0].columns = {
      Int64Column("__time", {kFeb29 + 4 * kDay, kFeb29 + 4 * kDay + kHour}),
      StringColumn("page", Strings({std::string("Olive"), std::string("Pear")})),
      StringColumn("country", Strings({std::string("GR"), std::nullopt}))};
  SLUICE_ASSIGN_OR_RETURN(std::string next,
                          Append(metadata, fields, std::move(files), 1004, current, "wiki/0:8-10"));
  SLUICE_ASSIGN_OR_RETURN(
      int changed,
      catalog.Run("UPDATE iceberg_tables SET metadata_location = ?1, previous_metadata_location = "
                  "?2 WHERE catalog_name = ?3 AND table_namespace = ?4 AND table_name = ?5 AND "
                  "metadata_location = ?2",
                  {next, current, kCatalog, kNamespace, kTable}));
  if (changed != 1) return absl::AbortedError("another writer moved the table");
  std::cout << next << "\n";
  return absl::OkStatus();
}

}  // namespace
}  // namespace iceberg
}  // namespace sluice

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "create" && mode != "append" && mode != "replace") {
    std::cerr << "usage: write_test_table create|append|replace DIR\n";
    return 2;
  }
  const std::string dir = std::filesystem::absolute(argv[2]).string();
  const absl::Status status = mode == "create"   ? sluice::iceberg::Create(dir)
                              : mode == "append" ? sluice::iceberg::AppendOnTop(dir)
                                                 : sluice::iceberg::ReplaceWithARace(dir);
  if (!status.ok()) {
    std::cerr << "write_test_table: " << status << "\n";
    return 1;
  }
  return 0;
}
