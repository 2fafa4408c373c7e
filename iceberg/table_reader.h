// Readers of an Iceberg table's files, for audits (tools/audit's table
// audit, the supervisor's orphan sweeper): table metadata JSON, manifest
// lists, manifests and Parquet data files, read by the Rust library
// (ffi/sluice_iceberg.h) from bytes the caller loaded. Files of any writer
// are read (pyiceberg's, Java's), fields by their v2 names.
//
// Bounded (limits.h; the library checks again): 64 MiB of metadata JSON,
// 100000 snapshots, 2000 summary properties per snapshot, 256 MiB per
// manifest or manifest list, 100000 manifests per list and entries per
// manifest, 2 GiB and 50 million rows per Parquet file. Over a limit:
// RESOURCE_EXHAUSTED naming it; a malformed file: INVALID_ARGUMENT (a
// Parquet file that does not decode) or INTERNAL (Avro) with the library's
// message.
#ifndef SLUICE_ICEBERG_TABLE_READER_H_
#define SLUICE_ICEBERG_TABLE_READER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace iceberg {

struct SnapshotInfo {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  std::string manifest_list;
  // Every value as text (Iceberg's summary is a string map).
  std::map<std::string, std::string> summary;
};

struct SchemaFieldInfo {
  int64_t id = 0;
  std::string name;
  std::string type;  // "long", "string", ... or the JSON of a nested type
  bool required = false;
};

struct PartitionFieldInfo {
  int64_t source_id = 0;
  int64_t field_id = 0;
  std::string name;
  std::string transform;
};

struct TableMetadataInfo {
  int64_t format_version = 0;
  std::string table_uuid;
  std::string location;
  std::optional<int64_t> current_snapshot_id;
  int64_t current_schema_id = 0;
  int64_t default_spec_id = 0;
  std::vector<SnapshotInfo> snapshots;  // in the document's order
  std::map<int64_t, std::vector<SchemaFieldInfo>> schemas;            // by schema id
  std::map<int64_t, std::vector<PartitionFieldInfo>> partition_specs;  // by spec id
  std::vector<std::string> metadata_log;  // earlier metadata documents, oldest first

  // The snapshot with this id; nullptr if there is none.
  const SnapshotInfo* Snapshot(int64_t id) const;
  // The current snapshot and its ancestors (parent ids), current first. A
  // parent the document lacks ends the chain (expired snapshots);
  // INVALID_ARGUMENT for a cycle.
  absl::StatusOr<std::vector<const SnapshotInfo*>> CurrentAncestry() const;
};

struct ManifestListEntry {
  std::string manifest_path;
  int64_t manifest_length = 0;
  int64_t partition_spec_id = 0;
  int64_t content = 0;  // 0 data, 1 deletes
  int64_t sequence_number = 0;
  int64_t added_snapshot_id = 0;
  // -1: not recorded.
  int64_t added_files_count = -1;
  int64_t existing_files_count = -1;
  int64_t deleted_files_count = -1;
  int64_t added_rows_count = -1;
  int64_t existing_rows_count = -1;
  int64_t deleted_rows_count = -1;
};

struct ManifestEntryInfo {
  // Iceberg's manifest entry status.
  static constexpr int64_t kExisting = 0;
  static constexpr int64_t kAdded = 1;
  static constexpr int64_t kDeleted = 2;
  int64_t status = 0;
  // nullopt: inherited from the manifest list entry (added_snapshot_id).
  std::optional<int64_t> snapshot_id;
  // The data sequence number; nullopt: inherited from the manifest list
  // entry (sequence_number).
  std::optional<int64_t> sequence_number;
  int64_t content = 0;  // 0 data, 1 position deletes, 2 equality deletes
  std::string file_path;
  std::string file_format;
  // Partition field name -> value as JSON text ("482001", "null").
  std::map<std::string, std::string> partition;
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
};

struct ParquetFileInfo {
  int64_t rows = 0;  // the footer's, equal to the rows decoded
  int64_t row_groups = 0;
  std::vector<std::string> columns;  // top-level, in file order
  // The sum of the requested column's non-null values.
  std::optional<int64_t> sum;
};

absl::StatusOr<TableMetadataInfo> ReadTableMetadata(absl::string_view metadata_json);
absl::StatusOr<std::vector<ManifestListEntry>> ReadManifestList(absl::string_view avro);
absl::StatusOr<std::vector<ManifestEntryInfo>> ReadManifest(absl::string_view avro);
// Decodes every row (a damaged page is an error, not a short count). With
// sum_column, sums that top-level integer column (INVALID_ARGUMENT when the
// file has no such column or it is not an integer).
absl::StatusOr<ParquetFileInfo> ReadParquetFile(absl::string_view bytes,
                                                const std::optional<std::string>& sum_column);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_TABLE_READER_H_
