// Upkeep of a datasource's Iceberg table (docs/iceberg.md, "Compaction and
// table upkeep"): snapshot expiry. Compaction's replace snapshots leave the
// replaced data files referenced by the older snapshots (time travel); once
// those snapshots are past the retention and not among the newest of the
// current chain, a new metadata document without them
// (iceberg/expire_snapshots.h) is staged and swapped in with the catalog's
// compare-and-swap; the orphan sweeper (supervisor/iceberg_orphan_sweeper.h)
// then removes, after its safety age, the files only they referenced:
// manifest lists, manifests, and data files that replaces removed (as long
// as a live manifest still names a DELETED entry, the file stays: it is
// still referenced).
//
// The caller holds the table (IcebergTableLocks::Publishing) from staging
// to the end of the commit, as a publish does.
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
#include "supervisor/iceberg_commit.h"
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

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_TABLE_UPKEEP_H_
