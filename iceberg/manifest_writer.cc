#include "iceberg/manifest_writer.h"

#include <simdjson.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "iceberg/ffi_call.h"
#include "iceberg/limits.h"

namespace sluice {
namespace iceberg {

absl::StatusOr<WrittenManifest> WriteManifest(const AppendPlan& plan, int64_t snapshot_id,
                                              const std::string& manifest_path,
                                              absl::Span<const ManifestEntry> entries) {
  if (entries.size() > kMaxFilesPerManifest) {
    return absl::ResourceExhaustedError(absl::StrCat(entries.size(),
                                                     " data files in one manifest, more than the limit of ",
                                                     kMaxFilesPerManifest));
  }
  std::string request = absl::StrCat(
      "{\"schema\":", plan.schema_json, ",\"partition_spec\":", plan.partition_spec_json,
      ",\"snapshot_id\":", snapshot_id, ",\"manifest_path\":", JsonQuote(manifest_path),
      ",\"data_files\":[");
  for (size_t i = 0; i < entries.size(); ++i) {
    absl::StrAppend(&request, i == 0 ? "" : ",", "{\"file_path\":", JsonQuote(entries[i].file_path),
                    ",\"metrics\":", entries[i].file.metrics_json, "}");
  }
  request += "]}";
  FfiBytes manifest, info, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_write_manifest(request.c_str(), manifest.out(), info.out(), error.out()),
      error, "writing an Iceberg manifest"));
  WrittenManifest written;
  written.bytes = manifest.str();
  written.file.path = manifest_path;
  written.file.length = static_cast<int64_t>(written.bytes.size());
  written.file.json = info.str();
  for (const ManifestEntry& e : entries) written.file.added_rows_count += e.file.record_count;
  return written;
}

absl::StatusOr<std::string> WriteManifestList(
    const AppendPlan& plan, int64_t snapshot_id, const std::string& manifest_list_path,
    std::optional<absl::string_view> parent_manifest_list,
    absl::Span<const ManifestFile> manifests) {
  if (plan.parent_snapshot_id.has_value() != parent_manifest_list.has_value()) {
    return absl::InvalidArgumentError(
        plan.parent_snapshot_id.has_value()
            ? absl::StrCat("the table's current snapshot ", *plan.parent_snapshot_id,
                           " has manifest list ", plan.parent_manifest_list.value_or(""),
                           ": pass its bytes")
            : std::string("the table has no snapshot: there is no parent manifest list"));
  }
  std::string request = absl::StrCat("{\"snapshot_id\":", snapshot_id,
                                     ",\"sequence_number\":", plan.sequence_number,
                                     ",\"manifest_list_path\":", JsonQuote(manifest_list_path));
  if (plan.parent_snapshot_id.has_value()) {
    absl::StrAppend(&request, ",\"parent_snapshot_id\":", *plan.parent_snapshot_id);
  }
  request += ",\"manifests\":[";
  for (size_t i = 0; i < manifests.size(); ++i) {
    absl::StrAppend(&request, i == 0 ? "" : ",", manifests[i].json);
  }
  request += "]}";
  FfiBytes list, error;
  const uint8_t* parent_data =
      parent_manifest_list.has_value()
          ? reinterpret_cast<const uint8_t*>(parent_manifest_list->data())
          : nullptr;
  // A present but empty parent list still needs a non-null pointer.
  static const uint8_t kEmpty = 0;
  if (parent_manifest_list.has_value() && parent_data == nullptr) parent_data = &kEmpty;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_write_manifest_list(request.c_str(), parent_data,
                                         parent_manifest_list ? parent_manifest_list->size() : 0,
                                         list.out(), error.out()),
      error, "writing an Iceberg manifest list"));
  return list.str();
}

}  // namespace iceberg
}  // namespace sluice
