// When the read loop asks for a checkpoint of its open latest sequence
// (TaskControl::RequestCheckpoint): a segment at maxRowsPerSegment, the
// sequence at maxTotalRows (both early, without parking, at
// --early_checkpoint_fraction of them), and intermediateHandoffPeriod; and
// the loop's side of a pause: parking (TaskControl::Park, with the
// checkpoint's duration metric), the resumes that restart the period, the
// checkpoint asked again while reading (TaskControl::AskIfDue).
//
// Not thread-safe: owned and used by the read loop only.
#ifndef SLUICE_TASK_CHECKPOINT_TRIGGERS_H_
#define SLUICE_TASK_CHECKPOINT_TRIGGERS_H_

#include <cstdint>
#include <functional>

#include "absl/time/time.h"
#include "sluice/v1/task.pb.h"
#include "task/record_router.h"
#include "task/supervisor_client.h"
#include "task/task_control.h"
#include "task/task_metrics.h"
#include "task/task_spec.h"

namespace sluice::task {

struct CheckpointTriggersOptions {
  // Checked (CheckTaskSpec gave `settings`).
  const v1::TaskSpec* spec = nullptr;
  const TaskSettings* settings = nullptr;
  // Not owned; outlive the triggers. The router tells the open latest
  // sequence.
  const RecordRouter* router = nullptr;
  TaskControl* control = nullptr;
  SupervisorClient* supervisor = nullptr;
  TaskMetrics metrics;
  // TaskTuningOptions::early_checkpoint_fraction.
  double early_checkpoint_fraction = 0.9;
  // After every state change, without locks held.
  std::function<void()> notify;
};

class CheckpointTriggers {
 public:
  explicit CheckpointTriggers(CheckpointTriggersOptions options);
  CheckpointTriggers(const CheckpointTriggers&) = delete;
  CheckpointTriggers& operator=(const CheckpointTriggers&) = delete;

  // Starts intermediateHandoffPeriod over.
  void RestartPeriod();
  // A row went to `route`, making its segment and its sequence this many
  // rows.
  void OnRow(int route, int64_t segment_rows, int64_t sequence_rows);
  // intermediateHandoffPeriod elapsed by `now`?
  void OnTime(absl::Time now);
  // Parks while a pause is requested. Returns true if it parked.
  bool Park();
  // A resume or new end offsets since the last look: the period starts over.
  void TakeResume();
  // While reading: asks the supervisor again for an awaited checkpoint.
  void AskIfDue();

 private:
  // Asks to checkpoint the open latest sequence `sequence_id`; `full`:
  // park until the end offsets come.
  void Request(const char* trigger, int32_t sequence_id, bool full);
  // The latest sequence's id per the routes, if it is open; -1 otherwise.
  int32_t OpenLatestId() const;
  // Whether the early trigger applies (0 < fraction < 1).
  bool Early() const;

  const CheckpointTriggersOptions options_;
  const RecordRouter& router_;
  TaskControl::CheckpointAsker asker_;
  absl::Time requested_at_;
  absl::Time next_time_;
  // The sequence last asked to checkpoint early (-1: none since the last
  // park), so the per-record trigger does not lock once per record.
  int32_t early_asked_id_ = -1;
  int64_t seen_resume_generation_ = 0;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_CHECKPOINT_TRIGGERS_H_
