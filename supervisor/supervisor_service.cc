#include "supervisor/supervisor_service.h"

#include "absl/status/statusor.h"
#include "common/grpc_status.h"

namespace sluice::supervisor {
namespace {

// Copies an OK result into the response; maps the status once.
template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status SupervisorServiceImpl::CheckpointDataSourceMetadata(
    grpc::ServerContext*, const v1::CheckpointDataSourceMetadataRequest* request,
    v1::CheckpointDataSourceMetadataResponse* response) {
  return Reply(manager_->Checkpoint(*request), response);
}

grpc::Status SupervisorServiceImpl::PublishSegments(grpc::ServerContext*,
                                                    const v1::PublishSegmentsRequest* request,
                                                    v1::PublishSegmentsResponse* response) {
  return Reply(manager_->Publish(*request), response);
}

grpc::Status SupervisorServiceImpl::GetPublishedSegments(
    grpc::ServerContext*, const v1::GetPublishedSegmentsRequest* request,
    v1::GetPublishedSegmentsResponse* response) {
  return Reply(manager_->GetPublished(*request), response);
}

grpc::Status SupervisorServiceImpl::AllocateSegment(grpc::ServerContext*,
                                                    const v1::AllocateSegmentRequest* request,
                                                    v1::AllocateSegmentResponse* response) {
  return Reply(manager_->Allocate(*request), response);
}

grpc::Status SupervisorServiceImpl::GetHandoffStatus(grpc::ServerContext*,
                                                     const v1::GetHandoffStatusRequest* request,
                                                     v1::GetHandoffStatusResponse* response) {
  return Reply(manager_->HandoffStatus(*request), response);
}

grpc::Status SupervisorServiceImpl::ReportOffsetOutOfRange(
    grpc::ServerContext*, const v1::ReportOffsetOutOfRangeRequest* request,
    v1::ReportOffsetOutOfRangeResponse* response) {
  return Reply(manager_->OffsetOutOfRange(*request), response);
}

grpc::Status SupervisorServiceImpl::RegisterWorker(grpc::ServerContext*,
                                                   const v1::RegisterWorkerRequest* request,
                                                   v1::RegisterWorkerResponse* response) {
  return Reply(manager_->RegisterWorker(*request), response);
}

grpc::Status SupervisorServiceImpl::WorkerHeartbeat(grpc::ServerContext*,
                                                    const v1::WorkerHeartbeatRequest* request,
                                                    v1::WorkerHeartbeatResponse* response) {
  return Reply(manager_->Heartbeat(*request), response);
}

grpc::Status SupervisorServiceImpl::ReportTaskStatus(grpc::ServerContext*,
                                                     const v1::ReportTaskStatusRequest* request,
                                                     v1::ReportTaskStatusResponse*) {
  return ToGrpcStatus(manager_->ReportTaskStatus(*request));
}

grpc::Status SupervisorServiceImpl::MarkSegmentsLoaded(grpc::ServerContext*,
                                                       const v1::MarkSegmentsLoadedRequest* request,
                                                       v1::MarkSegmentsLoadedResponse* response) {
  return Reply(manager_->MarkLoaded(*request), response);
}

grpc::Status SupervisorServiceImpl::SubmitSupervisor(grpc::ServerContext*,
                                                     const v1::SubmitSupervisorRequest* request,
                                                     v1::SubmitSupervisorResponse* response) {
  return Reply(manager_->Submit(request->spec()), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisor(grpc::ServerContext*,
                                                  const v1::SupervisorRef* request,
                                                  v1::SubmitSupervisorResponse* response) {
  return Reply(manager_->Get(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::ListSupervisors(grpc::ServerContext*,
                                                    const v1::ListSupervisorsRequest*,
                                                    v1::ListSupervisorsResponse* response) {
  return Reply(manager_->List(), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisorHistory(
    grpc::ServerContext*, const v1::SupervisorRef* request,
    v1::GetSupervisorHistoryResponse* response) {
  return Reply(manager_->History(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisorStatus(grpc::ServerContext*,
                                                        const v1::SupervisorRef* request,
                                                        v1::SupervisorStatus* response) {
  return Reply(manager_->Status(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::SuspendSupervisor(grpc::ServerContext*,
                                                      const v1::SupervisorRef* request,
                                                      v1::SupervisorSummary* response) {
  return Reply(manager_->Suspend(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::ResumeSupervisor(grpc::ServerContext*,
                                                     const v1::SupervisorRef* request,
                                                     v1::SupervisorSummary* response) {
  return Reply(manager_->Resume(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::ResetSupervisor(grpc::ServerContext*,
                                                    const v1::SupervisorRef* request,
                                                    v1::SupervisorSummary* response) {
  return Reply(manager_->Reset(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::ResetOffsets(grpc::ServerContext*,
                                                 const v1::ResetOffsetsRequest* request,
                                                 v1::SupervisorSummary* response) {
  return Reply(manager_->ResetOffsets(*request), response);
}

grpc::Status SupervisorServiceImpl::TerminateSupervisor(grpc::ServerContext*,
                                                        const v1::SupervisorRef* request,
                                                        v1::SupervisorSummary* response) {
  return Reply(manager_->Terminate(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::ListSegments(grpc::ServerContext*,
                                                 const v1::ListSegmentsRequest* request,
                                                 v1::ListSegmentsResponse* response) {
  return Reply(manager_->ListSegments(*request), response);
}

grpc::Status SupervisorServiceImpl::ListTasks(grpc::ServerContext*,
                                              const v1::ListSupervisorTasksRequest* request,
                                              v1::ListSupervisorTasksResponse* response) {
  return Reply(manager_->ListTasks(*request), response);
}

grpc::Status SupervisorServiceImpl::ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest*,
                                                v1::ListWorkersResponse* response) {
  *response = manager_->ListWorkers();
  return grpc::Status::OK;
}

grpc::Status SupervisorServiceImpl::GetCommitLog(grpc::ServerContext*,
                                                 const v1::SupervisorRef* request,
                                                 v1::GetCommitLogResponse* response) {
  return Reply(manager_->CommitLog(request->datasource()), response);
}

}  // namespace sluice::supervisor
