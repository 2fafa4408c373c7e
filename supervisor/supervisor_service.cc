#include "supervisor/supervisor_service.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/names.h"
#include "common/spec.h"

namespace sluice::supervisor {
namespace {

// Not built yet: says so plainly instead of pretending to succeed.
grpc::Status NotYet(absl::string_view method) {
  return ToGrpcStatus(absl::UnimplementedError(absl::StrCat(
      "SupervisorService.", method, " is not implemented yet in this build of sluice-supervisor")));
}

}  // namespace

grpc::Status SupervisorServiceImpl::CheckpointDataSourceMetadata(grpc::ServerContext*, const v1::CheckpointDataSourceMetadataRequest* request,
                                       v1::CheckpointDataSourceMetadataResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("CheckpointDataSourceMetadata");
}

grpc::Status SupervisorServiceImpl::PublishSegments(grpc::ServerContext*, const v1::PublishSegmentsRequest* request,
                                       v1::PublishSegmentsResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("PublishSegments");
}

grpc::Status SupervisorServiceImpl::GetPublishedSegments(grpc::ServerContext*, const v1::GetPublishedSegmentsRequest* request,
                                       v1::GetPublishedSegmentsResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetPublishedSegments");
}

grpc::Status SupervisorServiceImpl::AllocateSegment(grpc::ServerContext*, const v1::AllocateSegmentRequest* request,
                                       v1::AllocateSegmentResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("AllocateSegment");
}

grpc::Status SupervisorServiceImpl::GetHandoffStatus(grpc::ServerContext*, const v1::GetHandoffStatusRequest* request,
                                       v1::GetHandoffStatusResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetHandoffStatus");
}

grpc::Status SupervisorServiceImpl::ReportOffsetOutOfRange(grpc::ServerContext*, const v1::ReportOffsetOutOfRangeRequest* request,
                                       v1::ReportOffsetOutOfRangeResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("ReportOffsetOutOfRange");
}

grpc::Status SupervisorServiceImpl::RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest* request,
                                       v1::RegisterWorkerResponse*) {
  (void)request;
  return NotYet("RegisterWorker");
}

grpc::Status SupervisorServiceImpl::WorkerHeartbeat(grpc::ServerContext*, const v1::WorkerHeartbeatRequest* request,
                                       v1::WorkerHeartbeatResponse*) {
  (void)request;
  return NotYet("WorkerHeartbeat");
}

grpc::Status SupervisorServiceImpl::ReportTaskStatus(grpc::ServerContext*, const v1::ReportTaskStatusRequest* request,
                                       v1::ReportTaskStatusResponse*) {
  (void)request;
  return NotYet("ReportTaskStatus");
}

grpc::Status SupervisorServiceImpl::MarkSegmentsLoaded(grpc::ServerContext*, const v1::MarkSegmentsLoadedRequest* request,
                                       v1::MarkSegmentsLoadedResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("MarkSegmentsLoaded");
}

grpc::Status SupervisorServiceImpl::SubmitSupervisor(grpc::ServerContext*, const v1::SubmitSupervisorRequest* request,
                                       v1::SubmitSupervisorResponse*) {
  if (auto spec = NormalizeSpec(request->spec()); !spec.ok()) return ToGrpcStatus(spec.status());
  return NotYet("SubmitSupervisor");
}

grpc::Status SupervisorServiceImpl::GetSupervisor(grpc::ServerContext*, const v1::SupervisorRef* request,
                                       v1::SubmitSupervisorResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetSupervisor");
}

grpc::Status SupervisorServiceImpl::ListSupervisors(grpc::ServerContext*, const v1::ListSupervisorsRequest* request,
                                       v1::ListSupervisorsResponse*) {
  (void)request;
  return NotYet("ListSupervisors");
}

grpc::Status SupervisorServiceImpl::GetSupervisorHistory(grpc::ServerContext*, const v1::SupervisorRef* request,
                                       v1::GetSupervisorHistoryResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetSupervisorHistory");
}

grpc::Status SupervisorServiceImpl::GetSupervisorStatus(grpc::ServerContext*, const v1::SupervisorRef* request,
                                       v1::SupervisorStatus*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetSupervisorStatus");
}

grpc::Status SupervisorServiceImpl::SuspendSupervisor(grpc::ServerContext*, const v1::SupervisorRef* request,
                                       v1::SupervisorSummary*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("SuspendSupervisor");
}

grpc::Status SupervisorServiceImpl::ResumeSupervisor(grpc::ServerContext*, const v1::SupervisorRef* request,
                                       v1::SupervisorSummary*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("ResumeSupervisor");
}

grpc::Status SupervisorServiceImpl::ResetSupervisor(grpc::ServerContext*, const v1::SupervisorRef* request,
                                       v1::SupervisorSummary*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("ResetSupervisor");
}

grpc::Status SupervisorServiceImpl::ResetOffsets(grpc::ServerContext*, const v1::ResetOffsetsRequest* request,
                                       v1::SupervisorSummary*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("ResetOffsets");
}

grpc::Status SupervisorServiceImpl::TerminateSupervisor(grpc::ServerContext*, const v1::SupervisorRef* request,
                                       v1::SupervisorSummary*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("TerminateSupervisor");
}

grpc::Status SupervisorServiceImpl::ListSegments(grpc::ServerContext*, const v1::ListSegmentsRequest* request,
                                       v1::ListSegmentsResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("ListSegments");
}

grpc::Status SupervisorServiceImpl::ListTasks(grpc::ServerContext*, const v1::ListSupervisorTasksRequest* request,
                                       v1::ListSupervisorTasksResponse*) {
  (void)request;
  return NotYet("ListTasks");
}

grpc::Status SupervisorServiceImpl::ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest* request,
                                       v1::ListWorkersResponse*) {
  (void)request;
  return NotYet("ListWorkers");
}

grpc::Status SupervisorServiceImpl::GetCommitLog(grpc::ServerContext*, const v1::SupervisorRef* request,
                                       v1::GetCommitLogResponse*) {
  if (absl::Status s = ValidateDatasource(request->datasource()); !s.ok()) return ToGrpcStatus(s);
  return NotYet("GetCommitLog");
}

}  // namespace sluice::supervisor
