// The control state machine of one task: its state (STARTING, READING,
// PAUSED, PUBLISHING, final), pause / resume / SetEndOffsets / stop as the
// supervisor calls them, the self-resume deadline of a pause the task did
// not ask for, the checkpoint the task asks for itself (and asks again every
// checkpointRetryPeriod while parked), and the progress the read loop
// publishes once per batch (offsets, row stats, parse error samples), which
// Pause answers with and the status shows.
//
// Pause guarantee: Pause answers only once the loop is parked (Park) between
// two records; the loop polls interrupted() between records.
//
// Pauseless checkpoints (docs/protocol.md "Checkpoint round"): before the
// loop routes a chunk of records it claims them (Claim: the next offset per
// partition after the chunk), under this mutex. SetEndOffsets(finish=false)
// on a task that is reading checks the end against the claimed offsets, not
// only the published ones, so it is accepted only if no record at or past
// the end has been or is being routed into the closing sequence; the claim
// answers the sequence list's generation, and the loop refreshes its routes
// before routing a chunk claimed under a newer generation. An end behind the
// claims is ABORTED ("already read past").
//
// Thread-safe. gRPC threads call the control methods; the read loop calls
// Park, PublishProgress and the loop-side methods. Owned by the TaskRunner.
// Lock order: this mutex, then the SequenceStore's, then the waker's.
#ifndef SLUICE_TASK_TASK_CONTROL_H_
#define SLUICE_TASK_TASK_CONTROL_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "sluice/v1/task.pb.h"
#include "sluice/v1/task_service.pb.h"
#include "common/metrics/registry.h"
#include "common/offsets.h"
#include "task/sequence_store.h"

namespace sluice::task {

enum class StopKind { kNone, kGraceful, kKill, kShutdown };

struct TaskControlOptions {
  std::string task_id;
  // For log lines: "[task <id>]".
  std::string log_prefix;
  // A pause the task did not ask for ends by itself after this long.
  absl::Duration self_resume_after = absl::InfiniteDuration();
  // How often a parked task asks again for the checkpoint it wants.
  absl::Duration checkpoint_retry_period = absl::Seconds(30);
  // Not owned; outlives the control.
  SequenceStore* sequences = nullptr;
  // Observes, per checkpoint (end offsets set), how long the loop was
  // parked since the previous one; null: not recorded.
  metrics::Histogram* paused_per_checkpoint = nullptr;
};

class TaskControl {
 public:
  // Asks the supervisor to checkpoint `latest` (CheckpointDataSourceMetadata).
  using CheckpointAsker =
      std::function<absl::StatusOr<v1::CheckpointDataSourceMetadataResponse>(const Sequence&)>;

  explicit TaskControl(TaskControlOptions options);
  TaskControl(const TaskControl&) = delete;
  TaskControl& operator=(const TaskControl&) = delete;

  // ---- control calls (any thread) ----
  // Requests a pause and waits up to `timeout` for the loop to park. The
  // parked offsets; UNAVAILABLE if not parked in time; FAILED_PRECONDITION
  // once publishing, stopping or finished.
  absl::StatusOr<OffsetMap> Pause(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends a pause (or cancels a pending one); the state after.
  v1::TaskState Resume() ABSL_LOCKS_EXCLUDED(mu_);
  // SequenceStore::SetEndOffsets, then resumes. Parked: checked against the
  // parked offsets. Reading (finish=false only): checked against the
  // claimed offsets (ABORTED when the task already read past the end).
  absl::StatusOr<v1::SetEndOffsetsResponse> SetEndOffsets(const OffsetMap& offsets, bool finish)
      ABSL_LOCKS_EXCLUDED(mu_);
  // GRACEFUL or KILL (a kill overrides a graceful stop).
  void Stop(v1::StopMode mode, const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  // The worker shuts down (unless a stop is already requested).
  void RequestShutdown() ABSL_LOCKS_EXCLUDED(mu_);
  bool WaitFinished(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  bool finished() const ABSL_LOCKS_EXCLUDED(mu_);
  OffsetMap current() const ABSL_LOCKS_EXCLUDED(mu_);
  v1::TaskState state() const ABSL_LOCKS_EXCLUDED(mu_);
  // State, offsets, row stats, samples, error, times, and the sequence
  // list's part (SequenceStore::FillStatus), under one lock.
  void FillStatus(const OffsetMap& spec_start, v1::TaskStatus* status) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- read loop ----
  // A pause or stop is requested: the loop stops between two records.
  bool interrupted() const { return interrupt_.load(std::memory_order_relaxed); }
  bool stop_requested() const ABSL_LOCKS_EXCLUDED(mu_);
  StopKind stop_kind(std::string* reason) const ABSL_LOCKS_EXCLUDED(mu_);
  // Called (under the waker's own lock) whenever an interrupt is raised, to
  // cut a blocking poll short; empty: none.
  void SetWaker(std::function<void()> waker) ABSL_LOCKS_EXCLUDED(wake_mu_);
  // Returns whether the state changed.
  bool SetState(v1::TaskState state) ABSL_LOCKS_EXCLUDED(mu_);
  void SetStartTime(int64_t ms) ABSL_LOCKS_EXCLUDED(mu_);
  void SetError(std::string error) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether Resume/SetEndOffsets came since `*seen` (then updated).
  bool TakeResume(int64_t* seen) ABSL_LOCKS_EXCLUDED(mu_);
  // Offsets and loop counters (processed, processed_bytes, unparseable,
  // thrown_away, persists, rows/bytes in memory of `counters`).
  void PublishProgress(const OffsetMap& current, const v1::RowStats& counters,
                       const std::map<int32_t, int64_t>& last_read_timestamps = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  // Keeps `sample` (at most `keep`) and the unparseable count.
  void AddParseError(const v1::ParseErrorSample& sample, int32_t keep, int64_t unparseable)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Asks for a checkpoint of sequence `sequence_id`, which the loop routes
  // to as its open latest. pause=true (the sequence is full): pauses the
  // task, the loop's Park asks the supervisor (unless already asked) and
  // waits for the end offsets. pause=false (nearly full): the task keeps
  // reading and AskIfDue asks. A full request after a nearly-full one only
  // adds the pause. False (nothing done) if the latest sequence is not
  // `sequence_id` or is closed, the same request was already made, or a
  // pause or stop is requested.
  bool RequestCheckpoint(const char* trigger, int32_t sequence_id, bool pause)
      ABSL_LOCKS_EXCLUDED(mu_);
  // While reading: asks the supervisor (through `ask`, unlocked) for the
  // awaited checkpoint when it is due (first at once, then every
  // checkpoint_retry_period). Returns whether it asked.
  bool AskIfDue(const CheckpointAsker& ask) ABSL_LOCKS_EXCLUDED(mu_);
  // The loop is about to route records up to (not including) `next[p]` on
  // each partition p. Returns the sequence list's generation: if it differs
  // from the one the loop's routes reflect, the loop refreshes them before
  // routing (the claimed records are all before any end set since, so they
  // route alike under either).
  int64_t Claim(const OffsetMap& next) ABSL_LOCKS_EXCLUDED(mu_);
  // Bumped by every SetEndOffsets that changed the sequence list.
  int64_t sequences_generation() const ABSL_LOCKS_EXCLUDED(mu_);
  // Parks while a pause is requested: PAUSED, asks for the awaited
  // checkpoint (unlocked, through `ask`) every checkpoint_retry_period,
  // resumes by itself at the self-resume deadline; READING after (unless
  // stopping). `notify` runs without locks after each state change. Returns
  // whether it parked; *asked_for_checkpoint: whether it awaited one.
  bool Park(const CheckpointAsker& ask, const std::function<void()>& notify,
            bool* asked_for_checkpoint) ABSL_LOCKS_EXCLUDED(mu_);
  // Sleeps up to `d` unless a pause or stop is requested; false if stopped.
  bool Wait(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether everything read (the current offsets) is published.
  bool AllReadIsPublished() const ABSL_LOCKS_EXCLUDED(mu_);
  // The loop ended: exact offsets, not parked, end time now.
  void MarkEnded(const OffsetMap& current) ABSL_LOCKS_EXCLUDED(mu_);
  // The final state; finished() from now on.
  void Finish(v1::TaskState state, std::string error) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void UpdateInterruptLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) ABSL_LOCKS_EXCLUDED(wake_mu_);
  // Pause/SetEndOffsets cannot be honoured (stopping, publishing, ended).
  bool ControlClosedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string StateNameLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Asks for the awaited checkpoint (mu_ released during the call) and
  // notes the outcome; schedules the next request.
  void AskLocked(const CheckpointAsker& ask) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the paused time since the last checkpoint (and resets it).
  void ObservePausedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const TaskControlOptions options_;

  mutable absl::Mutex mu_;
  v1::TaskState state_ ABSL_GUARDED_BY(mu_) = v1::TASK_STATE_NOT_STARTED;
  // Exact while parked; otherwise as of the last batch.
  OffsetMap current_ ABSL_GUARDED_BY(mu_);
  // Partition -> Kafka timestamp of the last record read (time lag).
  std::map<int32_t, int64_t> last_read_timestamps_ ABSL_GUARDED_BY(mu_);
  // Per partition: the offset after the last record the loop has routed or
  // is routing (Claim); reset to current_ when it parks.
  OffsetMap claimed_ ABSL_GUARDED_BY(mu_);
  int64_t sequences_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // When the awaited checkpoint is asked for next (Park and AskIfDue).
  absl::Time next_ask_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // Parked time since the last checkpoint; a checkpoint set while parked is
  // observed when the park ends.
  absl::Duration paused_since_checkpoint_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  bool observe_at_unpark_ ABSL_GUARDED_BY(mu_) = false;
  bool pause_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool parked_ ABSL_GUARDED_BY(mu_) = false;
  bool awaiting_checkpoint_ ABSL_GUARDED_BY(mu_) = false;
  // A pause the task did not ask for ends by itself at this time.
  absl::Time supervisor_pause_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // Bumped by Resume/SetEndOffsets: the loop restarts its checkpoint timer
  // (intermediateHandoffPeriod).
  int64_t resume_generation_ ABSL_GUARDED_BY(mu_) = 0;
  StopKind stop_ ABSL_GUARDED_BY(mu_) = StopKind::kNone;
  std::string stop_reason_ ABSL_GUARDED_BY(mu_);
  std::string error_ ABSL_GUARDED_BY(mu_);
  v1::RowStats stats_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::ParseErrorSample> parse_errors_ ABSL_GUARDED_BY(mu_);
  int64_t start_time_ms_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t end_time_ms_ ABSL_GUARDED_BY(mu_) = 0;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  // pause_requested_ || stop_ != kNone, read by the loop between records.
  std::atomic<bool> interrupt_{false};

  absl::Mutex wake_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::function<void()> waker_ ABSL_GUARDED_BY(wake_mu_);
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_CONTROL_H_
