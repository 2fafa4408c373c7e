#include "supervisor/supervisor_service.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/auth/grpc_auth.h"
#include "common/grpc_request_check.h"
#include "common/grpc_status.h"

// Every handler starts here: the caller's roles, the request's bounds, then
// whether this supervisor leads (a standby names the leader).
#define AUTHORIZE(method)                                                   \
  SLUICE_AUTHORIZE_CALL(*authorizer_, context, "/sluice.v1.SupervisorService/" method); \
  SLUICE_CHECK_REQUEST(*request, "/sluice.v1.SupervisorService/" method); \
  absl::StatusOr<SupervisorManager*> leading = gate_->Manager();            \
  if (!leading.ok()) return NotLeader(*gate_, context, leading.status());   \
  SupervisorManager* const manager = *leading

namespace sluice::supervisor {
namespace {

grpc::Status NotLeader(const LeadershipGate& gate, grpc::ServerContext* context,
                       const absl::Status& status) {
  const std::string leader = gate.LeaderAddress();
  if (!leader.empty()) context->AddTrailingMetadata(kLeaderAddressMetadata, leader);
  return ToGrpcStatus(status);
}

}  // namespace

grpc::Status SupervisorServiceImpl::CheckpointDataSourceMetadata(grpc::ServerContext* context, const v1::CheckpointDataSourceMetadataRequest* request,
    v1::CheckpointDataSourceMetadataResponse* response) {
  AUTHORIZE("CheckpointDataSourceMetadata");
  return ReplyWith(manager->protocol()->Checkpoint(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::PublishSegments(grpc::ServerContext* context,
                                                    const v1::PublishSegmentsRequest* request,
                                                    v1::PublishSegmentsResponse* response) {
  AUTHORIZE("PublishSegments");
  return ReplyWith(manager->protocol()->Publish(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::GetPublishedSegments(grpc::ServerContext* context, const v1::GetPublishedSegmentsRequest* request,
    v1::GetPublishedSegmentsResponse* response) {
  AUTHORIZE("GetPublishedSegments");
  return ReplyWith(manager->protocol()->GetPublished(*request), response);
}

grpc::Status SupervisorServiceImpl::AllocateSegment(grpc::ServerContext* context,
                                                    const v1::AllocateSegmentRequest* request,
                                                    v1::AllocateSegmentResponse* response) {
  AUTHORIZE("AllocateSegment");
  return ReplyWith(manager->protocol()->Allocate(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::GetHandoffStatus(grpc::ServerContext* context,
                                                     const v1::GetHandoffStatusRequest* request,
                                                     v1::GetHandoffStatusResponse* response) {
  AUTHORIZE("GetHandoffStatus");
  return ReplyWith(manager->protocol()->HandoffStatus(*request), response);
}

grpc::Status SupervisorServiceImpl::ReportOffsetOutOfRange(grpc::ServerContext* context, const v1::ReportOffsetOutOfRangeRequest* request,
    v1::ReportOffsetOutOfRangeResponse* response) {
  AUTHORIZE("ReportOffsetOutOfRange");
  return ReplyWith(manager->protocol()->OffsetOutOfRange(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::RegisterWorker(grpc::ServerContext* context,
                                                   const v1::RegisterWorkerRequest* request,
                                                   v1::RegisterWorkerResponse* response) {
  AUTHORIZE("RegisterWorker");
  return ReplyWith(manager->protocol()->RegisterWorker(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::WorkerHeartbeat(grpc::ServerContext* context,
                                                    const v1::WorkerHeartbeatRequest* request,
                                                    v1::WorkerHeartbeatResponse* response) {
  AUTHORIZE("WorkerHeartbeat");
  return ReplyWith(manager->protocol()->Heartbeat(*request, caller), response);
}

grpc::Status SupervisorServiceImpl::ReportTaskStatus(grpc::ServerContext* context,
                                                     const v1::ReportTaskStatusRequest* request,
                                                     v1::ReportTaskStatusResponse*) {
  AUTHORIZE("ReportTaskStatus");
  return ToGrpcStatus(manager->protocol()->ReportTaskStatus(*request, caller));
}

grpc::Status SupervisorServiceImpl::MarkSegmentsLoaded(grpc::ServerContext* context,
                                                       const v1::MarkSegmentsLoadedRequest* request,
                                                       v1::MarkSegmentsLoadedResponse* response) {
  AUTHORIZE("MarkSegmentsLoaded");
  return ReplyWith(manager->protocol()->MarkLoaded(*request), response);
}

grpc::Status SupervisorServiceImpl::SubmitSupervisor(grpc::ServerContext* context,
                                                     const v1::SubmitSupervisorRequest* request,
                                                     v1::SubmitSupervisorResponse* response) {
  AUTHORIZE("SubmitSupervisor");
  return ReplyWith(manager->specs()->Submit(*request), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisor(grpc::ServerContext* context,
                                                  const v1::GetSupervisorRequest* request,
                                                  v1::GetSupervisorResponse* response) {
  AUTHORIZE("GetSupervisor");
  return ReplyWith(manager->reads()->Get(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::ListSupervisors(grpc::ServerContext* context,
                                                    const v1::ListSupervisorsRequest* request,
                                                    v1::ListSupervisorsResponse* response) {
  AUTHORIZE("ListSupervisors");
  return ReplyWith(manager->reads()->List(), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisorHistory(grpc::ServerContext* context, const v1::GetSupervisorHistoryRequest* request,
    v1::GetSupervisorHistoryResponse* response) {
  AUTHORIZE("GetSupervisorHistory");
  return ReplyWith(manager->reads()->History(request->datasource()), response);
}

grpc::Status SupervisorServiceImpl::GetSupervisorStatus(grpc::ServerContext* context,
                                                        const v1::GetSupervisorStatusRequest* request,
                                                        v1::GetSupervisorStatusResponse* response) {
  AUTHORIZE("GetSupervisorStatus");
  return ReplyWith(manager->reads()->Status(request->datasource()), response->mutable_status());
}

grpc::Status SupervisorServiceImpl::SuspendSupervisor(grpc::ServerContext* context,
                                                      const v1::SuspendSupervisorRequest* request,
                                                      v1::SuspendSupervisorResponse* response) {
  AUTHORIZE("SuspendSupervisor");
  return ReplyWith(manager->specs()->Suspend(request->datasource()),
                   response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::ResumeSupervisor(grpc::ServerContext* context,
                                                     const v1::ResumeSupervisorRequest* request,
                                                     v1::ResumeSupervisorResponse* response) {
  AUTHORIZE("ResumeSupervisor");
  return ReplyWith(manager->specs()->Resume(request->datasource()),
                   response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::ResetSupervisor(grpc::ServerContext* context,
                                                    const v1::ResetSupervisorRequest* request,
                                                    v1::ResetSupervisorResponse* response) {
  AUTHORIZE("ResetSupervisor");
  return ReplyWith(manager->specs()->Reset(request->datasource()),
                   response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::ResetOffsets(grpc::ServerContext* context,
                                                 const v1::ResetOffsetsRequest* request,
                                                 v1::ResetOffsetsResponse* response) {
  AUTHORIZE("ResetOffsets");
  return ReplyWith(manager->specs()->ResetOffsets(*request), response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::HandoffTaskGroups(grpc::ServerContext* context,
                                                      const v1::HandoffTaskGroupsRequest* request,
                                                      v1::HandoffTaskGroupsResponse* response) {
  AUTHORIZE("HandoffTaskGroups");
  return ReplyWith(manager->specs()->Handoff(*request), response);
}

grpc::Status SupervisorServiceImpl::CompactDataSource(grpc::ServerContext* context,
                                                      const v1::CompactDataSourceRequest* request,
                                                      v1::CompactDataSourceResponse* response) {
  AUTHORIZE("CompactDataSource");
  return ReplyWith(manager->compaction()->Compact(*request), response);
}

grpc::Status SupervisorServiceImpl::TerminateSupervisor(grpc::ServerContext* context,
                                                        const v1::TerminateSupervisorRequest* request,
                                                        v1::TerminateSupervisorResponse* response) {
  AUTHORIZE("TerminateSupervisor");
  return ReplyWith(manager->specs()->Terminate(request->datasource()),
                   response->mutable_supervisor());
}

grpc::Status SupervisorServiceImpl::ListSegments(grpc::ServerContext* context,
                                                 const v1::ListSegmentsRequest* request,
                                                 v1::ListSegmentsResponse* response) {
  AUTHORIZE("ListSegments");
  return ReplyWith(manager->reads()->ListSegments(*request), response);
}

grpc::Status SupervisorServiceImpl::ListTasks(grpc::ServerContext* context,
                                              const v1::SupervisorServiceListTasksRequest* request,
                                              v1::SupervisorServiceListTasksResponse* response) {
  AUTHORIZE("ListTasks");
  return ReplyWith(manager->reads()->ListTasks(*request), response);
}

grpc::Status SupervisorServiceImpl::ListWorkers(grpc::ServerContext* context, const v1::ListWorkersRequest* request,
                                                v1::ListWorkersResponse* response) {
  AUTHORIZE("ListWorkers");
  *response = manager->reads()->ListWorkers();
  return grpc::Status::OK;
}

grpc::Status SupervisorServiceImpl::GetCommitLog(grpc::ServerContext* context,
                                                 const v1::GetCommitLogRequest* request,
                                                 v1::GetCommitLogResponse* response) {
  AUTHORIZE("GetCommitLog");
  return ReplyWith(manager->reads()->CommitLog(request->datasource()), response);
}

}  // namespace sluice::supervisor
