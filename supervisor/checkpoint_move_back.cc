// Moving a checkpoint back: see checkpoint_move_back.h.
#include "supervisor/checkpoint_move_back.h"

#include <glog/logging.h>

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"
#include "supervisor/naming.h"

namespace sluice::supervisor {

bool PastKnownRecords(const std::map<int32_t, PartitionWatermarks>& marks, int32_t partition,
                      int64_t offset) {
  if (offset == kEndOfPartition) return false;
  const auto mark = marks.find(partition);
  return mark != marks.end() && offset > mark->second.latest;
}

std::optional<int32_t> PartitionWaitingForRecords(
    const std::map<int32_t, PartitionWatermarks>& marks, const Group& group,
    const OffsetMap& read) {
  if (group.checkpoints.size() < 2) return std::nullopt;
  for (const auto& [p, offset] : group.latest_checkpoint()) {
    const auto it = read.find(p);
    if (PastKnownRecords(marks, p, offset) && (it == read.end() || it->second < offset)) return p;
  }
  return std::nullopt;
}

CheckpointMoveBack::CheckpointMoveBack(CheckpointContext context) : context_(std::move(context)) {}

bool CheckpointMoveBack::MoveBack(Group& group, const OffsetMap& read_max,
                                  const std::string& what) {
  if (group.checkpoints.size() < 2) return false;
  const int32_t latest_id = group.latest_sequence_id();
  const OffsetMap& latest = group.latest_checkpoint();
  const OffsetMap& previous = std::prev(group.checkpoints.end(), 2)->second;
  OffsetMap moved = latest;
  for (auto& [p, offset] : moved) {
    const auto read = read_max.find(p);
    if (read == read_max.end() || read->second >= offset ||
        !PastKnownRecords(*context_.watermarks, p, offset)) {
      continue;
    }
    const auto start = previous.find(p);
    offset = std::max(read->second, start == previous.end() ? read->second : start->second);
  }
  if (moved == latest) return false;
  const std::string shortened = SequenceName(group.base_sequence_name, latest_id - 1);
  absl::Status recorded = context_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(auto committed, txn.CommittedSequence(context_.datasource, shortened));
    if (committed) {
      return absl::FailedPreconditionError(absl::StrCat(
          "sequence ", shortened, " is already committed (by task ", committed->task_id(), ")"));
    }
    SLUICE_RETURN_IF_ERROR(txn.RemoveLatestCheckpoint(group.base_sequence_name, latest_id));
    return txn.AppendCheckpoint(group.base_sequence_name, latest_id, moved,
                                context_.clock->NowMs());
  });
  if (!recorded.ok()) {
    LOG(WARNING) << context_.Prefix() << what << ": cannot move checkpoint " << latest_id << " "
                 << FormatOffsets(latest) << " back to " << FormatOffsets(moved) << ": " << recorded
                 << "; the replicas read up to it";
    return false;
  }
  LOG(INFO) << context_.Prefix() << what << ": no replica reached checkpoint " << latest_id << " "
            << FormatOffsets(latest) << " (the records it waits for do not exist yet; read "
            << FormatOffsets(read_max) << "): moved back to " << FormatOffsets(moved)
            << ", where sequence " << shortened << " now ends";
  group.rounds.moved_from[latest_id] = latest;
  group.checkpoints[latest_id] = moved;
  group.rounds.latest_checkpoint_at = context_.clock->Now();
  context_.Count(metrics::kSupervisorCheckpointsMovedBack);
  context_.publish_view();
  return true;
}

}  // namespace sluice::supervisor
