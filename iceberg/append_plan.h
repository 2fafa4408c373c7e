// What an append to an Iceberg table is written against: the table's
// schema with field ids (evolved when the append brings new columns), its
// partition spec, the snapshot the append builds on and the sequence number
// it will get. PlanAppend (table_metadata.h) makes it from the current
// metadata; the data file, manifest and manifest list writers and
// AppendSnapshot all take it.
#ifndef SLUICE_ICEBERG_APPEND_PLAN_H_
#define SLUICE_ICEBERG_APPEND_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>

#include "iceberg/table_schema.h"

namespace sluice {
namespace iceberg {

struct AppendPlan {
  TableSchema schema;
  // schema as the library wrote it (Iceberg JSON).
  std::string schema_json;
  // The schema gains fields (a new schema id) with this append.
  bool schema_changed = false;
  // The table's default partition spec (Iceberg JSON).
  std::string partition_spec_json;
  // The current snapshot and its manifest list; none for an empty table.
  std::optional<int64_t> parent_snapshot_id;
  std::optional<std::string> parent_manifest_list;
  int64_t sequence_number = 0;
  std::string location;
  std::string table_uuid;
};

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_APPEND_PLAN_H_
