#include "supervisor/compaction/table_upkeep.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/spec.h"
#include "common/status_macros.h"
#include "iceberg/expire_snapshots.h"
#include "iceberg/table_reader.h"

namespace sluice::supervisor {

SnapshotExpiryPolicy ExpiryPolicyOf(const CompactionPolicy& policy) {
  SnapshotExpiryPolicy out;
  out.retention = policy.snapshot_retention;
  out.keep = std::max<int32_t>(1, policy.snapshots_to_keep);
  return out;
}

absl::StatusOr<std::optional<StagedSnapshotExpiry>> StageSnapshotExpiry(
    DeepStorage* storage, const std::string& scratch_dir, const IcebergTarget& target,
    const std::string& base_location, const SnapshotExpiryPolicy& policy, absl::Time now) {
  SLUICE_ASSIGN_OR_RETURN(std::string metadata,
                          ReadDeepStorageObject(*storage, base_location, scratch_dir));
  iceberg::ExpireSnapshotsOptions options;
  options.older_than_ms = absl::ToUnixMillis(now - policy.retention);
  options.retain_last = std::max<int32_t>(1, policy.keep);
  options.now_ms = absl::ToUnixMillis(now);
  options.metadata_location = base_location;
  absl::StatusOr<iceberg::ExpiredSnapshots> expired = iceberg::ExpireSnapshots(metadata, options);
  if (!expired.ok()) {
    return absl::Status(expired.status().code(),
                        absl::StrCat("Iceberg table ", target.QualifiedName(), " (", base_location,
                                     "): ", expired.status().message()));
  }
  if (expired->expired.empty()) return std::nullopt;
  StagedSnapshotExpiry staged;
  staged.base = base_location;
  staged.expired = std::move(expired->expired);
  SLUICE_ASSIGN_OR_RETURN(
      staged.metadata_location,
      PutIcebergFile(storage, scratch_dir,
                     IcebergMetadataKey(target, base_location, expired->metadata_json),
                     expired->metadata_json));
  return staged;
}

namespace {

absl::StatusOr<bool> SwapTable(MetadataStore* store, const IcebergTarget& target,
                               const std::string& from, const std::string& to) {
  bool swapped = false;
  SLUICE_RETURN_IF_ERROR(store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(swapped, txn.SwapIcebergMetadataLocation(
                                         target.table_namespace, target.table_name, from, to));
    return absl::OkStatus();
  }));
  return swapped;
}

absl::Status Annotated(const absl::Status& status, const IcebergTarget& target,
                       const std::string& location) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("Iceberg table ", target.QualifiedName(), " (",
                                                  location, "): ", status.message()));
}

}  // namespace

absl::StatusOr<bool> CommitSnapshotExpiry(MetadataStore* store, const IcebergTarget& target,
                                          const StagedSnapshotExpiry& staged) {
  return SwapTable(store, target, staged.base, staged.metadata_location);
}

absl::StatusOr<std::optional<StagedManifestMerge>> StageManifestMerge(
    DeepStorage* storage, const std::string& scratch_dir, const IcebergTarget& target,
    const std::string& base_location, const ManifestRewritePolicy& policy, absl::Time now) {
  SLUICE_ASSIGN_OR_RETURN(std::string metadata,
                          ReadDeepStorageObject(*storage, base_location, scratch_dir));
  const iceberg::TableFileLoader load = [&](const std::string& uri) {
    return ReadDeepStorageObject(*storage, uri, scratch_dir);
  };
  iceberg::RewriteManifestsOptions options;
  options.snapshot_id =
      IcebergSnapshotId(target.datasource, absl::StrCat("rewrite-manifests\n", base_location));
  options.timestamp_ms = absl::ToUnixMillis(now);
  options.min_count_to_merge = policy.min_count_to_merge;
  options.target_size_bytes = policy.target_size_bytes;
  const std::string stem = absl::StrCat(
      "rewrite-", IcebergShortDigest(absl::StrCat(options.snapshot_id, "\n", base_location)));
  options.manifest_path_stem =
      storage->UriForKey(absl::StrCat(target.location_key, "/metadata/", stem, "-m"));
  options.manifest_list_path = storage->UriForKey(
      absl::StrCat(target.location_key, "/metadata/snap-", options.snapshot_id, "-", stem, ".avro"));
  options.summary["sluice.datasource"] = target.datasource;
  options.previous_metadata_location = base_location;
  absl::StatusOr<std::optional<iceberg::StagedManifestRewrite>> rewrite =
      iceberg::StageManifestRewrite(metadata, options, load);
  if (!rewrite.ok()) return Annotated(rewrite.status(), target, base_location);
  if (!rewrite->has_value()) return std::nullopt;
  const iceberg::StagedManifestRewrite& staged = **rewrite;
  SLUICE_RETURN_IF_ERROR(PutStagedIcebergFiles(storage, scratch_dir, target, staged.files));
  StagedManifestMerge out;
  out.base = base_location;
  out.snapshot_id = options.snapshot_id;
  out.manifests_replaced = staged.manifests_replaced;
  out.manifests_created = staged.manifests_created;
  SLUICE_ASSIGN_OR_RETURN(
      out.metadata_location,
      PutIcebergFile(storage, scratch_dir,
                     IcebergMetadataKey(target, base_location, staged.metadata_json),
                     staged.metadata_json));
  return out;
}

absl::StatusOr<bool> CommitManifestMerge(MetadataStore* store, const IcebergTarget& target,
                                         const StagedManifestMerge& staged) {
  return SwapTable(store, target, staged.base, staged.metadata_location);
}

absl::StatusOr<TableUpkeepResult> UpkeepIcebergTable(const TableUpkeepOptions& options,
                                                     const v1::SupervisorSpec& spec,
                                                     absl::Time now) {
  TableUpkeepResult result;
  const std::optional<IcebergTarget> target = IcebergTargetOf(spec, *options.deep_storage);
  if (!target.has_value()) return result;
  SLUICE_ASSIGN_OR_RETURN(CompactionPolicy policy, ParseCompactionPolicy(spec));
  IcebergTableLocks::Shared hold;
  if (options.locks != nullptr) hold = options.locks->Publishing(target->location_key);
  auto current = [&]() -> absl::StatusOr<std::optional<std::string>> {
    std::optional<std::string> location;
    SLUICE_RETURN_IF_ERROR(options.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
      SLUICE_ASSIGN_OR_RETURN(
          location, txn.IcebergMetadataLocation(target->table_namespace, target->table_name));
      return absl::OkStatus();
    }));
    return location;
  };
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> base, current());
  if (!base.has_value()) return result;
  SLUICE_ASSIGN_OR_RETURN(std::optional<StagedSnapshotExpiry> expiry,
                          StageSnapshotExpiry(options.deep_storage, options.scratch_dir, *target,
                                              *base, ExpiryPolicyOf(policy), now));
  if (expiry.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(bool swapped,
                            CommitSnapshotExpiry(options.store, *target, *expiry));
    if (!swapped) return result;  // the table moved: the next pass stages again
    result.expired = expiry->expired;
    base = expiry->metadata_location;
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<StagedManifestMerge> merge,
                          StageManifestMerge(options.deep_storage, options.scratch_dir, *target,
                                             *base, options.manifests, now));
  if (!merge.has_value()) return result;
  SLUICE_ASSIGN_OR_RETURN(bool swapped, CommitManifestMerge(options.store, *target, *merge));
  if (swapped) {
    result.manifests_replaced = merge->manifests_replaced;
    result.manifests_created = merge->manifests_created;
  }
  return result;
}

}  // namespace sluice::supervisor
