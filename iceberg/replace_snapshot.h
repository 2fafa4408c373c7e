// A replace snapshot (Iceberg operation "replace", the rewrite-files
// action, e.g. a compaction): data files of the current snapshot are
// removed and files holding the same rows are added, in one snapshot.
// StageReplace writes, on the current metadata: a manifest of the added
// files (ADDED), for each manifest of the current snapshot that holds a
// removed file a rewritten manifest where those entries are DELETED (with
// the new snapshot id) and the others EXISTING (sequence numbers kept),
// the manifest list (untouched manifests carried over as they are, those
// left without live files by an earlier rewrite dropped) and the
// next metadata document (summary operation=replace, added/deleted files
// and records, totals, sluice.rewritten.kafka.<topic>.<partition>).
// Nothing is stored or swapped here: the caller stores the files, then
// compares-and-swaps the catalog pointer as for an append; when another
// writer won, it stages again on that writer's metadata (an append keeps
// its files; a file another rewrite removed meanwhile is a conflict).
#ifndef SLUICE_ICEBERG_REPLACE_SNAPSHOT_H_
#define SLUICE_ICEBERG_REPLACE_SNAPSHOT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "iceberg/manifest_writer.h"

namespace sluice {
namespace iceberg {

// Rows combined by rollup: the added files hold fewer rows than the removed
// ones, and what must be conserved is the sum of the count column.
struct RolledUpCount {
  std::string count_column;  // a top-level integer column
  // The sum of count_column over the removed files (what the rewrite read);
  // the removed files and the added files must each sum to it.
  int64_t expected_count = 0;
  // Sums already read, by data file path (data files never change once
  // written); filled by StageReplace. Null: every file is read.
  std::map<std::string, int64_t>* known_sums = nullptr;
};

struct ReplaceFiles {
  int64_t snapshot_id = 0;  // non-negative, new in the table
  int64_t timestamp_ms = 0;
  // Data file paths (as the manifests spell them), each live in the
  // current snapshot.
  std::vector<std::string> remove;
  // The files replacing them, already stored, written with the table's
  // current schema and partition spec (PlanAppend(metadata, {})).
  std::vector<ManifestEntry> add;
  // Where the added files' manifest goes; rewritten manifests go next to it
  // as <manifest_path without ".avro">-r<i>.avro.
  std::string manifest_path;
  std::string manifest_list_path;
  // The Kafka offsets [start, end) the added files hold rows of, per topic
  // and partition: sluice.rewritten.kafka.<topic>.<partition> =
  // "<start>-<end>[,<start>-<end>...]". Records the rewrite, claims no new
  // records.
  std::map<std::pair<std::string, int32_t>, std::vector<std::pair<int64_t, int64_t>>>
      rewritten_kafka_ranges;
  // Extra summary entries (e.g. sluice.datasource).
  std::map<std::string, std::string> summary;
  std::optional<RolledUpCount> rolled_up;
  // Where the current metadata document is stored (metadata-log).
  std::optional<std::string> previous_metadata_location;
};

// Reads a file of the table (a manifest list, a manifest, a data file) by
// the URI the metadata names.
using TableFileLoader = std::function<absl::StatusOr<std::string>(const std::string& uri)>;

struct StagedReplace {
  // What to store before the swap, as (uri, bytes): the added files'
  // manifest, the rewritten manifests, then the manifest list.
  std::vector<std::pair<std::string, std::string>> files;
  std::string metadata_json;  // the next metadata document
  int64_t removed_files = 0;
  int64_t removed_records = 0;
  int64_t added_records = 0;
  int64_t rewritten_manifests = 0;
  int64_t carried_manifests = 0;
};

// Errors: ABORTED "conflict: file X is no longer in the table" when a file
// to remove is not live in the current snapshot (another rewrite removed
// it: plan again on the current metadata); FAILED_PRECONDITION when rows
// are not conserved (added records != removed records; with rolled_up, a
// count sum != expected_count) or when a removed file's manifest is of
// another partition spec than the table's default; INVALID_ARGUMENT for an empty or repeated
// list, an added path already in the table, a table without a snapshot;
// RESOURCE_EXHAUSTED past 100000 files to remove or add, or the summary
// limits (1000 properties, 64 KiB each); a loader error as it is.
absl::StatusOr<StagedReplace> StageReplace(absl::string_view metadata_json,
                                           const ReplaceFiles& replace,
                                           const TableFileLoader& load);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_REPLACE_SNAPSHOT_H_
