// The task worker's view of the supervisor (sluice.v1.SupervisorService):
// an interface so the core logic does not depend on gRPC, and the real
// implementation over a gRPC channel. Every call has a deadline; errors come
// back as absl::Status with the supervisor's code (UNAVAILABLE and
// DEADLINE_EXCEEDED when it cannot be reached or did not answer in time).
//
// Thread-safe: the read loops, publishers and the heartbeater share one.
#ifndef SLUICE_TASK_SUPERVISOR_CLIENT_H_
#define SLUICE_TASK_SUPERVISOR_CLIENT_H_

#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/auth/identity.h"
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

struct GrpcSupervisorClientOptions {
  // host:port of the supervisor.
  std::string address;
  // Null: plaintext.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // The worker's bearer token, sent on every call (empty: none).
  auth::ClientAuth auth;
  // Deadline of every call but PublishSegments.
  absl::Duration call_timeout = absl::Seconds(10);
  // PublishSegments checks deep storage and commits a transaction.
  absl::Duration publish_timeout = absl::Seconds(60);
};

std::unique_ptr<SupervisorClient> NewGrpcSupervisorClient(GrpcSupervisorClientOptions options);

}  // namespace sluice::task

#endif  // SLUICE_TASK_SUPERVISOR_CLIENT_H_
