#include "task/grpc_supervisor_client.h"

#include <grpcpp/grpcpp.h>

#include "common/auth/grpc_auth.h"
#include "common/grpc_status.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice::task {
namespace {

class GrpcSupervisorClient final : public SupervisorClient {
 public:
  explicit GrpcSupervisorClient(GrpcSupervisorClientOptions options)
      : options_(std::move(options)),
        stub_(v1::SupervisorService::NewStub(
            auth::NewChannel(options_.address, options_.credentials, options_.auth))) {}

  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> CheckpointDataSourceMetadata(
      const v1::CheckpointDataSourceMetadataRequest& request) override {
    return Call(&Stub::CheckpointDataSourceMetadata, request, options_.call_timeout);
  }
  absl::StatusOr<v1::AllocateSegmentResponse> AllocateSegment(
      const v1::AllocateSegmentRequest& request) override {
    return Call(&Stub::AllocateSegment, request, options_.call_timeout);
  }
  absl::StatusOr<v1::PublishSegmentsResponse> PublishSegments(
      const v1::PublishSegmentsRequest& request) override {
    return Call(&Stub::PublishSegments, request, options_.publish_timeout);
  }
  absl::StatusOr<v1::GetPublishedSegmentsResponse> GetPublishedSegments(
      const v1::GetPublishedSegmentsRequest& request) override {
    return Call(&Stub::GetPublishedSegments, request, options_.call_timeout);
  }
  absl::StatusOr<v1::ListSegmentsResponse> ListSegments(
      const v1::ListSegmentsRequest& request) override {
    return Call(&Stub::ListSegments, request, options_.call_timeout);
  }
  absl::StatusOr<v1::GetHandoffStatusResponse> GetHandoffStatus(
      const v1::GetHandoffStatusRequest& request) override {
    return Call(&Stub::GetHandoffStatus, request, options_.call_timeout);
  }
  absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> ReportOffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest& request) override {
    return Call(&Stub::ReportOffsetOutOfRange, request, options_.call_timeout);
  }
  absl::StatusOr<v1::RegisterWorkerResponse> RegisterWorker(
      const v1::RegisterWorkerRequest& request) override {
    return Call(&Stub::RegisterWorker, request, options_.call_timeout);
  }
  absl::StatusOr<v1::WorkerHeartbeatResponse> WorkerHeartbeat(
      const v1::WorkerHeartbeatRequest& request) override {
    return Call(&Stub::WorkerHeartbeat, request, options_.call_timeout);
  }
  absl::Status ReportTaskStatus(const v1::ReportTaskStatusRequest& request) override {
    return Call(&Stub::ReportTaskStatus, request, options_.call_timeout).status();
  }

 private:
  using Stub = v1::SupervisorService::Stub;

  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& request, absl::Duration timeout) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    Response response;
    const grpc::Status status = (stub_.get()->*method)(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  const GrpcSupervisorClientOptions options_;
  const std::unique_ptr<Stub> stub_;
};

}  // namespace

std::unique_ptr<SupervisorClient> NewGrpcSupervisorClient(GrpcSupervisorClientOptions options) {
  return std::make_unique<GrpcSupervisorClient>(std::move(options));
}

}  // namespace sluice::task
