// The status view of a stream supervisor: what its loop has seen (run and
// task outcomes, recent errors, stream problems, groups, watermarks) turned
// into v1::SupervisorStatus / v1::SupervisorSummary. Pure functions and a
// small value type: the loop fills them, RPC threads read the result
// (stream_supervisor.h republishes it after every notice); no I/O here.
#ifndef SLUICE_SUPERVISOR_STREAM_STATUS_H_
#define SLUICE_SUPERVISOR_STREAM_STATUS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "common/offsets.h"
#include "supervisor/stream_health.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/task_group.h"

namespace sluice::supervisor {

// Outcomes the state is judged by. Copyable value; the loop owns one.
class SupervisorHealth {
 public:
  // Unhealthy after this many failed runs in a row, or task failures in a
  // row; how many errors and task outcomes are kept.
  static constexpr int kUnhealthyAfterRunFailures = 3;
  static constexpr int kUnhealthyAfterTaskFailures = 3;
  static constexpr size_t kRecentErrors = 10;
  static constexpr size_t kTaskOutcomes = 10;

  // A run ended: ok resets the failure count (and counts as a first success).
  void NoteRun(bool ok);
  // A task ended SUCCESS or FAILED (other states are ignored).
  void NoteTaskOutcome(v1::TaskState state);
  // Keeps the newest kRecentErrors.
  void NoteError(int64_t time_ms, const absl::Status& status);

  int consecutive_run_failures() const { return consecutive_run_failures_; }
  bool ran_ok_once() const { return ran_ok_once_; }
  // Task failures since the last success (among the kept outcomes).
  int task_failures_in_a_row() const;
  const std::deque<v1::ErrorEvent>& recent_errors() const { return recent_errors_; }

 private:
  int consecutive_run_failures_ = 0;
  bool ran_ok_once_ = false;
  std::deque<bool> task_outcomes_;  // true = success, newest last
  std::deque<v1::ErrorEvent> recent_errors_;
};

// Everything the status is built from. The pointers are not owned and only
// read during BuildStatus.
struct StatusInputs {
  std::string datasource;
  std::string topic;
  // Topic-pattern datasources: the pattern, and every stream partition id
  // given so far (SupervisorStatus.stream_partitions).
  std::string topic_pattern;
  std::vector<v1::StreamPartition> stream_partitions;
  bool suspended = false;
  int64_t spec_version = 0;
  absl::Duration task_duration;
  int32_t partitions = 0;
  bool partitions_known = false;
  bool stopping = false;
  // ioConfig.idleConfig: the stream stopped moving, no groups run.
  bool idle = false;
  bool stream_unreachable = false;
  StreamProblem offsets_problem = StreamProblem::kNone;
  // What the loop last decided (RUNNING, WAITING_FOR_WORKERS, ...).
  std::string detailed_state;
  // Used segments whose deep-storage copy fails verification.
  int64_t segments_failing_verification = 0;
  const SupervisorHealth* health = nullptr;
  const std::map<int32_t, Group>* active = nullptr;
  const std::map<int32_t, std::vector<Group>>* publishing = nullptr;
  const std::map<int32_t, PartitionWatermarks>* watermarks = nullptr;
  // Newest record timestamps (stream_queries.h), for the time lag; null: none.
  const std::map<int32_t, int64_t>* newest_timestamps = nullptr;
  // When the watermarks were fetched (InfinitePast: never).
  absl::Time watermarks_at = absl::InfinitePast();
  absl::Time now;
};

// The state, first that applies: STOPPING, UNABLE_TO_CONNECT_TO_STREAM,
// STORED_OFFSETS_UNAVAILABLE, STORED_OFFSETS_PAST_END, UNHEALTHY_SUPERVISOR,
// UNHEALTHY_TASKS, SUSPENDED, IDLE, PENDING (no run succeeded yet), RUNNING.
v1::SupervisorState SupervisorStateOf(const StatusInputs& in);

// The loop's part of the status: state, health, detailed state, groups
// (current offsets: the furthest a live reading task got), latest offsets,
// recent errors, time lag (time_lag.h) where a reading task reported the
// timestamp of its last record.
v1::SupervisorStatus BuildStatus(const StatusInputs& in);

// Adds what the metadata store says (read when the status is asked for):
// committed offsets, published and failing segments; current offsets fall
// back to the committed ones; lag per partition = latest - current, the
// aggregate counts positive lags only; partitions read to their end have no
// time lag; the largest time lag.
v1::SupervisorStatus WithStoredFacts(v1::SupervisorStatus status, const OffsetMap& committed,
                                     int64_t segments_published, int64_t segments_failing);

v1::SupervisorSummary SummaryOf(const std::string& datasource,
                                const v1::SupervisorStatus& status);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STREAM_STATUS_H_
