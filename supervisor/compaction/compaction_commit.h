// The commit of one interval's compaction: in ONE metadata-store
// transaction, the compacted segments replace exactly the segments they
// were made from (StoreTxn::ReplaceSegments) and, for a datasource with an
// Iceberg table, the table moves to the metadata that replaces the same
// rows' data files (StoreTxn::SwapIcebergMetadataLocation). Either both
// happen or nothing changes.
#ifndef SLUICE_SUPERVISOR_COMPACTION_COMPACTION_COMMIT_H_
#define SLUICE_SUPERVISOR_COMPACTION_COMPACTION_COMMIT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "supervisor/compaction/compacted_segment.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

// The Iceberg side of a compaction: the catalog's compare-and-swap from the
// metadata the replace was staged on to the staged one.
struct IcebergSwap {
  std::string table_namespace;
  std::string table_name;
  // The metadata location the replace was staged on (nullopt: no table yet).
  std::optional<std::string> expected;
  // The staged metadata location.
  std::string next;
  // The replace snapshot the staged metadata adds (CompactionRecord).
  int64_t snapshot_id = 0;
};

enum class CompactionCommitOutcome {
  kCommitted,
  // A replaced segment is no longer used (another compaction replaced it,
  // or it was dropped): plan again.
  kInputLost,
  // The Iceberg table no longer points at `expected`: stage again on the
  // current metadata and retry.
  kTableMoved,
};

struct CompactionCommitResult {
  CompactionCommitOutcome outcome = CompactionCommitOutcome::kCommitted;
  // Why it was not committed (empty when committed).
  std::string detail;
};

// The task id the compacted segments are recorded as published by.
inline constexpr char kCompactionPublisher[] = "supervisor-compaction";

// Errors other than the two outcomes (the store's, INVALID_ARGUMENT or
// ALREADY_EXISTS from ReplaceSegments) are returned as statuses; nothing
// changed then either.
absl::StatusOr<CompactionCommitResult> CommitCompaction(MetadataStore* store,
                                                        const IntervalCompaction& compaction,
                                                        const std::optional<IcebergSwap>& iceberg,
                                                        absl::Time now);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_COMPACTION_COMMIT_H_
