// Test helper: a scripted supervisor for the task worker's tests. A real gRPC
// server (127.0.0.1:0) implementing what a task worker calls of
// sluice.v1.SupervisorService, with the semantics of docs/protocol.md kept in
// memory:
// - workers register and heartbeat; the fake learns where each task runs;
// - AllocateSegment is idempotent on (sequence name, interval), one version
//   per interval;
// - checkpoint rounds: a CheckpointDataSourceMetadata for the group's latest
//   checkpoint pauses every task of the group through its worker's real
//   TaskService, takes the per-partition maximum, records the checkpoint and
//   calls SetEndOffsets(finish=false) (or Resume when nothing moved); a
//   request for an older checkpoint is answered accepted=false and that task
//   gets the recorded end offsets; others are FAILED_PRECONDITION. Rounds run
//   one at a time on a background thread (auto_checkpoint), or not at all;
// - PublishSegments is a compare-and-swap on the stored offsets (start
//   behind: ABORTED, ahead: UNAVAILABLE), checks the pushed files exist,
//   keeps a commit log; GetPublishedSegments, ListSegments and
//   GetHandoffStatus answer from it.
#ifndef SLUICE_TESTS_TASK_FAKE_SUPERVISOR_H_
#define SLUICE_TESTS_TASK_FAKE_SUPERVISOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "sluice/v1/task_service.pb.h"
#include "common/offsets.h"

namespace sluice::testing {

struct FakeSupervisorOptions {
  std::string datasource;
  // Not owned. When set, published segment files must exist there, and a
  // segment is handed off once its file is readable.
  DeepStorage* deep_storage = nullptr;
  // Run checkpoint rounds when tasks ask.
  bool auto_checkpoint = true;
  // Report published segments as handed off (false: never, as if no loader
  // ever confirmed them).
  bool hand_off = true;
  int64_t heartbeat_interval_ms = 100;
};

class FakeSupervisor {
 public:
  static absl::StatusOr<std::unique_ptr<FakeSupervisor>> Start(FakeSupervisorOptions options);
  ~FakeSupervisor();

  const std::string& address() const;

  // Stored offsets before the first publish (the datasource's initial
  // offsets).
  void SetStoredOffsets(const OffsetMap& offsets);
  // A task group with its first checkpoint {0: start}.
  void AddGroup(int32_t group_id, const std::string& base_sequence_name,
                const OffsetMap& start);
  void AddTask(int32_t group_id, const std::string& task_id);

  // A round with finish=true for the group: pause every task, take the
  // maximum, SetEndOffsets(finish=true). Returns the end offsets.
  absl::StatusOr<OffsetMap> Finish(int32_t group_id, absl::Duration timeout);

  // Commits the next `n` publishes but answers UNAVAILABLE (a lost answer).
  void LosePublishAnswers(int n);

  std::vector<v1::CommittedSequence> CommitLog() const;
  OffsetMap StoredOffsets() const;
  std::vector<v1::SegmentDescriptor> Segments() const;
  std::vector<std::pair<int32_t, OffsetMap>> Checkpoints(int32_t group_id) const;
  std::vector<v1::CheckpointDataSourceMetadataRequest> CheckpointRequests() const;
  // Every PublishSegments request received, committed or not (a replica's
  // publish of a committed sequence included), in order.
  std::vector<v1::PublishSegmentsRequest> PublishRequests() const;
  // Publish calls and how many were rejected (ABORTED / UNAVAILABLE).
  int publish_calls() const;
  int publish_aborted() const;
  int registrations() const;
  std::vector<v1::ReportOffsetOutOfRangeRequest> OffsetOutOfRangeReports() const;
  // The last status a worker reported for the task (heartbeat, report or
  // registration); NOT_FOUND if none.
  absl::StatusOr<v1::TaskStatus> LastStatus(const std::string& task_id) const;
  // host:port of the worker that last reported the task.
  absl::StatusOr<std::string> TaskAddress(const std::string& task_id) const;

  class Impl;

 private:
  explicit FakeSupervisor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TASK_FAKE_SUPERVISOR_H_
