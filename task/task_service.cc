#include "task/task_service.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/auth/grpc_auth.h"
#include "common/grpc_request_check.h"
#include "common/grpc_status.h"
#include "common/names.h"

// Every handler starts here: the caller's roles, then the request's bounds.
#define AUTHORIZE(method)                                                   \
  SLUICE_AUTHORIZE_CALL(*authorizer_, context, "/sluice.v1.TaskService/" method); \
  SLUICE_CHECK_REQUEST(*request, "/sluice.v1.TaskService/" method)

namespace sluice::task {
namespace {

constexpr int64_t kDefaultPauseTimeoutMs = 2000;
constexpr int64_t kMaxPauseTimeoutMs = 60000;

}  // namespace

grpc::Status TaskServiceImpl::RunTask(grpc::ServerContext* context, const v1::RunTaskRequest* request,
                                      v1::RunTaskResponse* response) {
  AUTHORIZE("RunTask");
  return ReplyWith(manager_->RunTask(request->spec()), response);
}

grpc::Status TaskServiceImpl::StopTask(grpc::ServerContext* context, const v1::StopTaskRequest* request,
                                       v1::StopTaskResponse* response) {
  AUTHORIZE("StopTask");
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  absl::StatusOr<v1::TaskStatus> status =
      manager_->StopTask(request->task_id(), request->mode(), request->reason());
  if (!status.ok()) return ToGrpcStatus(status.status());
  *response->mutable_status() = *std::move(status);
  return grpc::Status::OK;
}

grpc::Status TaskServiceImpl::ListTasks(grpc::ServerContext* context, const v1::ListTasksRequest* request,
                                        v1::ListTasksResponse* response) {
  AUTHORIZE("ListTasks");
  for (v1::TaskStatus& status : manager_->ListTasks(request->datasource())) {
    *response->add_tasks() = std::move(status);
  }
  return grpc::Status::OK;
}

grpc::Status TaskServiceImpl::Pause(grpc::ServerContext* context, const v1::PauseRequest* request,
                                    v1::PauseResponse* response) {
  AUTHORIZE("Pause");
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  if (request->timeout_ms() < 0 || request->timeout_ms() > kMaxPauseTimeoutMs) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat("timeout_ms must be between 0 and ",
                                                                kMaxPauseTimeoutMs, " (got ",
                                                                request->timeout_ms(), ")")));
  }
  const int64_t timeout_ms =
      request->timeout_ms() == 0 ? kDefaultPauseTimeoutMs : request->timeout_ms();
  return ReplyWith(manager_->Pause(request->task_id(), absl::Milliseconds(timeout_ms)), response);
}

grpc::Status TaskServiceImpl::Resume(grpc::ServerContext* context, const v1::ResumeRequest* request,
                                     v1::ResumeResponse* response) {
  AUTHORIZE("Resume");
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return ReplyWith(manager_->Resume(request->task_id()), response);
}

grpc::Status TaskServiceImpl::SetEndOffsets(grpc::ServerContext* context,
                                            const v1::SetEndOffsetsRequest* request,
                                            v1::SetEndOffsetsResponse* response) {
  AUTHORIZE("SetEndOffsets");
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  if (request->end_offsets().empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        "end_offsets must map every partition of the task to its end offset"));
  }
  return ReplyWith(manager_->SetEndOffsets(request->task_id(), FromProto(request->end_offsets()),
                                         request->finish()),
                 response);
}

grpc::Status TaskServiceImpl::GetCurrentOffsets(grpc::ServerContext* context, const v1::GetCurrentOffsetsRequest* request,
                                                v1::GetCurrentOffsetsResponse* response) {
  AUTHORIZE("GetCurrentOffsets");
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  absl::StatusOr<v1::TaskStatus> status = manager_->GetTaskStatus(request->task_id());
  if (!status.ok()) return ToGrpcStatus(status.status());
  *response->mutable_offsets() = status->current_offsets();
  return grpc::Status::OK;
}

grpc::Status TaskServiceImpl::GetEndOffsets(grpc::ServerContext* context, const v1::GetEndOffsetsRequest* request,
                                            v1::GetEndOffsetsResponse* response) {
  AUTHORIZE("GetEndOffsets");
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  absl::StatusOr<v1::TaskStatus> status = manager_->GetTaskStatus(request->task_id());
  if (!status.ok()) return ToGrpcStatus(status.status());
  *response->mutable_offsets() = status->end_offsets();
  return grpc::Status::OK;
}

grpc::Status TaskServiceImpl::GetCheckpoints(grpc::ServerContext* context, const v1::GetCheckpointsRequest* request,
                                             v1::GetCheckpointsResponse* response) {
  AUTHORIZE("GetCheckpoints");
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  absl::StatusOr<v1::TaskStatus> status = manager_->GetTaskStatus(request->task_id());
  if (!status.ok()) return ToGrpcStatus(status.status());
  *response->mutable_checkpoints() = status->checkpoints();
  return grpc::Status::OK;
}

grpc::Status TaskServiceImpl::GetTaskStatus(grpc::ServerContext* context, const v1::GetTaskStatusRequest* request,
                                            v1::GetTaskStatusResponse* response) {
  AUTHORIZE("GetTaskStatus");
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return ReplyWith(manager_->GetTaskStatus(request->task_id()), response->mutable_status());
}

}  // namespace sluice::task
