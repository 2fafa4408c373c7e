// The operations of a stream supervisor that move its stored offsets: a
// full reset (stored offsets cleared, each partition recorded), a reset of
// some partitions' offsets (operator, or automatic when a stored offset is
// no longer in Kafka), and a task's OffsetOutOfRange report judged against
// Kafka's watermarks and the committed offsets (stream_health.h), which
// resets only with resetOffsetAutomatically and never moves an offset back.
// Each kills the reading groups of the partitions it moves.
//
// Used on the stream supervisor's loop only, on the state it shares for the
// supervisor's lifetime (loop_state.h). Not copyable. Everything it points to
// must outlive it.
#ifndef SLUICE_SUPERVISOR_OFFSET_RESETS_H_
#define SLUICE_SUPERVISOR_OFFSET_RESETS_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "common/offsets.h"
#include "sluice/v1/spec.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "supervisor/loop_state.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/stream_tracker.h"
#include "supervisor/task_actions.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

struct OffsetResetsOptions {
  std::string datasource;
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  TaskActions* actions = nullptr;
  // Kafka's earliest offsets; every partition first seen after a reset.
  StreamTracker* stream = nullptr;
  // The loop's shared state: the running spec, the groups, recorded
  // errors and the status' recent errors.
  LoopState* state = nullptr;
  // Leaves the idle state (reading must restart), saying why.
  std::function<void(const std::string&)> wake_up;
};

class OffsetResets {
 public:
  explicit OffsetResets(OffsetResetsOptions options);
  OffsetResets(const OffsetResets&) = delete;
  OffsetResets& operator=(const OffsetResets&) = delete;

  // Full reset: the stored offsets cleared (each partition's recorded), the
  // reading groups killed, every partition starts as if first seen. False
  // when the store failed (recorded; nothing else done).
  bool ResetAll();
  // Sets the stored offsets of some partitions (each change recorded with
  // `reason`) and kills the groups reading them.
  void ResetOffsets(const OffsetMap& offsets, const std::string& reason);
  // A task's OffsetOutOfRange report: the answer says whether the offsets
  // were reset (the task is replaced then) and why or why not.
  v1::ReportOffsetOutOfRangeResponse OffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest& request);

 private:
  void KillGroupsReading(const std::set<int32_t>& partitions, const std::string& reason);
  std::string Prefix() const;

  const OffsetResetsOptions options_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_OFFSET_RESETS_H_
