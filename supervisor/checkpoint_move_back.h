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
#ifndef SLUICE_SUPERVISOR_CHECKPOINT_MOVE_BACK_H_
#define SLUICE_SUPERVISOR_CHECKPOINT_MOVE_BACK_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/offsets.h"
#include "supervisor/checkpoint_context.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

// Whether `offset` of `partition` is past the latest offset of `marks` (the
// last metadata query: the records before it do not all exist yet); false
// while unknown. Pure.
bool PastKnownRecords(const std::map<int32_t, PartitionWatermarks>& marks, int32_t partition,
                      int64_t offset);

// A partition of the group's latest checkpoint (there being an earlier one)
// past the records known that `read` has not reached: the checkpoint waits
// for records that do not exist yet. nullopt if none. Pure.
std::optional<int32_t> PartitionWaitingForRecords(
    const std::map<int32_t, PartitionWatermarks>& marks, const Group& group, const OffsetMap& read);

class CheckpointMoveBack {
 public:
  explicit CheckpointMoveBack(CheckpointContext context);

  // With every live replica paused at `read_max`, each partition of the
  // group's latest checkpoint that none reached and that is past the records
  // known becomes max(read_max, the previous checkpoint), recorded (only if
  // the sequence it ends is not committed) before any replica learns it.
  // Returns whether it moved; group.checkpoints holds the result. `what`
  // names the round for the log.
  bool MoveBack(Group& group, const OffsetMap& read_max, const std::string& what);

 private:
  const CheckpointContext context_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_CHECKPOINT_MOVE_BACK_H_
