#include "iceberg/table_reader.h"

#include <simdjson.h>

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "iceberg/ffi_call.h"
#include "iceberg/limits.h"
#include "iceberg/table_schema.h"

namespace sluice {
namespace iceberg {
namespace {

const uint8_t* Data(absl::string_view bytes) {
  static const uint8_t kEmpty = 0;
  return bytes.empty() ? &kEmpty : reinterpret_cast<const uint8_t*>(bytes.data());
}

absl::Status TooBig(absl::string_view what, size_t size, size_t limit) {
  return absl::ResourceExhaustedError(
      absl::StrCat(what, " of ", size, " bytes, more than the limit of ", limit));
}

// Parses the library's answer (its own JSON: a parse error is INTERNAL).
absl::Status Parse(simdjson::dom::parser& parser, const FfiBytes& out, absl::string_view what,
                   simdjson::dom::element* doc) {
  if (parser.parse(out.view().data(), out.view().size()).get(*doc) != simdjson::SUCCESS) {
    return absl::InternalError(absl::StrCat(what, ": the library's answer is not JSON"));
  }
  return absl::OkStatus();
}

int64_t IntOr(simdjson::dom::element e, const char* key, int64_t fallback) {
  int64_t v = fallback;
  if (e[key].get(v) != simdjson::SUCCESS) return fallback;
  return v;
}

std::optional<int64_t> OptInt(simdjson::dom::element e, const char* key) {
  int64_t v = 0;
  if (e[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

std::string StrOr(simdjson::dom::element e, const char* key) {
  std::string_view v;
  if (e[key].get(v) != simdjson::SUCCESS) return "";
  return std::string(v);
}

}  // namespace

const SnapshotInfo* TableMetadataInfo::Snapshot(int64_t id) const {
  for (const SnapshotInfo& s : snapshots) {
    if (s.snapshot_id == id) return &s;
  }
  return nullptr;
}

absl::StatusOr<std::vector<const SnapshotInfo*>> TableMetadataInfo::CurrentAncestry() const {
  std::vector<const SnapshotInfo*> out;
  if (!current_snapshot_id.has_value()) return out;
  std::set<int64_t> seen;
  std::optional<int64_t> next = current_snapshot_id;
  while (next.has_value()) {
    if (!seen.insert(*next).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("snapshot ", *next, " is its own ancestor (a cycle of parent ids)"));
    }
    const SnapshotInfo* s = Snapshot(*next);
    if (s == nullptr) {
      if (out.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the current snapshot ", *next, " is not in the document"));
      }
      break;
    }
    out.push_back(s);
    next = s->parent_snapshot_id;
  }
  return out;
}

absl::StatusOr<TableMetadataInfo> ReadTableMetadata(absl::string_view metadata_json) {
  if (metadata_json.size() > kMaxMetadataJsonBytes) {
    return TooBig("table metadata", metadata_json.size(), kMaxMetadataJsonBytes);
  }
  FfiBytes out, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_read_table_metadata(Data(metadata_json), metadata_json.size(), out.out(),
                                         error.out()),
      error, "reading Iceberg table metadata"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  SLUICE_RETURN_IF_ERROR(Parse(parser, out, "table metadata", &doc));
  TableMetadataInfo info;
  info.format_version = IntOr(doc, "format_version", 0);
  info.table_uuid = StrOr(doc, "table_uuid");
  info.location = StrOr(doc, "location");
  info.current_snapshot_id = OptInt(doc, "current_snapshot_id");
  info.current_schema_id = IntOr(doc, "current_schema_id", 0);
  info.default_spec_id = IntOr(doc, "default_spec_id", 0);
  simdjson::dom::array array;
  if (doc["snapshots"].get(array) == simdjson::SUCCESS) {
    for (simdjson::dom::element s : array) {
      SnapshotInfo snapshot;
      snapshot.snapshot_id = IntOr(s, "snapshot_id", 0);
      snapshot.parent_snapshot_id = OptInt(s, "parent_snapshot_id");
      snapshot.sequence_number = IntOr(s, "sequence_number", 0);
      snapshot.timestamp_ms = IntOr(s, "timestamp_ms", 0);
      snapshot.manifest_list = StrOr(s, "manifest_list");
      simdjson::dom::object summary;
      if (s["summary"].get(summary) == simdjson::SUCCESS) {
        for (auto [key, value] : summary) {
          std::string_view text;
          if (value.get(text) == simdjson::SUCCESS) {
            snapshot.summary[std::string(key)] = std::string(text);
          }
        }
      }
      info.snapshots.push_back(std::move(snapshot));
    }
  }
  if (doc["schemas"].get(array) == simdjson::SUCCESS) {
    for (simdjson::dom::element s : array) {
      std::vector<SchemaFieldInfo>& fields = info.schemas[IntOr(s, "schema_id", 0)];
      simdjson::dom::array fa;
      if (s["fields"].get(fa) != simdjson::SUCCESS) continue;
      for (simdjson::dom::element f : fa) {
        bool required = false;
        if (f["required"].get(required) != simdjson::SUCCESS) required = false;
        fields.push_back({IntOr(f, "id", 0), StrOr(f, "name"), StrOr(f, "type"), required});
      }
    }
  }
  if (doc["partition_specs"].get(array) == simdjson::SUCCESS) {
    for (simdjson::dom::element s : array) {
      std::vector<PartitionFieldInfo>& fields = info.partition_specs[IntOr(s, "spec_id", 0)];
      simdjson::dom::array fa;
      if (s["fields"].get(fa) != simdjson::SUCCESS) continue;
      for (simdjson::dom::element f : fa) {
        fields.push_back({IntOr(f, "source_id", 0), IntOr(f, "field_id", 0), StrOr(f, "name"),
                          StrOr(f, "transform")});
      }
    }
  }
  if (doc["metadata_log"].get(array) == simdjson::SUCCESS) {
    for (simdjson::dom::element e : array) info.metadata_log.push_back(StrOr(e, "metadata_file"));
  }
  return info;
}

absl::StatusOr<std::vector<ManifestListEntry>> ReadManifestList(absl::string_view avro) {
  if (avro.size() > kMaxAvroFileBytes) return TooBig("manifest list", avro.size(), kMaxAvroFileBytes);
  FfiBytes out, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_read_manifest_list(Data(avro), avro.size(), out.out(), error.out()), error,
      "reading an Iceberg manifest list"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  SLUICE_RETURN_IF_ERROR(Parse(parser, out, "manifest list", &doc));
  std::vector<ManifestListEntry> entries;
  simdjson::dom::array array;
  if (doc["manifests"].get(array) != simdjson::SUCCESS) return entries;
  for (simdjson::dom::element m : array) {
    ManifestListEntry e;
    e.manifest_path = StrOr(m, "manifest_path");
    e.manifest_length = IntOr(m, "manifest_length", 0);
    e.partition_spec_id = IntOr(m, "partition_spec_id", 0);
    e.content = IntOr(m, "content", 0);
    e.sequence_number = IntOr(m, "sequence_number", 0);
    e.added_snapshot_id = IntOr(m, "added_snapshot_id", 0);
    e.added_files_count = IntOr(m, "added_files_count", -1);
    e.existing_files_count = IntOr(m, "existing_files_count", -1);
    e.deleted_files_count = IntOr(m, "deleted_files_count", -1);
    e.added_rows_count = IntOr(m, "added_rows_count", -1);
    e.existing_rows_count = IntOr(m, "existing_rows_count", -1);
    e.deleted_rows_count = IntOr(m, "deleted_rows_count", -1);
    entries.push_back(std::move(e));
  }
  return entries;
}

absl::StatusOr<std::vector<ManifestEntryInfo>> ReadManifest(absl::string_view avro) {
  if (avro.size() > kMaxAvroFileBytes) return TooBig("manifest", avro.size(), kMaxAvroFileBytes);
  FfiBytes out, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_read_manifest(Data(avro), avro.size(), out.out(), error.out()), error,
      "reading an Iceberg manifest"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  SLUICE_RETURN_IF_ERROR(Parse(parser, out, "manifest", &doc));
  std::vector<ManifestEntryInfo> entries;
  simdjson::dom::array array;
  if (doc["entries"].get(array) != simdjson::SUCCESS) return entries;
  for (simdjson::dom::element m : array) {
    ManifestEntryInfo e;
    e.status = IntOr(m, "status", 0);
    e.snapshot_id = OptInt(m, "snapshot_id");
    e.sequence_number = OptInt(m, "sequence_number");
    e.content = IntOr(m, "content", 0);
    e.file_path = StrOr(m, "file_path");
    e.file_format = StrOr(m, "file_format");
    e.record_count = IntOr(m, "record_count", 0);
    e.file_size_in_bytes = IntOr(m, "file_size_in_bytes", 0);
    simdjson::dom::object partition;
    if (m["partition"].get(partition) == simdjson::SUCCESS) {
      for (auto [key, value] : partition) {
        e.partition[std::string(key)] = simdjson::minify(value);
      }
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

absl::StatusOr<ParquetFileInfo> ReadParquetFile(absl::string_view bytes,
                                                const std::optional<std::string>& sum_column) {
  if (bytes.size() > kMaxParquetFileBytes) {
    return TooBig("Parquet file", bytes.size(), kMaxParquetFileBytes);
  }
  const std::string request =
      sum_column.has_value() ? absl::StrCat("{\"sum_column\":", JsonQuote(*sum_column), "}")
                             : std::string("{}");
  FfiBytes out, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_read_parquet(request.c_str(), Data(bytes), bytes.size(), out.out(),
                                  error.out()),
      error, "reading a Parquet file"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  SLUICE_RETURN_IF_ERROR(Parse(parser, out, "Parquet file", &doc));
  ParquetFileInfo info;
  info.rows = IntOr(doc, "rows", 0);
  info.row_groups = IntOr(doc, "row_groups", 0);
  info.sum = OptInt(doc, "sum");
  simdjson::dom::array columns;
  if (doc["columns"].get(columns) == simdjson::SUCCESS) {
    for (simdjson::dom::element c : columns) {
      std::string_view name;
      if (c.get(name) == simdjson::SUCCESS) info.columns.emplace_back(name);
    }
  }
  return info;
}

}  // namespace iceberg
}  // namespace sluice
