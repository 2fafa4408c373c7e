#include "supervisor/supervisor_service.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/auth/grpc_auth.h"
#include "common/grpc_request_check.h"
#include "common/grpc_status.h"

// Every handler starts here: the caller's roles, then the request's bounds.
#define AUTHORIZE(method)                                                   \
  SLUICE_AUTHORIZE_CALL(*authorizer_, context, "/sluice.v1.SupervisorService/" method); \
  SLUICE_CHECK_REQUEST(*request)

namespace sluice::supervisor {

grpc::Status SupervisorServiceImpl::CheckpointDataSourceMetadata(grpc::ServerContext* context, const v1::CheckpointDataSourceMetadataRequest* request,
    v1::CheckpointDataSourceMetadataResponse* response) {
  AUTHORIZE("CheckpointDataSourceMetadata");
  return ReplyWith(manager_->Checkpoint(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::PublishSegments(grpc::ServerContext* context,
                                                    const v1::PublishSegmentsRequest* request,
                                                    v1::PublishSegmentsResponse* response) {
  AUTHORIZE("PublishSegments");
  return ReplyWith(manager_->Publish(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::GetPublishedSegments(grpc::ServerContext* context, const v1::GetPublishedSegmentsRequest* request,
    v1::GetPublishedSegmentsResponse* response) {
  AUTHORIZE("GetPublishedSegments");
  return ReplyWith(manager_->GetPublished(*request), response);
}

grpc::Status SupervisorServiceImpl::AllocateSegment(grpc::ServerContext* context,
                                                    const v1::AllocateSegmentRequest* request,
                                                    v1::AllocateSegmentResponse* response) {
  AUTHORIZE("AllocateSegment");
  return ReplyWith(manager_->Allocate(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::GetHandoffStatus(grpc::ServerContext* context,
                                                     const v1::GetHandoffStatusRequest* request,
                                                     v1::GetHandoffStatusResponse* response) {
  AUTHORIZE("GetHandoffStatus");
  return ReplyWith(manager_->HandoffStatus(*request), response);
}

grpc::Status SupervisorServiceImpl::ReportOffsetOutOfRange(grpc::ServerContext* context, const v1::ReportOffsetOutOfRangeRequest* request,
    v1::ReportOffsetOutOfRangeResponse* response) {
  AUTHORIZE("ReportOffsetOutOfRange");
  return ReplyWith(manager_->OffsetOutOfRange(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::RegisterWorker(grpc::ServerContext* context,
                                                   const v1::RegisterWorkerRequest* request,
                                                   v1::RegisterWorkerResponse* response) {
  AUTHORIZE("RegisterWorker");
  return ReplyWith(manager_->RegisterWorker(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::WorkerHeartbeat(grpc::ServerContext* context,
                                                    const v1::WorkerHeartbeatRequest* request,
                                                    v1::WorkerHeartbeatResponse* response) {
  AUTHORIZE("WorkerHeartbeat");
  return ReplyWith(manager_->Heartbeat(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::ReportTaskStatus(grpc::ServerContext* context,
                                                     const v1::ReportTaskStatusRequest* request,
                                                     v1::ReportTaskStatusResponse*) {
  AUTHORIZE("ReportTaskStatus");
  return ToGrpcStatus(manager_->ReportTaskStatus(*request, caller));
}

grpc::Status SupervisorServiceImpl::MarkSegmentsLoaded(grpc::ServerContext* context,
                                                       const v1::MarkSegmentsLoadedRequest* request,
                                                       v1::MarkSegmentsLoadedResponse* response) {
  AUTHORIZE("MarkSegmentsLoaded");
  return ReplyWith(manager_->MarkLoaded(*request), response);
}

grpc::Status SupervisorServiceImpl::SubmitSupervisor(grpc::ServerContext* context,
                                                     const v1::SubmitSupervisorRequest* request,
                                                     v1::SubmitSupervisorResponse* response) {
  AUTHORIZE("SubmitSupervisor");
  return ReplyWith(manager_->Submit(*request), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisor(grpc::ServerContext* context,
                                                  const v1::GetSupervisorRequest* request,
                                                  v1::GetSupervisorResponse* response) {
  AUTHORIZE("GetSupervisor");
  return ReplyWith(manager_->Get(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::ListSupervisors(grpc::ServerContext* context,
                                                    const v1::ListSupervisorsRequest* request,
                                                    v1::ListSupervisorsResponse* response) {
  AUTHORIZE("ListSupervisors");
  return ReplyWith(manager_->List(), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisorHistory(grpc::ServerContext* context, const v1::GetSupervisorHistoryRequest* request,
    v1::GetSupervisorHistoryResponse* response) {
  AUTHORIZE("GetSupervisorHistory");
  return ReplyWith(manager_->History(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisorStatus(grpc::ServerContext* context,
                                                        const v1::GetSupervisorStatusRequest* request,
                                                        v1::GetSupervisorStatusResponse* response) {
  AUTHORIZE("GetSupervisorStatus");
  return ReplyWith(manager_->Status(request->datasource()), response->mutable_status());
}

grpc::Status SupervisorServiceImpl::SuspendSupervisor(grpc::ServerContext* context,
                                                      const v1::SuspendSupervisorRequest* request,
                                                      v1::SuspendSupervisorResponse* response) {
  AUTHORIZE("SuspendSupervisor");
  return ReplyWith(manager_->Suspend(request->datasource()), response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::ResumeSupervisor(grpc::ServerContext* context,
                                                     const v1::ResumeSupervisorRequest* request,
                                                     v1::ResumeSupervisorResponse* response) {
  AUTHORIZE("ResumeSupervisor");
  return ReplyWith(manager_->Resume(request->datasource()), response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::ResetSupervisor(grpc::ServerContext* context,
                                                    const v1::ResetSupervisorRequest* request,
                                                    v1::ResetSupervisorResponse* response) {
  AUTHORIZE("ResetSupervisor");
  return ReplyWith(manager_->Reset(request->datasource()), response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::ResetOffsets(grpc::ServerContext* context,
                                                 const v1::ResetOffsetsRequest* request,
                                                 v1::ResetOffsetsResponse* response) {
  AUTHORIZE("ResetOffsets");
  return ReplyWith(manager_->ResetOffsets(*request), response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::TerminateSupervisor(grpc::ServerContext* context,
                                                        const v1::TerminateSupervisorRequest* request,
                                                        v1::TerminateSupervisorResponse* response) {
  AUTHORIZE("TerminateSupervisor");
  return ReplyWith(manager_->Terminate(request->datasource()), response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::ListSegments(grpc::ServerContext* context,
                                                 const v1::ListSegmentsRequest* request,
                                                 v1::ListSegmentsResponse* response) {
  AUTHORIZE("ListSegments");
  return ReplyWith(manager_->ListSegments(*request), response);
}

grpc::Status SupervisorServiceImpl::ListTasks(grpc::ServerContext* context,
                                              const v1::SupervisorServiceListTasksRequest* request,
                                              v1::SupervisorServiceListTasksResponse* response) {
  AUTHORIZE("ListTasks");
  return ReplyWith(manager_->ListTasks(*request), response);
}

grpc::Status SupervisorServiceImpl::ListWorkers(grpc::ServerContext* context, const v1::ListWorkersRequest* request,
                                                v1::ListWorkersResponse* response) {
  AUTHORIZE("ListWorkers");
  *response = manager_->ListWorkers();
  return grpc::Status::OK;
}

grpc::Status SupervisorServiceImpl::GetCommitLog(grpc::ServerContext* context,
                                                 const v1::GetCommitLogRequest* request,
                                                 v1::GetCommitLogResponse* response) {
  AUTHORIZE("GetCommitLog");
  return ReplyWith(manager_->CommitLog(request->datasource()), response);
}

}  // namespace sluice::supervisor
