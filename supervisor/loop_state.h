// What a stream supervisor's loop shares with the parts it delegates to
// (group_creation.h, offset_resets.h): the running spec and its durations,
// the reading and publishing groups, how far the loop got (recovered,
// stopping, waiting for the stream), the status' detailed state and the
// health the status is judged by.
//
// Only loop steps touch it (the loop is a strand: no two steps at once), so
// it has no lock; RPC threads read what the loop republishes
// (supervisor_view.h). Not copyable: the parts point to the one the
// supervisor owns.
#ifndef SLUICE_SUPERVISOR_LOOP_STATE_H_
#define SLUICE_SUPERVISOR_LOOP_STATE_H_

#include <string>

#include "absl/status/status.h"
#include "common/spec.h"
#include "supervisor/clock.h"
#include "supervisor/stream_status.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

struct LoopState {
  LoopState(Clock* clock, SpecRecord spec);
  LoopState(const LoopState&) = delete;
  LoopState& operator=(const LoopState&) = delete;

  // "[supervisor <datasource>] ", how its log lines start.
  std::string Prefix() const;
  // A failure worth the status' recent errors: logged and kept.
  void RecordError(const absl::Status& status);

  const std::string datasource;
  Clock* const clock;
  // The running spec with its version, and its parsed durations (both may
  // change live).
  SpecRecord spec;
  SpecTimings timings;
  // Groups and tasks recovered from the store and the workers (the first
  // step; runs retry it until it succeeds).
  bool recovered = false;
  // A graceful stop began: runs do nothing more.
  bool stopping = false;
  // Reading and publishing groups, where the next ones start.
  TaskGroups groups;
  // A run found no answer from the background queries yet (not a failure).
  bool waiting_for_stream = false;
  // The status' detailed state (PENDING, RUNNING, WAITING_FOR_WORKERS, ...).
  std::string detailed_state = "PENDING";
  // Run and task outcomes, recent errors (stream_status.h).
  SupervisorHealth health;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_LOOP_STATE_H_
