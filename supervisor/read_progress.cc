// How far reading got and the autoscaler's lag sample (read_progress.h).
#include "supervisor/read_progress.h"

#include "supervisor/stream_health.h"

namespace sluice::supervisor {

OffsetMap ReadTo(const OffsetMap& stored, const std::map<int32_t, Group>& reading) {
  OffsetMap read_to = stored;
  for (const auto& [id, group] : reading) {
    for (const auto& [task_id, task] : group.tasks) {
      if (!IsLive(task)) continue;
      read_to = MaxOffsets(read_to,
                           Restrict(FromProto(task.status.current_offsets()), group.start_offsets));
    }
  }
  return read_to;
}

std::optional<OffsetMap> LagSample(const StreamTracker& stream,
                                   const std::function<OffsetMap()>& read_to) {
  if (stream.unreachable() || !stream.partitions_known() || stream.watermarks().empty() ||
      stream.offsets_verdict().problem != StreamProblem::kNone) {
    return std::nullopt;
  }
  const OffsetMap reached = read_to();
  OffsetMap lags;
  for (const auto& [p, marks] : stream.watermarks()) {
    auto it = reached.find(p);
    lags[p] = marks.latest - (it == reached.end() ? marks.earliest : it->second);
  }
  return lags;
}

}  // namespace sluice::supervisor
