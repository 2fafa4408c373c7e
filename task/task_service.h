// gRPC handlers of sluice.v1.TaskService (served by every task worker). Thin:
// authorize the call (every handler, by the method's roles), validate the
// request, call the TaskManager, map the status once.
#ifndef SLUICE_TASK_TASK_SERVICE_H_
#define SLUICE_TASK_TASK_SERVICE_H_

#include "common/auth/authorizer.h"
#include "sluice/v1/task_service.grpc.pb.h"
#include "task/task_manager.h"

namespace sluice::task {

class TaskServiceImpl final : public v1::TaskService::Service {
 public:
  // `manager` and `authorizer` are not owned and outlive the service.
  TaskServiceImpl(TaskManager* manager, const auth::Authorizer* authorizer)
      : manager_(manager), authorizer_(authorizer) {}

  grpc::Status RunTask(grpc::ServerContext*, const v1::RunTaskRequest*,
                       v1::RunTaskResponse*) override;
  grpc::Status StopTask(grpc::ServerContext*, const v1::StopTaskRequest*,
                        v1::StopTaskResponse*) override;
  grpc::Status ListTasks(grpc::ServerContext*, const v1::ListTasksRequest*,
                         v1::ListTasksResponse*) override;
  grpc::Status Pause(grpc::ServerContext*, const v1::PauseRequest*, v1::PauseResponse*) override;
  grpc::Status Resume(grpc::ServerContext*, const v1::ResumeRequest*, v1::ResumeResponse*) override;
  grpc::Status SetEndOffsets(grpc::ServerContext*, const v1::SetEndOffsetsRequest*,
                             v1::SetEndOffsetsResponse*) override;
  grpc::Status GetCurrentOffsets(grpc::ServerContext*, const v1::GetCurrentOffsetsRequest*,
                                 v1::GetCurrentOffsetsResponse*) override;
  grpc::Status GetEndOffsets(grpc::ServerContext*, const v1::GetEndOffsetsRequest*,
                             v1::GetEndOffsetsResponse*) override;
  grpc::Status GetCheckpoints(grpc::ServerContext*, const v1::GetCheckpointsRequest*,
                              v1::GetCheckpointsResponse*) override;
  grpc::Status GetTaskStatus(grpc::ServerContext*, const v1::GetTaskStatusRequest*,
                             v1::GetTaskStatusResponse*) override;

 private:
  TaskManager* const manager_;
  const auth::Authorizer* const authorizer_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_SERVICE_H_
