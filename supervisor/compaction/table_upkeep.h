// Upkeep of a datasource's Iceberg table (docs/iceberg.md, "Compaction and
// table upkeep"), run by the compaction scheduler after each pass:
//  - snapshot expiry. Compaction's replace snapshots leave the replaced data
//    files referenced by the older snapshots (time travel); once those
//    snapshots are past the retention and not among the newest of the
//    current chain, a new metadata document without them
//    (iceberg/expire_snapshots.h) is staged and swapped in with the
//    catalog's compare-and-swap; the orphan sweeper
//    (supervisor/iceberg/iceberg_orphan_sweeper.h) then removes, after its safety
//    age, the files only they referenced: manifest lists, manifests, and
//    data files that replaces removed (as long as a live manifest still
//    names a DELETED entry, the file stays: it is still referenced);
//  - manifest rewriting. Every append adds a manifest and every compaction
//    one more; once the current snapshot holds kMinManifestsToMerge small
//    ones, they are merged (iceberg/rewrite_manifests.h) in a
//    rewrite-manifests snapshot (operation replace, no data change).
//
// The stage/commit pairs leave the holding to the caller (the table held
// with IcebergTableLocks::Publishing from staging to the end of the commit,
// as a publish does); UpkeepIcebergTable does both steps, holding it.
//
//   auto staged = StageSnapshotExpiry(deep, scratch, target, location, policy, now);
//   if (staged.ok() && staged->has_value()) {
//     absl::StatusOr<bool> swapped = CommitSnapshotExpiry(store, target, **staged);
//     // false: the table moved (a publish, a compaction): the next pass retries
//   }
#ifndef SLUICE_SUPERVISOR_COMPACTION_TABLE_UPKEEP_H_
#define SLUICE_SUPERVISOR_COMPACTION_TABLE_UPKEEP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/spec.h"
#include "iceberg/rewrite_manifests.h"
#include "sluice/v1/spec.pb.h"
#include "supervisor/iceberg/iceberg_commit.h"
#include "supervisor/iceberg/iceberg_table_locks.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct SnapshotExpiryPolicy {
  // Snapshots younger than this stay.
  absl::Duration retention = absl::Hours(24 * 7);
  // Snapshots of the current chain that stay whatever their age, the
  // current one included (at least 1).
  int32_t keep = 10;
};

// The spec's compaction config's snapshotRetention and snapshotsToKeep.
SnapshotExpiryPolicy ExpiryPolicyOf(const CompactionPolicy& policy);

struct StagedSnapshotExpiry {
  std::string base;               // the document expiry was computed on
  std::string metadata_location;  // the staged document
  std::vector<int64_t> expired;   // snapshot ids
};

// Reads the document at `base_location`, and when snapshots expire under
// `policy` at `now`, stores the next document (named as every metadata
// document of the table, NNNNN-<uuid of its bytes>.metadata.json; a retry
// writes the same name) and returns it; nullopt when nothing expires.
// Errors: the document's (INVALID_ARGUMENT), storage errors (UNAVAILABLE);
// nothing is visible until the swap.
absl::StatusOr<std::optional<StagedSnapshotExpiry>> StageSnapshotExpiry(
    DeepStorage* storage, const std::string& scratch_dir, const IcebergTarget& target,
    const std::string& base_location, const SnapshotExpiryPolicy& policy, absl::Time now);

// Swaps the catalog from staged.base to the staged document in one store
// transaction. False: the table moved since (nothing changed; stage again
// on the new location, e.g. at the next pass).
absl::StatusOr<bool> CommitSnapshotExpiry(MetadataStore* store, const IcebergTarget& target,
                                          const StagedSnapshotExpiry& staged);

struct ManifestRewritePolicy {
  // Small data manifests the current snapshot holds before they are merged
  // (Iceberg's commit.manifest.min-count-to-merge default).
  int64_t min_count_to_merge = iceberg::kDefaultMinManifestsToMerge;
  // Manifests at or above this size are kept; merged ones stay under it
  // (commit.manifest.target-size-bytes default).
  int64_t target_size_bytes = iceberg::kDefaultManifestTargetBytes;
};

struct StagedManifestMerge {
  std::string base;               // the document the rewrite was staged on
  std::string metadata_location;  // the staged document
  int64_t snapshot_id = 0;
  int64_t manifests_replaced = 0;
  int64_t manifests_created = 0;
};

// Reads the document at `base_location`, and when its current snapshot has
// piled up small manifests under `policy`, stores the merged manifests,
// the manifest list and the next document (names a function of `base` and
// the bytes: a retry writes the same paths) and returns it; nullopt when
// nothing is to merge. Errors as StageSnapshotExpiry's; nothing is visible
// until the swap.
absl::StatusOr<std::optional<StagedManifestMerge>> StageManifestMerge(
    DeepStorage* storage, const std::string& scratch_dir, const IcebergTarget& target,
    const std::string& base_location, const ManifestRewritePolicy& policy, absl::Time now);

// As CommitSnapshotExpiry, for a staged manifest merge.
absl::StatusOr<bool> CommitManifestMerge(MetadataStore* store, const IcebergTarget& target,
                                         const StagedManifestMerge& staged);

struct TableUpkeepOptions {
  MetadataStore* store = nullptr;
  DeepStorage* deep_storage = nullptr;
  std::string scratch_dir;
  // The process's table holds (shared with the publisher and the sweeper).
  IcebergTableLocks* locks = nullptr;
  ManifestRewritePolicy manifests;
};

struct TableUpkeepResult {
  std::vector<int64_t> expired;  // snapshot ids
  int64_t manifests_replaced = 0;
  int64_t manifests_created = 0;
};

// One upkeep pass over the spec's table (none: nothing done): snapshot
// expiry under the spec's compaction config, then manifest merging, each
// staged on the catalog's current document and swapped in while the table
// is held; a step whose swap finds the table moved is left for the next
// pass (counted as not done).
absl::StatusOr<TableUpkeepResult> UpkeepIcebergTable(const TableUpkeepOptions& options,
                                                     const v1::SupervisorSpec& spec,
                                                     absl::Time now);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_TABLE_UPKEEP_H_
