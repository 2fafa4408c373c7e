// The task worker's view of the supervisor (sluice.v1.SupervisorService):
// a plain C++ interface so the core logic does not depend on gRPC (the real
// implementation over a channel is task/grpc_supervisor_client.h). Every call
// has a deadline; errors come back as absl::Status with the supervisor's code
// (UNAVAILABLE and DEADLINE_EXCEEDED when it cannot be reached or did not
// answer in time).
//
// Thread-safe: the read loops, publishers and the heartbeater share one.
#ifndef SLUICE_TASK_SUPERVISOR_CLIENT_H_
#define SLUICE_TASK_SUPERVISOR_CLIENT_H_

#include "absl/status/statusor.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::task {

class SupervisorClient {
 public:
  virtual ~SupervisorClient() = default;

  virtual absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> CheckpointDataSourceMetadata(
      const v1::CheckpointDataSourceMetadataRequest& request) = 0;
  virtual absl::StatusOr<v1::AllocateSegmentResponse> AllocateSegment(
      const v1::AllocateSegmentRequest& request) = 0;
  virtual absl::StatusOr<v1::PublishSegmentsResponse> PublishSegments(
      const v1::PublishSegmentsRequest& request) = 0;
  virtual absl::StatusOr<v1::GetPublishedSegmentsResponse> GetPublishedSegments(
      const v1::GetPublishedSegmentsRequest& request) = 0;
  virtual absl::StatusOr<v1::ListSegmentsResponse> ListSegments(
      const v1::ListSegmentsRequest& request) = 0;
  virtual absl::StatusOr<v1::GetHandoffStatusResponse> GetHandoffStatus(
      const v1::GetHandoffStatusRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> ReportOffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest& request) = 0;
  virtual absl::StatusOr<v1::RegisterWorkerResponse> RegisterWorker(
      const v1::RegisterWorkerRequest& request) = 0;
  virtual absl::StatusOr<v1::WorkerHeartbeatResponse> WorkerHeartbeat(
      const v1::WorkerHeartbeatRequest& request) = 0;
  virtual absl::Status ReportTaskStatus(const v1::ReportTaskStatusRequest& request) = 0;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_SUPERVISOR_CLIENT_H_
