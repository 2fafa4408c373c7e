#include "task/task_service.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/names.h"

namespace sluice::task {
namespace {

// Not built yet: says so plainly instead of pretending to succeed.
grpc::Status NotYet(absl::string_view method) {
  return ToGrpcStatus(absl::UnimplementedError(absl::StrCat(
      "TaskService.", method, " is not implemented yet in this build of sluice-task")));
}

}  // namespace

grpc::Status TaskServiceImpl::RunTask(grpc::ServerContext*, const v1::RunTaskRequest* request, v1::RunTaskResponse*) {
  if (absl::Status s = ValidateTaskId(request->spec().task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("RunTask");
}

grpc::Status TaskServiceImpl::StopTask(grpc::ServerContext*, const v1::StopTaskRequest* request, v1::StopTaskResponse*) {
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("StopTask");
}

grpc::Status TaskServiceImpl::ListTasks(grpc::ServerContext*, const v1::ListTasksRequest* request, v1::ListTasksResponse*) {
  (void)request;
  return NotYet("ListTasks");
}

grpc::Status TaskServiceImpl::Pause(grpc::ServerContext*, const v1::PauseRequest* request, v1::PauseResponse*) {
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("Pause");
}

grpc::Status TaskServiceImpl::Resume(grpc::ServerContext*, const v1::ResumeRequest* request, v1::ResumeResponse*) {
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("Resume");
}

grpc::Status TaskServiceImpl::SetEndOffsets(grpc::ServerContext*, const v1::SetEndOffsetsRequest* request, v1::SetEndOffsetsResponse*) {
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("SetEndOffsets");
}

grpc::Status TaskServiceImpl::GetCurrentOffsets(grpc::ServerContext*, const v1::TaskRef* request, v1::OffsetsResponse*) {
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetCurrentOffsets");
}

grpc::Status TaskServiceImpl::GetEndOffsets(grpc::ServerContext*, const v1::TaskRef* request, v1::OffsetsResponse*) {
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetEndOffsets");
}

grpc::Status TaskServiceImpl::GetCheckpoints(grpc::ServerContext*, const v1::TaskRef* request, v1::CheckpointsResponse*) {
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetCheckpoints");
}

grpc::Status TaskServiceImpl::GetTaskStatus(grpc::ServerContext*, const v1::TaskRef* request, v1::TaskStatus*) {
  if (absl::Status s = ValidateTaskId(request->task_id()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetTaskStatus");
}

}  // namespace sluice::task
