// Moving a checkpoint back (docs/protocol.md "Moving a checkpoint back").
//
// A pauseless round may end a sequence past the records that exist: the
// margin covers what the stream is expected to add while the round runs, so
// that replicas caught up with a live stream never stop. If those records
// do not come (the producer stopped), no replica can close the sequence.
// A paused round then moves the latest checkpoint back, on each partition no
// replica reached, to what the replicas read: the sequence ends there, and
// the next one starts there. It is safe because
// - every live replica is paused at or before the new boundary, so none has
//   routed a record at or past it into the sequence it shortens (a task
//   checks that again and refuses otherwise: task/sequences.h);
// - the sequence it shortens is not committed (checked in the same
//   transaction that moves the checkpoint), and a publish of it with the old
//   end is refused once the move is recorded (the publish transaction
//   compares a sequence's range with the recorded checkpoints);
// - it is recorded before any replica learns it, as every checkpoint is.
#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"
#include "supervisor/naming.h"
#include "supervisor/stream_supervisor.h"

namespace sluice::supervisor {

bool StreamSupervisor::PastKnownRecords(int32_t partition, int64_t offset) const {
  if (offset == kEndOfPartition) return false;
  const auto mark = watermarks_.find(partition);
  return mark != watermarks_.end() && offset > mark->second.latest;
}

std::optional<int32_t> StreamSupervisor::PartitionWaitingForRecords(const Group& group,
                                                                    const OffsetMap& read) const {
  if (group.checkpoints.size() < 2) return std::nullopt;
  for (const auto& [p, offset] : group.latest_checkpoint()) {
    const auto it = read.find(p);
    if (PastKnownRecords(p, offset) && (it == read.end() || it->second < offset)) return p;
  }
  return std::nullopt;
}

bool StreamSupervisor::MoveCheckpointBack(Group& group, const OffsetMap& read_max,
                                          const std::string& what) {
  if (group.checkpoints.size() < 2) return false;
  const int32_t latest_id = group.latest_sequence_id();
  const OffsetMap& latest = group.latest_checkpoint();
  const OffsetMap& previous = std::prev(group.checkpoints.end(), 2)->second;
  OffsetMap moved = latest;
  for (auto& [p, offset] : moved) {
    const auto read = read_max.find(p);
    if (read == read_max.end() || read->second >= offset || !PastKnownRecords(p, offset)) continue;
    const auto start = previous.find(p);
    offset = std::max(read->second, start == previous.end() ? read->second : start->second);
  }
  if (moved == latest) return false;
  const std::string shortened = SequenceName(group.base_sequence_name, latest_id - 1);
  absl::Status recorded = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(auto committed, txn.CommittedSequence(datasource_, shortened));
    if (committed) {
      return absl::FailedPreconditionError(
          absl::StrCat("sequence ", shortened, " is already committed (by task ",
                       committed->task_id(), ")"));
    }
    SLUICE_RETURN_IF_ERROR(txn.RemoveLatestCheckpoint(group.base_sequence_name, latest_id));
    return txn.AppendCheckpoint(group.base_sequence_name, latest_id, moved,
                                options_.clock->NowMs());
  });
  if (!recorded.ok()) {
    LOG(WARNING) << Prefix() << what << ": cannot move checkpoint " << latest_id << " "
                 << FormatOffsets(latest) << " back to " << FormatOffsets(moved) << ": "
                 << recorded << "; the replicas read up to it";
    return false;
  }
  LOG(INFO) << Prefix() << what << ": no replica reached checkpoint " << latest_id << " "
            << FormatOffsets(latest) << " (the records it waits for do not exist yet; read "
            << FormatOffsets(read_max) << "): moved back to " << FormatOffsets(moved)
            << ", where sequence " << shortened << " now ends";
  group.moved_from[latest_id] = latest;
  group.checkpoints[latest_id] = moved;
  group.latest_checkpoint_at = options_.clock->Now();
  CountCheckpointRound(metrics::kSupervisorCheckpointsMovedBack);
  PublishView();
  return true;
}

void StreamSupervisor::MoveStalledCheckpoints() {
  const absl::Time now = options_.clock->Now();
  std::vector<int32_t> stalled;
  for (auto& [id, group] : active_) {
    if (group.checkpoints.size() < 2) continue;
    if (group.latest_checkpoint_at == absl::InfinitePast()) {
      // Recovered after a restart: counted from now.
      group.latest_checkpoint_at = now;
      continue;
    }
    if (now - group.latest_checkpoint_at < options_.pauseless_margin.stalled_checkpoint_after) {
      continue;
    }
    // The replicas' last reported offsets.
    OffsetMap read_to;
    for (const auto& [task_id, task] : group.tasks) {
      if (!IsLive(task)) continue;
      read_to = MaxOffsets(read_to,
                           Restrict(FromProto(task.status.current_offsets()), group.start_offsets));
    }
    if (PartitionWaitingForRecords(group, read_to)) stalled.push_back(id);
  }
  for (int32_t id : stalled) {
    Group& group = active_.at(id);
    LOG(INFO) << Prefix() << "group " << id << " (" << group.base_sequence_name
              << "): checkpoint " << group.latest_sequence_id() << " "
              << FormatOffsets(group.latest_checkpoint())
              << " waits for records past the latest offsets known since "
              << absl::FormatDuration(now - group.latest_checkpoint_at)
              << "; pausing the replicas to move it back";
    absl::StatusOr<OffsetMap> round = CheckpointRound(group, /*finish=*/false,
                                                      /*move_back_only=*/true);
    // Not again for this long, moved or not.
    group.latest_checkpoint_at = now;
    if (!round.ok()) {
      RecordError(Annotate(round.status(), absl::StrCat("moving back the checkpoint of group ", id)));
    }
  }
}

}  // namespace sluice::supervisor
