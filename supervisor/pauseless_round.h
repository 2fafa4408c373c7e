// The pauseless part of an incremental checkpoint round (docs/protocol.md
// "Checkpoint round"): read every replica's offsets without pausing it,
// record max + a margin (pauseless_margin.h) as the end of the sequence,
// SetEndOffsets on the replica furthest ahead first, then the others. When
// it cannot work (a status read failed, the margin does not fit, the first
// replica already read past the end) it says so and the caller pauses the
// replicas instead (checkpoint_coordinator.h).
#ifndef SLUICE_SUPERVISOR_PAUSELESS_ROUND_H_
#define SLUICE_SUPERVISOR_PAUSELESS_ROUND_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/offsets.h"
#include "supervisor/checkpoint_context.h"
#include "supervisor/pauseless_margin.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

class PauselessRound {
 public:
  explicit PauselessRound(CheckpointContext context);

  // A round over `tasks` (live, not starting; `addresses` in the same
  // order): read offsets, record max + margin, SetEndOffsets on the
  // furthest replica first, then the others. Returns the end recorded (or
  // the latest checkpoint when nothing new was read); nullopt: no replica
  // learned an end, do the classic round. An error when the store failed or
  // no replica accepted the end (those that refused are killed).
  absl::StatusOr<std::optional<OffsetMap>> Run(
      Group& group, const std::vector<TaskInfo*>& tasks,
      const std::vector<std::optional<std::string>>& addresses, const std::string& what);

 private:
  // Given up before anything was recorded because its margin cannot work
  // (`why`, logged): counts a fallback, notes the offsets read, makes the
  // group's next rounds classic; returns nullopt.
  std::optional<OffsetMap> ClassicInstead(Group& group, const OffsetObservation& now,
                                          const std::string& why);

  const CheckpointContext context_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_PAUSELESS_ROUND_H_
