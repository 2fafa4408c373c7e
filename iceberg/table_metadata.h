// Iceberg v2 table metadata JSON: a new table's first document, the plan of
// an append on a current document (schema evolution: a column name the
// table lacks becomes a new optional field with a new id), and the document
// with the appended snapshot (kept: every other writer's snapshots, schemas,
// properties and fields). The caller stores each document (e.g.
// <location>/metadata/NNNNN-<uuid>.metadata.json) and swaps the catalog
// pointer; nothing here does I/O or reads a clock.
#ifndef SLUICE_ICEBERG_TABLE_METADATA_H_
#define SLUICE_ICEBERG_TABLE_METADATA_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "iceberg/append_plan.h"
#include "iceberg/data_file.h"
#include "iceberg/table_schema.h"

namespace sluice {
namespace iceberg {

// The partition transform of the time column: the datasource's
// segmentGranularity.
enum class TimePartitioning { kHour, kDay, kMonth, kYear };
const char* TimePartitioningName(TimePartitioning partitioning);

struct NewTableOptions {
  std::string table_uuid;  // lowercase 8-4-4-4-12 hex
  std::string location;    // e.g. s3://bucket/prefix/datasource
  int64_t last_updated_ms = 0;
  // In order; ids 1.. are assigned in this order (a list's element id
  // follows its field's).
  std::vector<FieldSpec> fields;
  // A required kTimestamptz field of `fields`.
  std::string time_column;
  TimePartitioning partitioning = TimePartitioning::kDay;
  std::map<std::string, std::string> properties;
};

absl::StatusOr<std::string> NewTableMetadata(const NewTableOptions& options);

// The plan of an append carrying `fields` (existing names keep their ids;
// types must match; new names must be optional).
absl::StatusOr<AppendPlan> PlanAppend(absl::string_view metadata_json,
                                      const std::vector<FieldSpec>& fields);

struct SnapshotCommit {
  int64_t snapshot_id = 0;  // non-negative, unique in the table
  int64_t timestamp_ms = 0;
  std::string manifest_list;  // where WriteManifestList's bytes are stored
  int64_t added_data_files = 0;
  int64_t added_records = 0;
  int64_t added_files_size = 0;
  // Extra summary entries (e.g. the Kafka offset ranges the snapshot covers).
  std::map<std::string, std::string> summary;
  // Where `metadata_json` is stored, for the metadata-log.
  std::optional<std::string> previous_metadata_location;

  // Counts `file` into the added_* totals.
  void AddDataFile(const DataFile& file);
};

// `metadata_json` with the snapshot as current. ABORTED when the document
// is not the one the plan was made on (another writer appended): plan again.
absl::StatusOr<std::string> AppendSnapshot(absl::string_view metadata_json, const AppendPlan& plan,
                                           const SnapshotCommit& commit);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_TABLE_METADATA_H_
