#include "supervisor/compaction/compaction_commit.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

absl::StatusOr<CompactionCommitResult> CommitCompaction(MetadataStore* store,
                                                        const IntervalCompaction& compaction,
                                                        const std::optional<IcebergSwap>& iceberg,
                                                        absl::Time now) {
  std::vector<std::string> replaced_ids;
  for (const v1::SegmentDescriptor& s : compaction.replaced) replaced_ids.push_back(s.id());
  std::vector<v1::SegmentDescriptor> segments;
  for (const CompactedSegment& out : compaction.outputs) {
    v1::SegmentDescriptor d = out.descriptor;
    d.set_sha256(out.sha256);
    segments.push_back(std::move(d));
  }
  const int64_t now_ms = absl::ToUnixMillis(now);
  CompactionCommitResult result;
  bool input_lost = false, table_moved = false;
  const absl::Status status = store->InRetriedTransaction([&](StoreTxn& txn) -> absl::Status {
    input_lost = table_moved = false;
    result.detail.clear();
    absl::Status replaced = txn.ReplaceSegments(compaction.datasource, replaced_ids, segments,
                                                kCompactionPublisher, now_ms);
    if (absl::IsAborted(replaced) && !IsSerializationFailure(replaced)) {
      input_lost = true;
      result.detail = std::string(replaced.message());
    }
    SLUICE_RETURN_IF_ERROR(replaced);
    if (iceberg) {
      SLUICE_ASSIGN_OR_RETURN(bool swapped, txn.SwapIcebergMetadataLocation(
                                                iceberg->table_namespace, iceberg->table_name,
                                                iceberg->expected, iceberg->next));
      if (!swapped) {
        table_moved = true;
        result.detail = absl::StrCat("Iceberg table ", iceberg->table_namespace, ".",
                                     iceberg->table_name, " moved from ",
                                     iceberg->expected.value_or("(none)"),
                                     " before the compaction's commit; nothing was replaced");
        return absl::AbortedError(result.detail);  // rolls the replacement back
      }
    }
    return absl::OkStatus();
  });
  if (input_lost) {
    result.outcome = CompactionCommitOutcome::kInputLost;
    return result;
  }
  if (table_moved) {
    result.outcome = CompactionCommitOutcome::kTableMoved;
    return result;
  }
  SLUICE_RETURN_IF_ERROR(status);
  result.outcome = CompactionCommitOutcome::kCommitted;
  return result;
}

}  // namespace sluice::supervisor
