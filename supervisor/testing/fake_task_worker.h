// A scripted task worker for supervisor tests: a real gRPC server of
// sluice.v1.TaskService on 127.0.0.1:0 that keeps tasks as plain state and
// follows the protocol's rules for Pause / Resume / SetEndOffsets (paused
// check, exact-repeat detection, end >= current), so the supervisor's real
// TaskClient is exercised. The test moves tasks forward ("read up to these
// offsets", "finished", "failed") and scripts misbehaviour (never pauses,
// rejects SetEndOffsets).
//
// With `supervisor_address` set it also registers with the supervisor and
// heartbeats over gRPC like a real worker; otherwise the test delivers
// RegistrationRequest() / HeartbeatRequest() itself.
#ifndef SLUICE_SUPERVISOR_TESTING_FAKE_TASK_WORKER_H_
#define SLUICE_SUPERVISOR_TESTING_FAKE_TASK_WORKER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "sluice/v1/task_service.grpc.pb.h"
#include "common/offsets.h"

namespace sluice {
class GrpcServer;
}

namespace sluice::supervisor::testing {

enum class PauseBehavior {
  kPause,       // parks and answers with its offsets
  kNeverPause,  // answers UNAVAILABLE ("not parked yet") forever
  kRefuse,      // answers FAILED_PRECONDITION
};

struct FakeTaskScript {
  PauseBehavior pause = PauseBehavior::kPause;
  // SetEndOffsets answers INVALID_ARGUMENT.
  bool reject_set_end_offsets = false;
  // Takes a checkpoint's end offsets while reading, as a real task does
  // (ABORTED "already read past" when behind its current offsets).
  bool pauseless = false;
  // Right after answering GetCurrentOffsets, while reading, the task reads
  // this many more offsets on every partition.
  int64_t read_after_offsets = 0;
};

struct FakeSequence {
  int32_t id = 0;
  OffsetMap start;
  OffsetMap end;  // END_OF_PARTITION while open
  bool checkpointed = false;
};

struct FakeTask {
  v1::TaskSpec spec;
  v1::TaskState state = v1::TASK_STATE_READING;
  bool paused = false;
  bool awaiting_checkpoint = false;
  OffsetMap current;
  OffsetMap end_offsets;
  std::vector<FakeSequence> sequences;
  int64_t start_time_ms = 0;
  int64_t end_time_ms = 0;
  std::string error;
  FakeTaskScript script;
};

struct FakeTaskWorkerOptions {
  std::string worker_id = "worker-0";
  int capacity = 4;
  // Register and heartbeat over gRPC to this supervisor (empty: the test does).
  std::string supervisor_address;
};

class FakeTaskWorker {
 public:
  static absl::StatusOr<std::unique_ptr<FakeTaskWorker>> Start(FakeTaskWorkerOptions options);
  ~FakeTaskWorker();

  const std::string& address() const { return address_; }
  const std::string& worker_id() const { return options_.worker_id; }

  // ---- what the supervisor sees ----
  v1::RegisterWorkerRequest RegistrationRequest() ABSL_LOCKS_EXCLUDED(mu_);
  v1::WorkerHeartbeatRequest HeartbeatRequest() ABSL_LOCKS_EXCLUDED(mu_);
  v1::TaskStatus Status(const std::string& task_id) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- scripting ----
  std::vector<std::string> TaskIds() ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<FakeTask> Task(const std::string& task_id) ABSL_LOCKS_EXCLUDED(mu_);
  // Script for tasks created from now on and, if given, an existing task.
  void SetDefaultScript(FakeTaskScript script) ABSL_LOCKS_EXCLUDED(mu_);
  void SetScript(const std::string& task_id, FakeTaskScript script) ABSL_LOCKS_EXCLUDED(mu_);
  // The task "read" up to `offsets` (only while not paused; clamped to its end).
  void Read(const std::string& task_id, const OffsetMap& offsets) ABSL_LOCKS_EXCLUDED(mu_);
  // The task's latest sequence is full: it pauses itself (a pauseless one
  // reads on) and awaits the answer. Returns the request it would send.
  v1::CheckpointDataSourceMetadataRequest RequestCheckpoint(const std::string& task_id)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Forces a state (SUCCESS, FAILED, ...) with an error message.
  void SetState(const std::string& task_id, v1::TaskState state, const std::string& error = "")
      ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets every task (a worker restarted without its disk).
  void ForgetTasks() ABSL_LOCKS_EXCLUDED(mu_);
  // Adds a task as if restored from disk after a restart.
  void AddTask(FakeTask task) ABSL_LOCKS_EXCLUDED(mu_);

  // Number of calls of a TaskService method ("Pause", "SetEndOffsets", ...),
  // and their log ("Pause <task>", "SetEndOffsets <task> {..} finish").
  int Calls(const std::string& method) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::string> CallLog() ABSL_LOCKS_EXCLUDED(mu_);

  // Called on the gRPC thread once RunTask or SetEndOffsets has been handled,
  // before the answer is sent (e.g. to act as a task that calls the
  // supervisor right away). Not under the worker's lock.
  using AfterCallHook = std::function<void(const std::string& method, const std::string& task_id)>;
  void SetAfterCallHook(AfterCallHook hook) ABSL_LOCKS_EXCLUDED(mu_);
  // RunTask waits this long before it does anything (a frozen worker: the
  // caller's deadline passes first).
  void SetRunTaskDelay(absl::Duration delay) ABSL_LOCKS_EXCLUDED(mu_);

  // Stops answering (the server shuts down); tasks are kept.
  void Shutdown();

 private:
  class Service;
  friend class Service;

  explicit FakeTaskWorker(FakeTaskWorkerOptions options);
  v1::TaskStatus StatusLocked(const FakeTask& task) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Log(const std::string& method, const std::string& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AfterCall(const std::string& method, const std::string& task_id) ABSL_LOCKS_EXCLUDED(mu_);
  void HeartbeatLoop();

  const FakeTaskWorkerOptions options_;
  std::string address_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<GrpcServer> server_;

  absl::Mutex mu_;
  std::map<std::string, FakeTask> tasks_ ABSL_GUARDED_BY(mu_);
  absl::Duration run_task_delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  FakeTaskScript default_script_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> call_log_ ABSL_GUARDED_BY(mu_);
  AfterCallHook after_call_ ABSL_GUARDED_BY(mu_);

  absl::Notification stop_heartbeats_;
  std::thread heartbeat_thread_;
};

}  // namespace sluice::supervisor::testing

#endif  // SLUICE_SUPERVISOR_TESTING_FAKE_TASK_WORKER_H_
