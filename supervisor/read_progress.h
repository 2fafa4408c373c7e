// How far a datasource's reading got, per partition, and the lag sample the
// autoscaler takes from it (pure functions over the loop's groups and what
// the stream tracker knows). Used on the stream supervisor's loop.
#ifndef SLUICE_SUPERVISOR_READ_PROGRESS_H_
#define SLUICE_SUPERVISOR_READ_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "common/offsets.h"
#include "supervisor/stream_tracker.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

// The furthest offset a live task of `reading` got to per partition, else
// `stored` (a finished group's end is committed once it published).
OffsetMap ReadTo(const OffsetMap& stored, const std::map<int32_t, Group>& reading);

// Latest offset minus how far reading got (`read_to`, asked only then; a
// partition not read from counts from its earliest offset), only from a
// fresh answer about every partition: Kafka reachable, partitions and
// watermarks known, the stored offsets sound. nullopt: no sample this run.
std::optional<OffsetMap> LagSample(const StreamTracker& stream,
                                   const std::function<OffsetMap()>& read_to);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_READ_PROGRESS_H_
