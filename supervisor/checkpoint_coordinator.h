// The checkpoint rounds of a stream supervisor (docs/protocol.md
// "Checkpoint round"): task requests checked against the reading groups,
// early handoffs, the round itself (pauseless first, pauseless_round.h;
// else pause -> max -> record -> SetEndOffsets, which also finalizes a group
// at roll-over), answers to stale requests, and moving back a checkpoint
// that waits for records that do not exist (checkpoint_move_back.h).
//
// The stream supervisor's loop calls it with the groups it acts on; what it
// needs besides comes through CheckpointContext (checkpoint_context.h).
// What it remembers per group between rounds travels with the group
// (Group::rounds, task_group.h). Loop only; not copyable.
#ifndef SLUICE_SUPERVISOR_CHECKPOINT_COORDINATOR_H_
#define SLUICE_SUPERVISOR_CHECKPOINT_COORDINATOR_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/offsets.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/checkpoint_context.h"
#include "supervisor/checkpoint_move_back.h"
#include "supervisor/pauseless_round.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

// The id of the checkpoint whose offsets equal `start`, newest first.
std::optional<int32_t> FindCheckpoint(const std::map<int32_t, OffsetMap>& checkpoints,
                                      const OffsetMap& start);

// What RPC threads know of the reading groups: group id -> base sequence
// name and checkpoints.
using ReadingCheckpoints = std::map<int32_t, std::pair<std::string, std::map<int32_t, OffsetMap>>>;

// The RPC side of a checkpoint request, judged on what RPC threads see
// (pure): `queue` says whether the loop must handle it (the request is for
// a reading group; its offsets may still match no checkpoint, and then the
// loop replaces the task).
struct CheckpointRequestAnswer {
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> response;
  bool queue = false;
};
CheckpointRequestAnswer AnswerCheckpointRequest(
    const std::string& datasource, bool recovered, const ReadingCheckpoints& reading,
    const std::set<std::string>& publishing,
    const v1::CheckpointDataSourceMetadataRequest& request);

class CheckpointCoordinator {
 public:
  explicit CheckpointCoordinator(CheckpointContext context);
  CheckpointCoordinator(const CheckpointCoordinator&) = delete;
  CheckpointCoordinator& operator=(const CheckpointCoordinator&) = delete;

  // A task's request to checkpoint its sequence, received at `received`
  // (for the latency metric), on the loop: a round for the latest sequence,
  // the agreed end for an earlier one, a kill for offsets matching no
  // checkpoint. `reading`: the reading groups by id.
  void HandleRequest(std::map<int32_t, Group>& reading,
                     const v1::CheckpointDataSourceMetadataRequest& request, absl::Time received);

  // Early handoff: a round now for each given reading group (empty: all).
  // INVALID_ARGUMENT for an id that is not a reading group (nothing done).
  absl::StatusOr<v1::HandoffTaskGroupsResponse> Handoff(std::map<int32_t, Group>& reading,
                                                        std::vector<int32_t> group_ids);

  // Pause all replicas, max of their offsets, record (finish=false),
  // SetEndOffsets on all; an incremental round (finish=false) tries the
  // pauseless one first. Returns the agreed offsets; an error when no
  // replica is left or the store failed (replicas are resumed, never left
  // paused). Replicas that fail a step are killed. finish=true: the final
  // end of the group (roll-over). move_back_only: a round that only moves
  // the latest checkpoint back; it records no new one.
  absl::StatusOr<OffsetMap> Round(Group& group, bool finish, bool move_back_only = false);

  // For the periodic run: each reading group whose latest checkpoint is
  // past the latest offsets known (the records it waits for do not exist)
  // and older than stalled_checkpoint_after gets a move-back round.
  void MoveStalledCheckpoints(std::map<int32_t, Group>& reading);

 private:
  // A request about `sequence_id`, already checkpointed: the task gets its
  // end offsets (without a pause while pauseless rounds are on).
  void AnswerStaleCheckpoint(Group& group, TaskInfo& task, int32_t sequence_id);

  const CheckpointContext context_;
  PauselessRound pauseless_;
  CheckpointMoveBack move_back_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_CHECKPOINT_COORDINATOR_H_
