#include "supervisor/grpc_task_client.h"

#include <glog/logging.h>
#include <grpcpp/grpcpp.h>

#include <map>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/auth/grpc_auth.h"
#include "common/auth/worker_token.h"
#include "common/grpc_status.h"
#include "common/retry.h"
#include "sluice/v1/task_service.grpc.pb.h"

namespace sluice::supervisor {
namespace {

class GrpcTaskClient : public TaskClient {
 public:
  GrpcTaskClient(ChatOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials,
                 auth::ClientAuth auth)
      : options_(options),
        credentials_(credentials ? std::move(credentials) : grpc::InsecureChannelCredentials()),
        auth_(std::move(auth)) {
    if (options_.attempts < 1) options_.attempts = 1;
  }

  absl::StatusOr<v1::RunTaskResponse> RunTask(const std::string& address,
                                              const v1::TaskSpec& spec) override {
    v1::RunTaskRequest request;
    *request.mutable_spec() = spec;
    return Call<v1::RunTaskRequest, v1::RunTaskResponse>(address, "RunTask", spec.task_id(),
                                                         request, &v1::TaskService::Stub::RunTask);
  }

  absl::StatusOr<v1::TaskStatus> StopTask(const std::string& address, const std::string& task_id,
                                          v1::StopMode mode, const std::string& reason) override {
    v1::StopTaskRequest request;
    request.set_task_id(task_id);
    request.set_mode(mode);
    request.set_reason(reason);
    auto response = Call<v1::StopTaskRequest, v1::StopTaskResponse>(
        address, "StopTask", task_id, request, &v1::TaskService::Stub::StopTask);
    if (!response.ok()) return response.status();
    return response->status();
  }

  absl::StatusOr<v1::PauseResponse> Pause(const std::string& address,
                                          const std::string& task_id) override {
    v1::PauseRequest request;
    request.set_task_id(task_id);
    // Leave the task part of the attempt's deadline to answer.
    request.set_timeout_ms(std::max<int64_t>(1, absl::ToInt64Milliseconds(options_.timeout) / 2));
    return Call<v1::PauseRequest, v1::PauseResponse>(address, "Pause", task_id, request,
                                                     &v1::TaskService::Stub::Pause);
  }

  absl::Status Resume(const std::string& address, const std::string& task_id) override {
    v1::ResumeRequest request;
    request.set_task_id(task_id);
    return Call<v1::ResumeRequest, v1::ResumeResponse>(address, "Resume", task_id, request,
                                                       &v1::TaskService::Stub::Resume)
        .status();
  }

  absl::StatusOr<v1::SetEndOffsetsResponse> SetEndOffsets(const std::string& address,
                                                          const std::string& task_id,
                                                          const OffsetMap& end_offsets,
                                                          bool finish) override {
    v1::SetEndOffsetsRequest request;
    request.set_task_id(task_id);
    ToProto(end_offsets, request.mutable_end_offsets());
    request.set_finish(finish);
    return Call<v1::SetEndOffsetsRequest, v1::SetEndOffsetsResponse>(
        address, "SetEndOffsets", task_id, request, &v1::TaskService::Stub::SetEndOffsets);
  }

  absl::StatusOr<OffsetMap> GetCurrentOffsets(const std::string& address,
                                              const std::string& task_id) override {
    auto response =
        Call<v1::GetCurrentOffsetsRequest, v1::GetCurrentOffsetsResponse>(
            address, "GetCurrentOffsets", task_id, Ref<v1::GetCurrentOffsetsRequest>(task_id),
            &v1::TaskService::Stub::GetCurrentOffsets);
    if (!response.ok()) return response.status();
    return FromProto(response->offsets());
  }

  absl::StatusOr<OffsetMap> GetEndOffsets(const std::string& address,
                                          const std::string& task_id) override {
    auto response = Call<v1::GetEndOffsetsRequest, v1::GetEndOffsetsResponse>(
        address, "GetEndOffsets", task_id, Ref<v1::GetEndOffsetsRequest>(task_id),
        &v1::TaskService::Stub::GetEndOffsets);
    if (!response.ok()) return response.status();
    return FromProto(response->offsets());
  }

  absl::StatusOr<std::vector<v1::Checkpoint>> GetCheckpoints(const std::string& address,
                                                             const std::string& task_id) override {
    auto response = Call<v1::GetCheckpointsRequest, v1::GetCheckpointsResponse>(
        address, "GetCheckpoints", task_id, Ref<v1::GetCheckpointsRequest>(task_id),
        &v1::TaskService::Stub::GetCheckpoints);
    if (!response.ok()) return response.status();
    return std::vector<v1::Checkpoint>(response->checkpoints().begin(),
                                       response->checkpoints().end());
  }

  absl::StatusOr<v1::TaskStatus> GetTaskStatus(const std::string& address,
                                               const std::string& task_id) override {
    auto response = Call<v1::GetTaskStatusRequest, v1::GetTaskStatusResponse>(
        address, "GetTaskStatus", task_id, Ref<v1::GetTaskStatusRequest>(task_id),
        &v1::TaskService::Stub::GetTaskStatus);
    if (!response.ok()) return response.status();
    return std::move(*response->mutable_status());
  }

  absl::StatusOr<std::vector<v1::TaskStatus>> ListTasks(const std::string& address,
                                                        const std::string& datasource) override {
    v1::ListTasksRequest request;
    request.set_datasource(datasource);
    auto response = Call<v1::ListTasksRequest, v1::ListTasksResponse>(
        address, "ListTasks", "", request, &v1::TaskService::Stub::ListTasks);
    if (!response.ok()) return response.status();
    return std::vector<v1::TaskStatus>(response->tasks().begin(), response->tasks().end());
  }

 private:
  // The request of a read that names one task.
  template <typename Request>
  static Request Ref(const std::string& task_id) {
    Request ref;
    ref.set_task_id(task_id);
    return ref;
  }

  // The stub for a worker's address, presenting the token of the worker
  // registered there (derived from the supervisor's key; none without one).
  absl::StatusOr<v1::TaskService::Stub*> StubFor(const std::string& address)
      ABSL_LOCKS_EXCLUDED(mu_) {
    std::string worker_id;
    if (!auth_.bearer_token.empty()) {
      std::optional<std::string> worker =
          options_.worker_at ? options_.worker_at(address) : std::nullopt;
      if (!worker) {
        return absl::FailedPreconditionError(
            absl::StrCat("no registered worker at ", address, " to derive a token for"));
      }
      worker_id = *std::move(worker);
    }
    absl::MutexLock lock(&mu_);
    auto& stub = stubs_[{address, worker_id}];
    if (!stub) {
      auth::ClientAuth auth;
      if (!worker_id.empty()) {
        auth.bearer_token = auth::SupervisorTokenForWorker(auth_.bearer_token, worker_id);
      }
      stub = v1::TaskService::NewStub(auth::NewChannel(address, credentials_, auth));
    }
    return stub.get();
  }

  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(const std::string& address, const char* method,
                                const std::string& task_id, const Request& request,
                                grpc::Status (v1::TaskService::Stub::*rpc)(grpc::ClientContext*,
                                                                           const Request&,
                                                                           Response*)) {
    absl::StatusOr<v1::TaskService::Stub*> found = StubFor(address);
    if (!found.ok()) {
      return absl::Status(found.status().code(), absl::StrCat(method, " on ", address, ": ",
                                                              found.status().message()));
    }
    v1::TaskService::Stub* stub = *found;
    // No jitter: the waits stay initial_backoff doubled up to max_backoff.
    RetryOptions retry;
    retry.initial_backoff = options_.initial_backoff;
    retry.max_backoff = options_.max_backoff;
    retry.multiplier = 2.0;
    retry.jitter = 0;
    retry.max_attempts = options_.attempts;
    int attempt = 0;
    absl::StatusOr<Response> result = RetryCall<Response>(
        retry, SleepUninterrupted, [&]() -> absl::StatusOr<Response> {
          ++attempt;
          grpc::ClientContext context;
          context.set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
          Response response;
          const absl::Status status = FromGrpcStatus((stub->*rpc)(&context, request, &response));
          if (status.ok()) return response;
          if (IsRetryable(status)) {
            VLOG(1) << "[supervisor] " << method << " " << task_id << " on " << address
                    << " attempt " << attempt << "/" << options_.attempts << ": "
                    << status.message();
          }
          return status;
        });
    if (result.ok()) return result;
    const absl::Status& status = result.status();
    return absl::Status(status.code(), absl::StrCat(method, task_id.empty() ? "" : " ", task_id,
                                                    " on ", address, ": ", status.message()));
  }

  ChatOptions options_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const auth::ClientAuth auth_;
  absl::Mutex mu_;
  // By (address, worker id).
  std::map<std::pair<std::string, std::string>, std::unique_ptr<v1::TaskService::Stub>> stubs_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<TaskClient> NewGrpcTaskClient(
    ChatOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials,
    auth::ClientAuth auth) {
  return std::make_unique<GrpcTaskClient>(options, std::move(credentials), std::move(auth));
}

}  // namespace sluice::supervisor
