#include "supervisor/compaction/iceberg_replace.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/retry.h"
#include "common/segment/segment_reader.h"
#include "common/status_macros.h"
#include "iceberg/replace_snapshot.h"
#include "iceberg/table_metadata.h"
#include "iceberg/table_reader.h"

namespace sluice::supervisor {
namespace {

using KafkaKey = std::pair<std::string, int32_t>;
using Ranges = std::vector<std::pair<int64_t, int64_t>>;

// The outputs' provenance as the Kafka ranges they hold rows of, per topic
// and partition, overlapping and adjacent ranges merged.
std::map<KafkaKey, Ranges> RewrittenRanges(const IntervalCompaction& compaction) {
  std::map<KafkaKey, Ranges> by_key;
  for (const CompactedSegment& out : compaction.outputs) {
    const v1::Provenance& p = out.descriptor.provenance();
    for (const v1::PartitionRange& r : p.ranges()) {
      if (r.end_offset() <= r.start_offset()) continue;
      const KafkaKey key = r.topic().empty() ? KafkaKey(p.topic(), r.partition())
                                             : KafkaKey(r.topic(), r.topic_partition());
      by_key[key].emplace_back(r.start_offset(), r.end_offset());
    }
  }
  for (auto& [key, ranges] : by_key) {
    std::sort(ranges.begin(), ranges.end());
    Ranges merged;
    for (const auto& r : ranges) {
      if (!merged.empty() && r.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, r.second);
      } else {
        merged.push_back(r);
      }
    }
    ranges = std::move(merged);
  }
  return by_key;
}

// The live data files of the current snapshot, by the segment-id digest of
// their names (files of other writers' names are not listed).
absl::StatusOr<std::map<std::string, std::vector<std::string>>> LiveFilesBySegment(
    const iceberg::TableMetadataInfo& metadata, const iceberg::TableFileLoader& load) {
  std::map<std::string, std::vector<std::string>> out;
  if (!metadata.current_snapshot_id.has_value()) return out;
  const iceberg::SnapshotInfo* current = metadata.Snapshot(*metadata.current_snapshot_id);
  if (current == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the current snapshot ", *metadata.current_snapshot_id, " is not in the document"));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string list_bytes, load(current->manifest_list));
  SLUICE_ASSIGN_OR_RETURN(std::vector<iceberg::ManifestListEntry> manifests,
                          iceberg::ReadManifestList(list_bytes));
  for (const iceberg::ManifestListEntry& m : manifests) {
    if (m.content != 0) continue;
    if (m.added_files_count == 0 && m.existing_files_count == 0) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string bytes, load(m.manifest_path));
    SLUICE_ASSIGN_OR_RETURN(std::vector<iceberg::ManifestEntryInfo> entries,
                            iceberg::ReadManifest(bytes));
    for (const iceberg::ManifestEntryInfo& e : entries) {
      if (e.status == iceberg::ManifestEntryInfo::kDeleted || e.content != 0) continue;
      const std::optional<std::string> digest = SegmentDigestOfDataFile(e.file_path);
      if (digest.has_value()) out[*digest].push_back(e.file_path);
    }
  }
  return out;
}

// The sum of `column` over the output segments' rows.
absl::StatusOr<int64_t> SumOfOutputs(const IntervalCompaction& compaction,
                                     const std::string& column) {
  int64_t sum = 0;
  for (const CompactedSegment& out : compaction.outputs) {
    segment::SegmentReader::Options options;
    options.verify_checksum = false;  // the compaction checked what it pushed
    options.load_dictionaries = false;
    SLUICE_ASSIGN_OR_RETURN(auto reader, segment::SegmentReader::Open(out.local_path, options));
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> values, reader->ReadLongMetric(column));
    for (int64_t v : values) sum += v;
  }
  return sum;
}

// Writes the outputs as data files of the plan's schema and spec, stores
// them and reads them back; kept in `reuse`.
absl::Status WriteDataFiles(DeepStorage* storage, const std::string& scratch_dir,
                            const IcebergTarget& target, const iceberg::AppendPlan& plan,
                            const std::string& written_for, const IntervalCompaction& compaction,
                            const IcebergReplaceOptions& options, IcebergReplaceReuse* reuse) {
  reuse->written_for.clear();
  reuse->added.clear();
  reuse->stored.clear();
  for (const CompactedSegment& output : compaction.outputs) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<SegmentDataFile> files,
                            SegmentToDataFiles(output.local_path, plan));
    for (SegmentDataFile& f : files) {
      const std::string key =
          IcebergDataFileKey(target, f.partition_value, output.descriptor.id(), f.file.bytes);
      SLUICE_ASSIGN_OR_RETURN(std::string uri,
                              PutIcebergFile(storage, scratch_dir, key, f.file.bytes));
      reuse->stored.emplace_back(uri, IcebergSha256(f.file.bytes));
      reuse->added.push_back(iceberg::ManifestEntry{uri, std::move(f.file.file)});
    }
  }
  SLUICE_RETURN_IF_ERROR(VerifyStoredIcebergDataFiles(storage, scratch_dir, reuse->stored));
  reuse->written_for = written_for;
  ++reuse->data_file_writes;
  return absl::OkStatus();
}

absl::StatusOr<StagedIcebergReplace> Stage(DeepStorage* storage, const std::string& scratch_dir,
                                           const IcebergTarget& target, const std::string& base,
                                           const IntervalCompaction& compaction,
                                           const IcebergReplaceOptions& options,
                                           IcebergReplaceReuse* reuse) {
  if (compaction.replaced.empty() || compaction.outputs.empty()) {
    return absl::InvalidArgumentError(
        "a compaction to stage replaces at least one segment by at least one");
  }
  StagedIcebergReplace out;
  out.base = base;
  // Table files are immutable once written: each is read once per
  // compaction while the reuse has room for it.
  const iceberg::TableFileLoader load = [&](const std::string& uri) -> absl::StatusOr<std::string> {
    auto kept = reuse->files.find(uri);
    if (kept != reuse->files.end()) return kept->second;
    SLUICE_ASSIGN_OR_RETURN(std::string bytes, ReadDeepStorageObject(*storage, uri, scratch_dir));
    ++reuse->table_file_reads;
    const int64_t size = static_cast<int64_t>(bytes.size());
    if (reuse->file_bytes + size <= kMaxIcebergReplaceReuseBytes) {
      reuse->file_bytes += size;
      reuse->files.emplace(uri, bytes);
    }
    return bytes;
  };
  SLUICE_ASSIGN_OR_RETURN(std::string metadata_json,
                          ReadDeepStorageObject(*storage, base, scratch_dir));
  SLUICE_ASSIGN_OR_RETURN(iceberg::TableMetadataInfo metadata,
                          iceberg::ReadTableMetadata(metadata_json));
  SLUICE_ASSIGN_OR_RETURN(auto live, LiveFilesBySegment(metadata, load));

  // 1. The files to remove: every live file of every replaced segment.
  iceberg::ReplaceFiles replace;
  std::vector<std::string> without_files;
  for (const v1::SegmentDescriptor& s : compaction.replaced) {
    auto it = live.find(IcebergShortDigest(s.id()));
    if (it == live.end()) {
      without_files.push_back(s.id());
      continue;
    }
    replace.remove.insert(replace.remove.end(), it->second.begin(), it->second.end());
  }
  if (!without_files.empty()) {
    out.skipped = absl::StrCat(
        without_files.size(), " of the ", compaction.replaced.size(),
        " replaced segments have no live data file in table ", target.QualifiedName(), " (",
        absl::StrJoin(without_files.begin(),
                      without_files.begin() + std::min<size_t>(without_files.size(), 3), ", "),
        without_files.size() > 3 ? ", ..." : "",
        "): the table does not hold the interval as the segments do; its files stay as they are");
    return out;
  }

  // 2. The outputs as data files of the current schema and spec, stored
  // (kept from an earlier attempt while the schema and spec are the same).
  SLUICE_ASSIGN_OR_RETURN(iceberg::AppendPlan plan, iceberg::PlanAppend(metadata_json, {}));
  const std::string written_for = absl::StrCat(target.location_key, "\n", plan.schema_json,
                                               "\n", plan.partition_spec_json);
  if (reuse->written_for != written_for) {
    SLUICE_RETURN_IF_ERROR(WriteDataFiles(storage, scratch_dir, target, plan, written_for,
                                          compaction, options, reuse));
  }
  replace.add = reuse->added;

  // 3. The snapshot, staged once with placeholder names to name its files
  // by what they hold, then with those names.
  out.snapshot_id = IcebergReplaceSnapshotId(compaction);
  replace.snapshot_id = out.snapshot_id;
  replace.timestamp_ms = options.now_ms;
  replace.rewritten_kafka_ranges = RewrittenRanges(compaction);
  replace.summary["sluice.datasource"] = target.datasource;
  replace.previous_metadata_location = base;
  if (options.count_column.has_value()) {
    if (!reuse->count_sum.has_value() || reuse->count_sum->first != *options.count_column) {
      SLUICE_ASSIGN_OR_RETURN(int64_t sum, SumOfOutputs(compaction, *options.count_column));
      reuse->count_sum.emplace(*options.count_column, sum);
    }
    replace.rolled_up = iceberg::RolledUpCount{*options.count_column, reuse->count_sum->second,
                                               &reuse->column_sums};
  }
  replace.manifest_path = "m.avro";
  replace.manifest_list_path = "l.avro";
  SLUICE_ASSIGN_OR_RETURN(iceberg::StagedReplace probe,
                          iceberg::StageReplace(metadata_json, replace, load));
  std::string probe_bytes;
  for (const auto& [path, bytes] : probe.files) absl::StrAppend(&probe_bytes, path, "\n", bytes);
  const std::string stem =
      absl::StrCat(IcebergShortDigest(absl::StrCat("compaction ", out.snapshot_id)), "-",
                   IcebergShortDigest(probe_bytes));
  replace.manifest_path =
      storage->UriForKey(absl::StrCat(target.location_key, "/metadata/", stem, "-m0.avro"));
  replace.manifest_list_path = storage->UriForKey(
      absl::StrCat(target.location_key, "/metadata/snap-", out.snapshot_id, "-", stem, ".avro"));
  SLUICE_ASSIGN_OR_RETURN(iceberg::StagedReplace staged,
                          iceberg::StageReplace(metadata_json, replace, load));
  SLUICE_RETURN_IF_ERROR(PutStagedIcebergFiles(storage, scratch_dir, target, staged.files));
  SLUICE_ASSIGN_OR_RETURN(
      std::string location,
      PutIcebergFile(storage, scratch_dir, IcebergMetadataKey(target, base, staged.metadata_json),
                     staged.metadata_json));
  out.metadata_location = location;
  out.removed_files = staged.removed_files;
  out.added_files = static_cast<int64_t>(replace.add.size());
  out.removed_records = staged.removed_records;
  out.added_records = staged.added_records;
  return out;
}

}  // namespace

int64_t IcebergReplaceSnapshotId(const IntervalCompaction& compaction) {
  std::vector<std::string> ids;
  for (const CompactedSegment& out : compaction.outputs) ids.push_back(out.descriptor.id());
  std::sort(ids.begin(), ids.end());
  // Seeded with a line break, which no sequence name holds (they are made
  // from the datasource's name, of [A-Za-z0-9._-]).
  return IcebergSnapshotId(compaction.datasource,
                           absl::StrCat("compaction\n", absl::StrJoin(ids, "\n")));
}

absl::StatusOr<StagedIcebergReplace> StageIcebergReplace(DeepStorage* storage,
                                                         const std::string& scratch_dir,
                                                         const IcebergTarget& target,
                                                         const std::string& base_metadata_location,
                                                         const IntervalCompaction& compaction,
                                                         const IcebergReplaceOptions& options,
                                                         IcebergReplaceReuse* reuse) {
  IcebergReplaceReuse local;
  absl::StatusOr<StagedIcebergReplace> staged =
      Stage(storage, scratch_dir, target, base_metadata_location, compaction, options,
            reuse != nullptr ? reuse : &local);
  if (staged.ok() || IsRetryable(staged.status()) || absl::IsAborted(staged.status())) {
    return staged;
  }
  return absl::Status(staged.status().code(),
                      absl::StrCat("Iceberg table ", target.QualifiedName(),
                                   " (replace of a compaction of ", compaction.datasource,
                                   "): ", staged.status().message()));
}

}  // namespace sluice::supervisor
