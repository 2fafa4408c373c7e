#include "iceberg/table_schema.h"

#include <simdjson.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice {
namespace iceberg {

const char* FieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::kTimestamptz:
      return "timestamptz";
    case FieldType::kLong:
      return "long";
    case FieldType::kDouble:
      return "double";
    case FieldType::kString:
      return "string";
    case FieldType::kStringList:
      return "list<string>";
  }
  return "unknown";
}

const Field* TableSchema::FindByName(absl::string_view name) const {
  for (const Field& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string StringMapJson(const std::map<std::string, std::string>& map) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : map) {
    absl::StrAppend(&out, first ? "" : ",", JsonQuote(k), ":", JsonQuote(v));
    first = false;
  }
  out += "}";
  return out;
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string TableSchemaToJson(const TableSchema& schema) {
  std::string out = absl::StrCat("{\"type\":\"struct\",\"schema-id\":", schema.schema_id,
                                 ",\"fields\":[");
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const Field& f = schema.fields[i];
    std::string type = f.type == FieldType::kStringList
                           ? absl::StrCat("{\"type\":\"list\",\"element-id\":", f.element_id,
                                          ",\"element\":\"string\",\"element-required\":true}")
                           : JsonQuote(FieldTypeName(f.type));
    absl::StrAppend(&out, i == 0 ? "" : ",", "{\"id\":", f.id, ",\"name\":", JsonQuote(f.name),
                    ",\"required\":", f.required ? "true" : "false", ",\"type\":", type, "}");
  }
  out += "]}";
  return out;
}

absl::StatusOr<TableSchema> TableSchemaFromJson(absl::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::padded_string padded(json.data(), json.size());
  if (auto err = parser.parse(padded).get(doc)) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema JSON: ", simdjson::error_message(err)));
  }
  TableSchema schema;
  int64_t schema_id = 0;
  if (doc["schema-id"].get(schema_id) == simdjson::SUCCESS) {
    schema.schema_id = static_cast<int32_t>(schema_id);
  }
  simdjson::dom::array fields;
  if (doc["fields"].get(fields)) {
    return absl::InvalidArgumentError("schema JSON has no \"fields\" array");
  }
  for (simdjson::dom::element f : fields) {
    Field field;
    int64_t id = 0;
    std::string_view name;
    if (f["id"].get(id) || f["name"].get(name)) {
      return absl::InvalidArgumentError("schema field without id or name");
    }
    field.id = static_cast<int32_t>(id);
    field.name = std::string(name);
    bool required = false;
    if (f["required"].get(required) == simdjson::SUCCESS) field.required = required;
    simdjson::dom::element type = f["type"];
    std::string_view type_name;
    if (type.get(type_name) == simdjson::SUCCESS) {
      if (type_name == "timestamptz") {
        field.type = FieldType::kTimestamptz;
      } else if (type_name == "long") {
        field.type = FieldType::kLong;
      } else if (type_name == "double") {
        field.type = FieldType::kDouble;
      } else if (type_name == "string") {
        field.type = FieldType::kString;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("field \"", field.name, "\" has unsupported type ", std::string(type_name)));
      }
    } else {
      int64_t element_id = 0;
      if (type["element-id"].get(element_id)) {
        return absl::InvalidArgumentError(
            absl::StrCat("field \"", field.name, "\" has an unsupported nested type"));
      }
      field.type = FieldType::kStringList;
      field.element_id = static_cast<int32_t>(element_id);
    }
    schema.fields.push_back(std::move(field));
  }
  return schema;
}

}  // namespace iceberg
}  // namespace sluice
