#include "iceberg/rewrite_manifests.h"

#include <simdjson.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "iceberg/ffi_call.h"
#include "iceberg/table_metadata.h"
#include "iceberg/table_reader.h"
#include "iceberg/table_schema.h"

namespace sluice {
namespace iceberg {
namespace {

// The spec-id of a partition spec's JSON.
absl::StatusOr<int64_t> SpecId(const std::string& partition_spec_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element spec;
  int64_t id = 0;
  if (parser.parse(partition_spec_json).get(spec) != simdjson::SUCCESS ||
      spec["spec-id"].get(id) != simdjson::SUCCESS) {
    return absl::InternalError("the plan's partition spec has no spec-id");
  }
  return id;
}

struct Merged {
  std::string bytes;
  std::string manifest_file_json;
  int64_t entries = 0;
};

absl::StatusOr<Merged> MergeManifests(const AppendPlan& plan, int64_t snapshot_id,
                                      const std::string& path,
                                      const std::vector<const ManifestListEntry*>& group,
                                      const TableFileLoader& load) {
  std::string all;
  std::string request = absl::StrCat(
      "{\"schema\":", plan.schema_json, ",\"partition_spec\":", plan.partition_spec_json,
      ",\"snapshot_id\":", snapshot_id, ",\"manifest_path\":", JsonQuote(path),
      ",\"sources\":[");
  for (size_t i = 0; i < group.size(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(std::string bytes, load(group[i]->manifest_path));
    absl::StrAppend(&request, i == 0 ? "" : ",", "{\"length\":", bytes.size(),
                    ",\"inherited_snapshot_id\":", group[i]->added_snapshot_id,
                    ",\"inherited_sequence_number\":", group[i]->sequence_number, "}");
    all += bytes;
  }
  request += "]}";
  static const uint8_t kEmpty = 0;
  const uint8_t* data = all.empty() ? &kEmpty : reinterpret_cast<const uint8_t*>(all.data());
  FfiBytes manifest, result, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_merge_manifests(request.c_str(), data, all.size(), manifest.out(),
                                     result.out(), error.out()),
      error, absl::StrCat("merging ", group.size(), " Iceberg manifests into ", path)));
  Merged out;
  out.bytes = manifest.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc, info;
  const std::string text = result.str();
  if (parser.parse(text).get(doc) != simdjson::SUCCESS ||
      doc["manifest_file"].get(info) != simdjson::SUCCESS) {
    return absl::InternalError("the library's merged manifest record lacks fields");
  }
  int64_t existing = 0;
  if (info["existing_files_count"].get(existing) == simdjson::SUCCESS) out.entries = existing;
  out.manifest_file_json = simdjson::minify(info);
  return out;
}

}  // namespace

absl::StatusOr<std::optional<StagedManifestRewrite>> StageManifestRewrite(
    absl::string_view metadata_json, const RewriteManifestsOptions& options,
    const TableFileLoader& load) {
  if (options.min_count_to_merge < 2 || options.target_size_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "manifests are merged from at least 2 (min_count_to_merge ", options.min_count_to_merge,
        ") into at least 1 byte (target_size_bytes ", options.target_size_bytes, ")"));
  }
  SLUICE_ASSIGN_OR_RETURN(AppendPlan plan, PlanAppend(metadata_json, {}));
  if (!plan.parent_snapshot_id.has_value()) return std::nullopt;
  SLUICE_ASSIGN_OR_RETURN(int64_t spec_id, SpecId(plan.partition_spec_json));
  SLUICE_ASSIGN_OR_RETURN(std::string parent_list, load(*plan.parent_manifest_list));
  SLUICE_ASSIGN_OR_RETURN(std::vector<ManifestListEntry> manifests,
                          ReadManifestList(parent_list));

  // The small data manifests of the default spec, in the list's order,
  // grouped up to the target size.
  std::vector<const ManifestListEntry*> small;
  for (const ManifestListEntry& m : manifests) {
    if (m.content == 0 && m.partition_spec_id == spec_id &&
        m.manifest_length < options.target_size_bytes) {
      small.push_back(&m);
    }
  }
  if (static_cast<int64_t>(small.size()) < options.min_count_to_merge) return std::nullopt;
  std::vector<std::vector<const ManifestListEntry*>> groups(1);
  int64_t group_bytes = 0;
  for (const ManifestListEntry* m : small) {
    if (!groups.back().empty() && group_bytes + m->manifest_length > options.target_size_bytes) {
      groups.emplace_back();
      group_bytes = 0;
    }
    groups.back().push_back(m);
    group_bytes += m->manifest_length;
  }

  StagedManifestRewrite staged;
  std::vector<std::string> created_json;
  std::vector<std::string> dropped;
  for (const std::vector<const ManifestListEntry*>& group : groups) {
    if (group.size() < 2) continue;  // nothing to merge it with: kept
    const std::string path =
        absl::StrCat(options.manifest_path_stem, "-", staged.manifests_created, ".avro");
    SLUICE_ASSIGN_OR_RETURN(Merged merged,
                            MergeManifests(plan, options.snapshot_id, path, group, load));
    for (const ManifestListEntry* m : group) dropped.push_back(m->manifest_path);
    staged.manifests_replaced += static_cast<int64_t>(group.size());
    ++staged.manifests_created;
    staged.entries += merged.entries;
    created_json.push_back(std::move(merged.manifest_file_json));
    staged.files.emplace_back(path, std::move(merged.bytes));
  }
  if (staged.manifests_created == 0) return std::nullopt;
  staged.manifests_kept = static_cast<int64_t>(manifests.size()) - staged.manifests_replaced;

  std::string request = absl::StrCat(
      "{\"snapshot_id\":", options.snapshot_id, ",\"parent_snapshot_id\":",
      *plan.parent_snapshot_id, ",\"sequence_number\":", plan.sequence_number,
      ",\"manifest_list_path\":", JsonQuote(options.manifest_list_path), ",\"manifests\":[");
  for (size_t i = 0; i < created_json.size(); ++i) {
    absl::StrAppend(&request, i == 0 ? "" : ",", created_json[i]);
  }
  request += "],\"drop_parent_manifests\":[";
  for (size_t i = 0; i < dropped.size(); ++i) {
    absl::StrAppend(&request, i == 0 ? "" : ",", JsonQuote(dropped[i]));
  }
  request += "]}";
  FfiBytes list, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_write_manifest_list(
          request.c_str(), reinterpret_cast<const uint8_t*>(parent_list.data()),
          parent_list.size(), list.out(), error.out()),
      error, "writing a rewrite-manifests snapshot's manifest list"));
  staged.files.emplace_back(options.manifest_list_path, list.str());

  std::map<std::string, std::string> summary = options.summary;
  summary["manifests-created"] = absl::StrCat(staged.manifests_created);
  summary["manifests-replaced"] = absl::StrCat(staged.manifests_replaced);
  summary["manifests-kept"] = absl::StrCat(staged.manifests_kept);
  summary["entries-processed"] = absl::StrCat(staged.entries);
  std::string commit = absl::StrCat(
      "{\"schema\":", plan.schema_json, ",\"snapshot_id\":", options.snapshot_id,
      ",\"sequence_number\":", plan.sequence_number, ",\"timestamp_ms\":", options.timestamp_ms,
      ",\"manifest_list\":", JsonQuote(options.manifest_list_path),
      ",\"operation\":\"replace\",\"added_data_files\":0,\"added_records\":0,"
      "\"added_files_size\":0,\"deleted_data_files\":0,\"deleted_records\":0,"
      "\"removed_files_size\":0,\"summary\":",
      StringMapJson(summary));
  if (options.previous_metadata_location.has_value()) {
    absl::StrAppend(&commit, ",\"previous_metadata_location\":",
                    JsonQuote(*options.previous_metadata_location));
  }
  commit += "}";
  const std::string metadata(metadata_json);
  FfiBytes out, error2;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_append_snapshot(metadata.c_str(), commit.c_str(), out.out(), error2.out()),
      error2, "adding an Iceberg rewrite-manifests snapshot"));
  staged.metadata_json = out.str();
  return staged;
}

}  // namespace iceberg
}  // namespace sluice
