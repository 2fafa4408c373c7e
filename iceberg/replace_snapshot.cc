#include "iceberg/replace_snapshot.h"

#include <simdjson.h>

#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "iceberg/ffi_call.h"
#include "iceberg/limits.h"
#include "iceberg/table_metadata.h"
#include "iceberg/table_reader.h"

namespace sluice {
namespace iceberg {
namespace {

std::string RewrittenManifestPath(const std::string& manifest_path, size_t i) {
  std::string stem = manifest_path;
  if (absl::EndsWith(stem, ".avro")) stem.resize(stem.size() - 5);
  return absl::StrCat(stem, "-r", i, ".avro");
}

struct Rewritten {
  std::string bytes;
  std::string manifest_file_json;
  std::vector<std::pair<std::string, int64_t>> removed;  // path, records
  int64_t removed_size = 0;
};

absl::StatusOr<Rewritten> RewriteManifest(const AppendPlan& plan, int64_t snapshot_id,
                                          const std::string& path, const ManifestListEntry& source,
                                          absl::string_view source_bytes,
                                          const std::vector<std::string>& remove) {
  std::string request = absl::StrCat(
      "{\"schema\":", plan.schema_json, ",\"partition_spec\":", plan.partition_spec_json,
      ",\"snapshot_id\":", snapshot_id, ",\"manifest_path\":", JsonQuote(path),
      ",\"inherited_snapshot_id\":", source.added_snapshot_id,
      ",\"inherited_sequence_number\":", source.sequence_number, ",\"remove_paths\":[");
  for (size_t i = 0; i < remove.size(); ++i) {
    absl::StrAppend(&request, i == 0 ? "" : ",", JsonQuote(remove[i]));
  }
  request += "]}";
  static const uint8_t kEmpty = 0;
  const uint8_t* data = source_bytes.empty()
                            ? &kEmpty
                            : reinterpret_cast<const uint8_t*>(source_bytes.data());
  FfiBytes manifest, result, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_rewrite_manifest(request.c_str(), data, source_bytes.size(), manifest.out(),
                                      result.out(), error.out()),
      error, absl::StrCat("rewriting Iceberg manifest ", source.manifest_path)));
  Rewritten out;
  out.bytes = manifest.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const std::string text = result.str();
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) {
    return absl::InternalError("the library's rewritten manifest record is not JSON");
  }
  simdjson::dom::element info;
  simdjson::dom::array removed;
  if (doc["manifest_file"].get(info) != simdjson::SUCCESS ||
      doc["removed"].get(removed) != simdjson::SUCCESS) {
    return absl::InternalError("the library's rewritten manifest record lacks fields");
  }
  out.manifest_file_json = simdjson::minify(info);
  for (simdjson::dom::element r : removed) {
    std::string_view p;
    int64_t records = 0, size = 0;
    if (r["file_path"].get(p) != simdjson::SUCCESS ||
        r["record_count"].get(records) != simdjson::SUCCESS ||
        r["file_size_in_bytes"].get(size) != simdjson::SUCCESS) {
      return absl::InternalError("the library's removed file record lacks fields");
    }
    out.removed.emplace_back(std::string(p), records);
    out.removed_size += size;
  }
  return out;
}

absl::StatusOr<int64_t> SumColumn(const TableFileLoader& load, const std::string& uri,
                                  const std::string& column,
                                  std::map<std::string, int64_t>* known) {
  if (known != nullptr) {
    auto it = known->find(uri);
    if (it != known->end()) return it->second;
  }
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, load(uri));
  SLUICE_ASSIGN_OR_RETURN(ParquetFileInfo info, ReadParquetFile(bytes, column));
  const int64_t sum = info.sum.value_or(0);
  if (known != nullptr) (*known)[uri] = sum;
  return sum;
}

}  // namespace

absl::StatusOr<StagedReplace> StageReplace(absl::string_view metadata_json,
                                           const ReplaceFiles& replace,
                                           const TableFileLoader& load) {
  if (replace.remove.empty() || replace.add.empty()) {
    return absl::InvalidArgumentError("a replace removes and adds at least one data file each");
  }
  if (replace.remove.size() > kMaxFilesPerReplace || replace.add.size() > kMaxFilesPerReplace) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a replace of ", replace.remove.size(), " files by ", replace.add.size(),
        ", more than the limit of ", kMaxFilesPerReplace, " on either side"));
  }
  const std::set<std::string> remove(replace.remove.begin(), replace.remove.end());
  if (remove.size() != replace.remove.size()) {
    return absl::InvalidArgumentError("a file to remove is listed twice");
  }
  std::set<std::string> added_paths;
  for (const ManifestEntry& e : replace.add) {
    if (!added_paths.insert(e.file_path).second || remove.count(e.file_path) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("added file ", e.file_path, " is listed twice or also removed"));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(AppendPlan plan, PlanAppend(metadata_json, {}));
  if (!plan.parent_snapshot_id.has_value()) {
    return absl::InvalidArgumentError("the table has no snapshot: there is nothing to replace");
  }
  int64_t spec_id = 0;
  {
    simdjson::dom::parser parser;
    simdjson::dom::element spec;
    if (parser.parse(plan.partition_spec_json).get(spec) != simdjson::SUCCESS ||
        spec["spec-id"].get(spec_id) != simdjson::SUCCESS) {
      return absl::InternalError("the plan's partition spec has no spec-id");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::string parent_list, load(*plan.parent_manifest_list));
  SLUICE_ASSIGN_OR_RETURN(std::vector<ManifestListEntry> manifests,
                          ReadManifestList(parent_list));

  StagedReplace staged;
  std::vector<std::string> dropped;
  std::vector<std::string> rewritten_json;
  std::set<std::string> found;
  int64_t removed_size = 0;
  for (const ManifestListEntry& m : manifests) {
    if (m.content != 0) {
      ++staged.carried_manifests;  // delete manifests are not rewritten
      continue;
    }
    // Without live files (a rewrite's DELETED entries): not carried.
    if (m.added_files_count == 0 && m.existing_files_count == 0) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string bytes, load(m.manifest_path));
    SLUICE_ASSIGN_OR_RETURN(std::vector<ManifestEntryInfo> entries, ReadManifest(bytes));
    std::vector<std::string> here;
    for (const ManifestEntryInfo& e : entries) {
      if (e.status == ManifestEntryInfo::kDeleted) continue;
      if (added_paths.count(e.file_path) > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("added file ", e.file_path, " is already in the table"));
      }
      if (remove.count(e.file_path) > 0) here.push_back(e.file_path);
    }
    if (here.empty()) {
      ++staged.carried_manifests;
      continue;
    }
    if (m.partition_spec_id != spec_id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "manifest ", m.manifest_path, " is of partition spec ", m.partition_spec_id,
          ", not the table's default ", spec_id, ": its files cannot be rewritten"));
    }
    const std::string path =
        RewrittenManifestPath(replace.manifest_path, staged.rewritten_manifests);
    SLUICE_ASSIGN_OR_RETURN(Rewritten r,
                            RewriteManifest(plan, replace.snapshot_id, path, m, bytes, here));
    for (const auto& [p, records] : r.removed) {
      if (!found.insert(p).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("data file ", p, " is live in two manifests of the table"));
      }
      ++staged.removed_files;
      staged.removed_records += records;
    }
    removed_size += r.removed_size;
    ++staged.rewritten_manifests;
    dropped.push_back(m.manifest_path);
    rewritten_json.push_back(r.manifest_file_json);
    staged.files.emplace_back(path, std::move(r.bytes));
  }
  for (const std::string& p : replace.remove) {
    if (found.count(p) == 0) {
      return absl::AbortedError(absl::StrCat(
          "conflict: file ", p, " is no longer in the table (current snapshot ",
          *plan.parent_snapshot_id, "): plan the rewrite again on the current metadata"));
    }
  }

  int64_t added_size = 0;
  for (const ManifestEntry& e : replace.add) {
    staged.added_records += e.file.record_count;
    added_size += e.file.file_size_in_bytes;
  }
  if (!replace.rolled_up.has_value()) {
    if (staged.added_records != staged.removed_records) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rows not conserved: the added files hold ", staged.added_records,
          " records, the removed files ", staged.removed_records));
    }
  } else {
    const RolledUpCount& c = *replace.rolled_up;
    int64_t removed_sum = 0, added_sum = 0;
    for (const std::string& p : replace.remove) {
      SLUICE_ASSIGN_OR_RETURN(int64_t s, SumColumn(load, p, c.count_column, c.known_sums));
      removed_sum += s;
    }
    for (const ManifestEntry& e : replace.add) {
      SLUICE_ASSIGN_OR_RETURN(int64_t s, SumColumn(load, e.file_path, c.count_column, c.known_sums));
      added_sum += s;
    }
    if (removed_sum != c.expected_count || added_sum != c.expected_count) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rows not conserved: column ", c.count_column, " sums to ", removed_sum,
          " over the removed files and ", added_sum, " over the added files, expected ",
          c.expected_count));
    }
  }

  SLUICE_ASSIGN_OR_RETURN(WrittenManifest added,
                          WriteManifest(plan, replace.snapshot_id, replace.manifest_path,
                                        replace.add));

  std::string request = absl::StrCat(
      "{\"snapshot_id\":", replace.snapshot_id, ",\"parent_snapshot_id\":",
      *plan.parent_snapshot_id, ",\"sequence_number\":", plan.sequence_number,
      ",\"manifest_list_path\":", JsonQuote(replace.manifest_list_path),
      ",\"manifests\":[", added.file.json);
  for (const std::string& j : rewritten_json) absl::StrAppend(&request, ",", j);
  request += "],\"drop_parent_manifests\":[";
  for (size_t i = 0; i < dropped.size(); ++i) {
    absl::StrAppend(&request, i == 0 ? "" : ",", JsonQuote(dropped[i]));
  }
  request += "]}";
  static const uint8_t kEmpty = 0;
  const uint8_t* parent_data = parent_list.empty()
                                   ? &kEmpty
                                   : reinterpret_cast<const uint8_t*>(parent_list.data());
  FfiBytes list, error;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_write_manifest_list(request.c_str(), parent_data, parent_list.size(),
                                         list.out(), error.out()),
      error, "writing a replace snapshot's manifest list"));
  staged.files.insert(staged.files.begin(), {replace.manifest_path, added.bytes});
  staged.files.emplace_back(replace.manifest_list_path, list.str());

  std::map<std::string, std::string> summary = replace.summary;
  for (const auto& [key, ranges] : replace.rewritten_kafka_ranges) {
    std::vector<std::string> parts;
    for (const auto& [start, end] : ranges) parts.push_back(absl::StrCat(start, "-", end));
    summary[absl::StrCat("sluice.rewritten.kafka.", key.first, ".", key.second)] =
        absl::StrJoin(parts, ",");
  }
  if (summary.size() > kMaxProperties) {
    return absl::ResourceExhaustedError(absl::StrCat(
        summary.size(), " summary properties, more than the limit of ", kMaxProperties));
  }
  std::string commit = absl::StrCat(
      "{\"schema\":", plan.schema_json, ",\"snapshot_id\":", replace.snapshot_id,
      ",\"sequence_number\":", plan.sequence_number, ",\"timestamp_ms\":", replace.timestamp_ms,
      ",\"manifest_list\":", JsonQuote(replace.manifest_list_path),
      ",\"operation\":\"replace\",\"added_data_files\":", replace.add.size(),
      ",\"added_records\":", staged.added_records, ",\"added_files_size\":", added_size,
      ",\"deleted_data_files\":", staged.removed_files,
      ",\"deleted_records\":", staged.removed_records, ",\"removed_files_size\":", removed_size,
      ",\"summary\":", StringMapJson(summary));
  if (replace.previous_metadata_location.has_value()) {
    absl::StrAppend(&commit, ",\"previous_metadata_location\":",
                    JsonQuote(*replace.previous_metadata_location));
  }
  commit += "}";
  const std::string metadata(metadata_json);
  FfiBytes out, error2;
  SLUICE_RETURN_IF_ERROR(FfiStatus(
      sluice_iceberg_append_snapshot(metadata.c_str(), commit.c_str(), out.out(), error2.out()),
      error2, "adding an Iceberg replace snapshot"));
  staged.metadata_json = out.str();
  return staged;
}

}  // namespace iceberg
}  // namespace sluice
