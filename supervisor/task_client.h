// The supervisor's side of sluice.v1.TaskService: how it runs and steers
// tasks on their workers. A plain C++ interface (no gRPC here, so the core
// does not depend on it) that tests can script; the real one
// (grpc_task_client.h) speaks gRPC with a per-call deadline
// (tuningConfig.chatTimeout) and retries retryable failures (common/retry.h
// IsRetryable: UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) up to
// tuningConfig.chatRetries attempts with exponential backoff.
#ifndef SLUICE_SUPERVISOR_TASK_CLIENT_H_
#define SLUICE_SUPERVISOR_TASK_CLIENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sluice/v1/task_service.pb.h"
#include "common/offsets.h"

namespace sluice::supervisor {

struct ChatOptions {
  // Deadline of one attempt.
  absl::Duration timeout = absl::Seconds(10);
  // Attempts in all (at least 1).
  int attempts = 8;
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(2);
  // The id of the worker registered at an address (the supervisor manager
  // fills it from its worker registry); a gRPC client derives that worker's
  // token from it. Unset: no per-worker credential can be derived.
  std::function<std::optional<std::string>(const std::string& address)> worker_at;
};

// Every call addresses a worker (host:port) and, except RunTask/ListTasks,
// one of its tasks. Errors carry the worker's status code, prefixed with the
// call and the task.
class TaskClient {
 public:
  virtual ~TaskClient() = default;

  virtual absl::StatusOr<v1::RunTaskResponse> RunTask(const std::string& address,
                                                      const v1::TaskSpec& spec) = 0;
  virtual absl::StatusOr<v1::TaskStatus> StopTask(const std::string& address,
                                                  const std::string& task_id, v1::StopMode mode,
                                                  const std::string& reason) = 0;
  // Returns the task's current offsets once it is parked. Retries while the
  // task answers UNAVAILABLE ("not parked yet").
  virtual absl::StatusOr<v1::PauseResponse> Pause(const std::string& address,
                                                  const std::string& task_id) = 0;
  virtual absl::Status Resume(const std::string& address, const std::string& task_id) = 0;
  virtual absl::StatusOr<v1::SetEndOffsetsResponse> SetEndOffsets(const std::string& address,
                                                                  const std::string& task_id,
                                                                  const OffsetMap& end_offsets,
                                                                  bool finish) = 0;
  virtual absl::StatusOr<OffsetMap> GetCurrentOffsets(const std::string& address,
                                                      const std::string& task_id) = 0;
  virtual absl::StatusOr<OffsetMap> GetEndOffsets(const std::string& address,
                                                  const std::string& task_id) = 0;
  virtual absl::StatusOr<std::vector<v1::Checkpoint>> GetCheckpoints(
      const std::string& address, const std::string& task_id) = 0;
  virtual absl::StatusOr<v1::TaskStatus> GetTaskStatus(const std::string& address,
                                                       const std::string& task_id) = 0;
  virtual absl::StatusOr<std::vector<v1::TaskStatus>> ListTasks(const std::string& address,
                                                                const std::string& datasource) = 0;
};

// ChatOptions from a normalized tuning config (chatTimeout, chatRetries).
ChatOptions ChatOptionsFromTuning(const v1::TuningConfig& tuning);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TASK_CLIENT_H_
