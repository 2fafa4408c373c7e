// A rewrite-manifests snapshot (Iceberg's rewrite_manifests action, operation
// "replace" with no data change): when the current snapshot's data manifests
// pile up (every append adds one, every compaction's replace one more), the
// small ones are merged into manifests of at most `target_size_bytes`, so a
// reader plans a scan from a few manifests instead of hundreds.
//
// StageManifestRewrite works on the current metadata: when the current
// snapshot has at least `min_count_to_merge` data manifests of the table's
// default partition spec smaller than `target_size_bytes`, they are merged
// in the manifest list's order into groups of at most that size (a group of
// one is left as it is); each merged manifest keeps every live entry as
// EXISTING with its own snapshot id and sequence numbers, so readers see the
// same data files with the same sequence numbers. Delete manifests, manifests
// of other specs and large ones are carried over as they are. The snapshot
// adds and removes no data file: its summary says so (added/deleted files
// and records 0, totals unchanged) with manifests-created, -replaced and
// -kept and entries-processed as Iceberg's writers record them.
//
// Nothing is stored or swapped here: the caller stores the files, then
// compares-and-swaps the catalog pointer; when another writer won, it stages
// again on the new metadata (or leaves it to the next upkeep pass).
#ifndef SLUICE_ICEBERG_REWRITE_MANIFESTS_H_
#define SLUICE_ICEBERG_REWRITE_MANIFESTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "iceberg/replace_snapshot.h"

namespace sluice {
namespace iceberg {

// Iceberg's commit.manifest.min-count-to-merge and
// commit.manifest.target-size-bytes defaults.
inline constexpr int64_t kDefaultMinManifestsToMerge = 100;
inline constexpr int64_t kDefaultManifestTargetBytes = int64_t{8} << 20;

struct RewriteManifestsOptions {
  int64_t snapshot_id = 0;  // non-negative, new in the table
  int64_t timestamp_ms = 0;
  int64_t min_count_to_merge = kDefaultMinManifestsToMerge;
  int64_t target_size_bytes = kDefaultManifestTargetBytes;
  // Merged manifests are written as <manifest_path_stem>-<i>.avro.
  std::string manifest_path_stem;
  std::string manifest_list_path;
  std::map<std::string, std::string> summary;  // extra entries
  std::optional<std::string> previous_metadata_location;
};

struct StagedManifestRewrite {
  // What to store before the swap, as (uri, bytes): the merged manifests,
  // then the manifest list.
  std::vector<std::pair<std::string, std::string>> files;
  std::string metadata_json;
  int64_t manifests_replaced = 0;
  int64_t manifests_created = 0;
  int64_t manifests_kept = 0;
  int64_t entries = 0;  // live entries carried into the merged manifests
};

// nullopt when there is nothing to merge (no snapshot, or fewer small
// manifests than min_count_to_merge). INVALID_ARGUMENT for options out of
// range (min_count_to_merge < 2, target_size_bytes < 1); the library's
// errors for unreadable manifests; RESOURCE_EXHAUSTED beyond the limits of
// iceberg/limits.h.
absl::StatusOr<std::optional<StagedManifestRewrite>> StageManifestRewrite(
    absl::string_view metadata_json, const RewriteManifestsOptions& options,
    const TableFileLoader& load);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_REWRITE_MANIFESTS_H_
