// In-memory state of a stream supervisor's task groups: one generation of
// replicas reading a set of partitions from the same start offsets, with the
// group's checkpoint list. Owned and touched only by the stream supervisor's
// loop thread; persisted in the metadata store as it changes.
#ifndef SLUICE_SUPERVISOR_TASK_GROUP_H_
#define SLUICE_SUPERVISOR_TASK_GROUP_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/offsets.h"
#include "sluice/v1/task.pb.h"
#include "supervisor/pauseless_margin.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct TaskInfo {
  std::string task_id;
  std::string worker_id;
  // The supervisor's view: the last reported state, or what it decided
  // (FAILED when it killed the task or lost its worker).
  v1::TaskState state = v1::TASK_STATE_NOT_STARTED;
  // The last status the worker reported (empty until then).
  v1::TaskStatus status;
  bool reported = false;
  absl::Time created_at;
  // RunTask was sent and not answered yet (it runs off the loop): the
  // worker may not have the task, or may be frozen. No RPC goes to it
  // until the answer; a checkpoint round gives it up instead (it would miss
  // the new checkpoint), and its replacement starts with it.
  bool starting = false;
};

// What the checkpoint rounds of a group remember between rounds
// (checkpoint_coordinator.h, pauseless_round.h, checkpoint_move_back.h);
// nothing else reads it.
struct CheckpointRoundState {
  // The maximum offsets the last round read and when, for the read rate;
  // how long that round took from its first offset read to its last
  // SetEndOffsets answer.
  OffsetObservation observed;
  absl::Duration last_round_window = absl::ZeroDuration();
  // Rounds to run classic (paused) without trying pauseless first: set when
  // the read rate needed a margin larger than fits (a fast stream with small
  // segments), so that those rounds do not pay the offset reads for nothing.
  int classic_rounds_ahead = 0;
  // When the latest checkpoint was recorded (this supervisor's clock; when
  // it recovered the group after a restart), for moving a stalled one back.
  absl::Time latest_checkpoint_at = absl::InfinitePast();
  // Checkpoints moved back, sequence id -> the offsets they had: a replica
  // asking with such a start before it learned the move is answered by the
  // round that moved it, not replaced.
  std::map<int32_t, OffsetMap> moved_from;
};

struct Group {
  int32_t group_id = 0;
  std::string base_sequence_name;
  OffsetMap start_offsets;
  // Sequence id -> start offsets. Never empty; the last entry is the open
  // sequence.
  std::map<int32_t, OffsetMap> checkpoints;
  int64_t min_message_time_ms = 0;
  int64_t max_message_time_ms = 0;
  absl::Time created_at;
  int64_t spec_version = 0;
  std::map<std::string, TaskInfo> tasks;
  // Tasks that ended and were dropped, not yet replaced (for the logs).
  int tasks_lost = 0;
  // Touched only by the checkpoint rounds (checkpoint_coordinator.h).
  CheckpointRoundState rounds;
  // Publishing groups only.
  OffsetMap end_offsets;
  absl::Time completion_deadline = absl::InfiniteFuture();

  int32_t latest_sequence_id() const { return checkpoints.rbegin()->first; }
  const OffsetMap& latest_checkpoint() const { return checkpoints.rbegin()->second; }
  std::vector<int32_t> partitions() const {
    std::vector<int32_t> out;
    for (const auto& [p, o] : start_offsets) out.push_back(p);
    return out;
  }
  bool HasPartition(int32_t partition) const { return start_offsets.count(partition) > 0; }
};

// The groups of a stream supervisor: owned by its loop, lent to the classes
// that act on them (roll_over.h, group_creation.h).
struct TaskGroups {
  // Reading groups by id.
  std::map<int32_t, Group> reading;
  // Publishing groups by id, oldest first.
  std::map<int32_t, std::vector<Group>> publishing;
  // Start offsets for the next group of a partition (end of a finalized group).
  OffsetMap next_offsets;
};

inline bool IsLive(const TaskInfo& task) { return !IsTerminal(task.state); }

inline Group GroupFromRecord(const TaskGroupRecord& record) {
  Group g;
  g.group_id = record.group_id;
  g.base_sequence_name = record.base_sequence_name;
  g.start_offsets = record.start_offsets;
  g.checkpoints = record.checkpoints;
  if (g.checkpoints.empty()) g.checkpoints[0] = record.start_offsets;
  g.min_message_time_ms = record.min_message_time_ms;
  g.max_message_time_ms = record.max_message_time_ms;
  g.created_at = absl::FromUnixMillis(record.created_at_ms);
  g.spec_version = record.spec_version;
  g.end_offsets = record.end_offsets;
  if (record.state == GroupState::kPublishing) {
    g.completion_deadline = absl::FromUnixMillis(record.completion_deadline_ms);
  }
  return g;
}

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TASK_GROUP_H_
