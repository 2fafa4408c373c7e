// An Iceberg table schema as sluice writes it (the time column, string
// dimensions, multi-value dimensions as list<string>, long and double
// metrics), its Iceberg JSON form, and the JSON quoting the wrappers use to
// build requests for the C library.
#ifndef SLUICE_ICEBERG_TABLE_SCHEMA_H_
#define SLUICE_ICEBERG_TABLE_SCHEMA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace iceberg {

enum class FieldType {
  kTimestamptz,  // microseconds since the epoch, UTC
  kLong,
  kDouble,
  kString,
  kStringList,  // list<string>, elements required
};

// "timestamptz", "long", "double", "string", "list<string>".
const char* FieldTypeName(FieldType type);

// A column a caller wants in the table (ids are assigned by the table).
struct FieldSpec {
  std::string name;
  FieldType type = FieldType::kString;
  bool required = false;
};

struct Field {
  int32_t id = 0;
  std::string name;
  FieldType type = FieldType::kString;
  bool required = false;
  int32_t element_id = 0;  // kStringList only
};

struct TableSchema {
  int32_t schema_id = 0;
  std::vector<Field> fields;

  const Field* FindByName(absl::string_view name) const;
};

// The Iceberg JSON of a schema ({"type":"struct","schema-id":..,"fields":..}).
std::string TableSchemaToJson(const TableSchema& schema);
absl::StatusOr<TableSchema> TableSchemaFromJson(absl::string_view json);

// `text` as a JSON string literal, quotes included.
std::string JsonQuote(absl::string_view text);
// A string-to-string map as a JSON object, keys in order.
std::string StringMapJson(const std::map<std::string, std::string>& map);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_TABLE_SCHEMA_H_
