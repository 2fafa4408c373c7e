#include "iceberg/table_metadata.h"

#include <simdjson.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "iceberg/ffi_call.h"
#include "iceberg/limits.h"

namespace sluice {
namespace iceberg {
namespace {

std::string FieldsJson(const std::vector<FieldSpec>& fields) {
  std::string out = "[";
  for (size_t i = 0; i < fields.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ",", "{\"name\":", JsonQuote(fields[i].name),
                    ",\"type\":", JsonQuote(FieldTypeName(fields[i].type)),
                    ",\"required\":", fields[i].required ? "true" : "false", "}");
  }
  out += "]";
  return out;
}

absl::Status CheckFields(const std::vector<FieldSpec>& fields) {
  if (fields.size() > kMaxFields) {
    return absl::ResourceExhaustedError(absl::StrCat(
        fields.size(), " fields, more than the limit of ", kMaxFields));
  }
  for (const FieldSpec& f : fields) {
    if (f.name.size() > kMaxNameBytes) {
      return absl::ResourceExhaustedError(absl::StrCat("field name \"", f.name.substr(0, 32),
                                                       "...\" is ", f.name.size(),
                                                       " bytes, more than the limit of ",
                                                       kMaxNameBytes));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckProperties(const std::map<std::string, std::string>& props,
                             absl::string_view what) {
  if (props.size() > kMaxProperties) {
    return absl::ResourceExhaustedError(absl::StrCat(props.size(), " ", what,
                                                     ", more than the limit of ", kMaxProperties));
  }
  for (const auto& [k, v] : props) {
    if (k.size() > kMaxPropertyBytes || v.size() > kMaxPropertyBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(what, " \"", k.substr(0, 64),
                                                       "\" is longer than the limit of ",
                                                       kMaxPropertyBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

const char* TimePartitioningName(TimePartitioning partitioning) {
  switch (partitioning) {
    case TimePartitioning::kHour:
      return "hour";
    case TimePartitioning::kDay:
      return "day";
    case TimePartitioning::kMonth:
      return "month";
    case TimePartitioning::kYear:
      return "year";
  }
  return "unknown";
}

absl::StatusOr<std::string> NewTableMetadata(const NewTableOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckFields(options.fields));
  SLUICE_RETURN_IF_ERROR(CheckProperties(options.properties, "table property"));
  const std::string request = absl::StrCat(
      "{\"table_uuid\":", JsonQuote(options.table_uuid),
      ",\"location\":", JsonQuote(options.location),
      ",\"last_updated_ms\":", options.last_updated_ms,
      ",\"fields\":", FieldsJson(options.fields),
      ",\"time_column\":", JsonQuote(options.time_column),
      ",\"partition_transform\":", JsonQuote(TimePartitioningName(options.partitioning)),
      ",\"properties\":", StringMapJson(options.properties), "}");
  FfiBytes out, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_new_table_metadata(request.c_str(), out.out(), error.out()), error,
      "new Iceberg table metadata"));
  return out.str();
}

absl::StatusOr<AppendPlan> PlanAppend(absl::string_view metadata_json,
                                      const std::vector<FieldSpec>& fields) {
  SLUICE_RETURN_IF_ERROR(CheckFields(fields));
  const std::string metadata(metadata_json);
  const std::string request = absl::StrCat("{\"fields\":", FieldsJson(fields), "}");
  FfiBytes out, error;
  SLUICE_RETURN_IF_ERROR(
      FfiStatus(sluice_iceberg_plan_append(metadata.c_str(), request.c_str(), out.out(),
                                           error.out()),
                error, "planning an Iceberg append"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::padded_string padded(out.view().data(), out.view().size());
  if (auto err = parser.parse(padded).get(doc)) {
    return absl::InternalError(absl::StrCat("append plan: ", simdjson::error_message(err)));
  }
  AppendPlan plan;
  plan.schema_json = simdjson::minify(doc["schema"]);
  SLUICE_ASSIGN_OR_RETURN(plan.schema, TableSchemaFromJson(plan.schema_json));
  plan.partition_spec_json = simdjson::minify(doc["partition_spec"]);
  bool changed = false;
  int64_t sequence = 0;
  std::string_view location, uuid;
  if (doc["schema_changed"].get(changed) || doc["sequence_number"].get(sequence) ||
      doc["location"].get(location) || doc["table_uuid"].get(uuid)) {
    return absl::InternalError("append plan lacks a field");
  }
  plan.schema_changed = changed;
  plan.sequence_number = sequence;
  plan.location = std::string(location);
  plan.table_uuid = std::string(uuid);
  int64_t parent = 0;
  if (doc["parent_snapshot_id"].get(parent) == simdjson::SUCCESS) plan.parent_snapshot_id = parent;
  std::string_view parent_list;
  if (doc["parent_manifest_list"].get(parent_list) == simdjson::SUCCESS) {
    plan.parent_manifest_list = std::string(parent_list);
  }
  return plan;
}

void SnapshotCommit::AddDataFile(const DataFile& file) {
  added_data_files += 1;
  added_records += file.record_count;
  added_files_size += file.file_size_in_bytes;
}

absl::StatusOr<std::string> AppendSnapshot(absl::string_view metadata_json, const AppendPlan& plan,
                                           const SnapshotCommit& commit) {
  SLUICE_RETURN_IF_ERROR(CheckProperties(commit.summary, "summary property"));
  std::string request = absl::StrCat(
      "{\"schema\":", plan.schema_json, ",\"snapshot_id\":", commit.snapshot_id,
      ",\"sequence_number\":", plan.sequence_number, ",\"timestamp_ms\":", commit.timestamp_ms,
      ",\"manifest_list\":", JsonQuote(commit.manifest_list),
      ",\"added_data_files\":", commit.added_data_files,
      ",\"added_records\":", commit.added_records,
      ",\"added_files_size\":", commit.added_files_size,
      ",\"summary\":", StringMapJson(commit.summary));
  if (commit.previous_metadata_location.has_value()) {
    absl::StrAppend(&request, ",\"previous_metadata_location\":",
                    JsonQuote(*commit.previous_metadata_location));
  }
  request += "}";
  const std::string metadata(metadata_json);
  FfiBytes out, error;
  SLUICE_RETURN_IF_ERROR(
      FfiStatus(sluice_iceberg_append_snapshot(metadata.c_str(), request.c_str(), out.out(),
                                               error.out()),
                error, "appending an Iceberg snapshot"));
  return out.str();
}

}  // namespace iceberg
}  // namespace sluice
