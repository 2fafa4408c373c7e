#include "supervisor/compaction/table_upkeep.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "iceberg/expire_snapshots.h"

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

absl::StatusOr<bool> CommitSnapshotExpiry(MetadataStore* store, const IcebergTarget& target,
                                          const StagedSnapshotExpiry& staged) {
  bool swapped = false;
  SLUICE_RETURN_IF_ERROR(store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(swapped, txn.SwapIcebergMetadataLocation(
                                         target.table_namespace, target.table_name, staged.base,
                                         staged.metadata_location));
    return absl::OkStatus();
  }));
  return swapped;
}

}  // namespace sluice::supervisor
