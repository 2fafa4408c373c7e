// gRPC handlers of sluice.v1.SupervisorService. Thin: authorize the call
// (every handler, by the method's roles), call the core with the caller, map
// the status once.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_SERVICE_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_SERVICE_H_

#include <memory>

#include "common/auth/authorizer.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "supervisor/leadership_gate.h"
#include "supervisor/supervisor_manager.h"

namespace sluice::supervisor {

class SupervisorServiceImpl final : public v1::SupervisorService::Service {
 public:
  // One supervisor, always leading. `manager` and `authorizer` must outlive
  // the service.
  SupervisorServiceImpl(SupervisorManager* manager, const auth::Authorizer* authorizer)
      : owned_gate_(std::make_unique<LeadershipGate>(manager)),
        gate_(owned_gate_.get()),
        authorizer_(authorizer) {}
  // Leader election: calls reach the gate's manager while this supervisor
  // leads; a standby answers UNAVAILABLE naming the leader. `gate` and
  // `authorizer` must outlive the service.
  SupervisorServiceImpl(const LeadershipGate* gate, const auth::Authorizer* authorizer)
      : gate_(gate), authorizer_(authorizer) {}

  grpc::Status CheckpointDataSourceMetadata(grpc::ServerContext*,
                                            const v1::CheckpointDataSourceMetadataRequest*,
                                            v1::CheckpointDataSourceMetadataResponse*) override;
  grpc::Status PublishSegments(grpc::ServerContext*, const v1::PublishSegmentsRequest*,
                               v1::PublishSegmentsResponse*) override;
  grpc::Status GetPublishedSegments(grpc::ServerContext*, const v1::GetPublishedSegmentsRequest*,
                                    v1::GetPublishedSegmentsResponse*) override;
  grpc::Status AllocateSegment(grpc::ServerContext*, const v1::AllocateSegmentRequest*,
                               v1::AllocateSegmentResponse*) override;
  grpc::Status GetHandoffStatus(grpc::ServerContext*, const v1::GetHandoffStatusRequest*,
                                v1::GetHandoffStatusResponse*) override;
  grpc::Status ReportOffsetOutOfRange(grpc::ServerContext*,
                                      const v1::ReportOffsetOutOfRangeRequest*,
                                      v1::ReportOffsetOutOfRangeResponse*) override;
  grpc::Status RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest*,
                              v1::RegisterWorkerResponse*) override;
  grpc::Status WorkerHeartbeat(grpc::ServerContext*, const v1::WorkerHeartbeatRequest*,
                               v1::WorkerHeartbeatResponse*) override;
  grpc::Status ReportTaskStatus(grpc::ServerContext*, const v1::ReportTaskStatusRequest*,
                                v1::ReportTaskStatusResponse*) override;
  grpc::Status MarkSegmentsLoaded(grpc::ServerContext*, const v1::MarkSegmentsLoadedRequest*,
                                  v1::MarkSegmentsLoadedResponse*) override;
  grpc::Status SubmitSupervisor(grpc::ServerContext*, const v1::SubmitSupervisorRequest*,
                                v1::SubmitSupervisorResponse*) override;
  grpc::Status GetSupervisor(grpc::ServerContext*, const v1::GetSupervisorRequest*,
                             v1::GetSupervisorResponse*) override;
  grpc::Status ListSupervisors(grpc::ServerContext*, const v1::ListSupervisorsRequest*,
                               v1::ListSupervisorsResponse*) override;
  grpc::Status GetSupervisorHistory(grpc::ServerContext*, const v1::GetSupervisorHistoryRequest*,
                                    v1::GetSupervisorHistoryResponse*) override;
  grpc::Status GetSupervisorStatus(grpc::ServerContext*, const v1::GetSupervisorStatusRequest*,
                                   v1::GetSupervisorStatusResponse*) override;
  grpc::Status SuspendSupervisor(grpc::ServerContext*, const v1::SuspendSupervisorRequest*,
                                 v1::SuspendSupervisorResponse*) override;
  grpc::Status ResumeSupervisor(grpc::ServerContext*, const v1::ResumeSupervisorRequest*,
                                v1::ResumeSupervisorResponse*) override;
  grpc::Status ResetSupervisor(grpc::ServerContext*, const v1::ResetSupervisorRequest*,
                               v1::ResetSupervisorResponse*) override;
  grpc::Status ResetOffsets(grpc::ServerContext*, const v1::ResetOffsetsRequest*,
                            v1::ResetOffsetsResponse*) override;
  grpc::Status HandoffTaskGroups(grpc::ServerContext*, const v1::HandoffTaskGroupsRequest*,
                                 v1::HandoffTaskGroupsResponse*) override;
  grpc::Status CompactDataSource(grpc::ServerContext*, const v1::CompactDataSourceRequest*,
                                 v1::CompactDataSourceResponse*) override;
  grpc::Status TerminateSupervisor(grpc::ServerContext*, const v1::TerminateSupervisorRequest*,
                                   v1::TerminateSupervisorResponse*) override;
  grpc::Status ListSegments(grpc::ServerContext*, const v1::ListSegmentsRequest*,
                            v1::ListSegmentsResponse*) override;
  grpc::Status ListTasks(grpc::ServerContext*, const v1::SupervisorServiceListTasksRequest*,
                         v1::SupervisorServiceListTasksResponse*) override;
  grpc::Status ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest*,
                           v1::ListWorkersResponse*) override;
  grpc::Status GetCommitLog(grpc::ServerContext*, const v1::GetCommitLogRequest*,
                            v1::GetCommitLogResponse*) override;

 private:
  const std::unique_ptr<LeadershipGate> owned_gate_;
  const LeadershipGate* const gate_;
  const auth::Authorizer* const authorizer_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_SERVICE_H_
