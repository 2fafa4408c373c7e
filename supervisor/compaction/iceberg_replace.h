// The Iceberg side of an interval's compaction (docs/iceberg.md,
// "Compaction and table upkeep"): for a datasource whose spec names an
// Iceberg table, a replace snapshot that removes exactly the data files of
// the replaced segments and adds the compacted segments' files, staged in
// deep storage for the compaction's commit transaction to swap in
// (StoreTxn::SwapIcebergMetadataLocation from `base` to the staged
// document, beside StoreTxn::ReplaceSegments).
//
// On the document at `base`: the replaced segments' data files are found in
// the current snapshot's manifests by the segment-id digest of their names
// (supervisor/iceberg/iceberg_commit.h, IcebergDataFileKey); each output segment is
// written as Parquet data files with the table's current schema and
// partition spec (as an append writes a segment), pushed idempotently and
// read back; iceberg::StageReplace writes the manifests, the manifest list
// and the next metadata document (summary sluice.datasource and
// sluice.rewritten.kafka.<topic>.<partition> from the outputs' provenance);
// everything is stored under names that are a function of what it holds, so
// a retry writes the same paths. Nothing is visible until the swap. As for a
// publish, the caller holds the table (IcebergTableLocks::Publishing on
// target.location_key) from before staging until its commit transaction
// ended, so the orphan sweeper never removes staged files under it.
//
// Staging again after a publish won the race is cheap: what does not depend
// on the base is kept in an IcebergReplaceReuse across the attempts of one
// compaction. The outputs' data files are written once and reused while the
// table's schema and partition spec are those they were written with (an
// append that evolved the schema makes the next attempt write them again);
// the table's files read (manifest lists, manifests, data files, immutable
// once written) are kept up to kMaxIcebergReplaceReuseBytes, so the next
// attempt reads only what the winning appends added and stages the replace
// on top of them.
//
// When a replaced segment has no live data file in the table (published
// before the spec named the table, or to another table; or its files were
// rewritten by another engine), the table does not hold the interval's rows
// as the segments do, and no replace can swap them: nothing is staged, the
// result says so (`metadata_location` nullopt, `skipped` the reason), and
// the native compaction goes ahead alone; the table keeps that interval's
// files as they are.
#ifndef SLUICE_SUPERVISOR_COMPACTION_ICEBERG_REPLACE_H_
#define SLUICE_SUPERVISOR_COMPACTION_ICEBERG_REPLACE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/deep_storage.h"
#include "iceberg/manifest_writer.h"
#include "supervisor/compaction/compacted_segment.h"
#include "supervisor/iceberg/iceberg_commit.h"

namespace sluice::supervisor {

struct IcebergReplaceOptions {
  // The snapshot's timestamp (the supervisor's clock).
  int64_t now_ms = 0;
  // Rollup: the spec's count metric. Compaction may combine rows, so the
  // replace then conserves the sum of this column (the removed files' and
  // the added files' sums must each equal the outputs'), not the row count.
  // Unset: the row counts must be equal.
  std::optional<std::string> count_column;
};

struct StagedIcebergReplace {
  // The metadata location the replace was planned on.
  std::string base;
  // Where the staged metadata document is; nullopt: nothing staged (see
  // `skipped`), the commit swaps nothing.
  std::optional<std::string> metadata_location;
  std::string skipped;  // why nothing was staged; empty when staged
  int64_t snapshot_id = 0;
  int64_t removed_files = 0;
  int64_t added_files = 0;
  int64_t removed_records = 0;
  int64_t added_records = 0;
};

// Bytes of table files an IcebergReplaceReuse keeps at most (files beyond
// are read again at the next attempt).
inline constexpr int64_t kMaxIcebergReplaceReuseBytes = int64_t{256} << 20;

// What one compaction's replace keeps from one staging attempt to the next
// (see above). Empty at first; one per compaction, never shared between
// compactions or threads.
struct IcebergReplaceReuse {
  // The table location, schema and partition spec (Iceberg JSON) `added`
  // was written for; empty: nothing written yet.
  std::string written_for;
  std::vector<iceberg::ManifestEntry> added;
  std::vector<std::pair<std::string, std::string>> stored;  // uri, SHA-256
  // The count column and its sum over the outputs (rollup only).
  std::optional<std::pair<std::string, int64_t>> count_sum;
  // The count column's sum per data file, as read (rollup only).
  std::map<std::string, int64_t> column_sums;
  // Table files read, by URI, and their total size.
  std::map<std::string, std::string> files;
  int64_t file_bytes = 0;
  // Counters (tests, logs): data file sets written, table files read.
  int data_file_writes = 0;
  int64_t table_file_reads = 0;
};

// The snapshot id of the replace of `compaction`'s outputs: positive, the
// same for every attempt.
int64_t IcebergReplaceSnapshotId(const IntervalCompaction& compaction);

// Errors (each naming the table): FAILED_PRECONDITION when the rows are not
// conserved (the table's files of the replaced segments hold other rows, or
// another sum of `count_column`, than the outputs) or a file at a staged
// name holds other bytes (never overwritten); the writers' INVALID_ARGUMENT
// when the outputs bring a column the table's current schema lacks;
// INVALID_ARGUMENT for a compaction without replaced segments or outputs;
// ABORTED (as iceberg::StageReplace says it: a file to remove no longer
// live) left as ABORTED for the caller to plan again; UNAVAILABLE for
// storage errors. Nothing is visible until the swap, whatever the error.
// The table moving after staging is the swap's to find: stage again on the
// catalog's new location (an append's files stay), with the same `reuse`
// (null: nothing kept).
absl::StatusOr<StagedIcebergReplace> StageIcebergReplace(DeepStorage* storage,
                                                         const std::string& scratch_dir,
                                                         const IcebergTarget& target,
                                                         const std::string& base_metadata_location,
                                                         const IntervalCompaction& compaction,
                                                         const IcebergReplaceOptions& options,
                                                         IcebergReplaceReuse* reuse = nullptr);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_ICEBERG_REPLACE_H_
