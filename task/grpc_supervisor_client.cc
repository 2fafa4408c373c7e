#include "task/grpc_supervisor_client.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include "common/auth/grpc_auth.h"
#include "common/grpc_status.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice::task {
namespace {

class GrpcSupervisorClient final : public SupervisorClient {
 public:
  explicit GrpcSupervisorClient(GrpcSupervisorClientOptions options)
      : options_(std::move(options)) {
    for (absl::string_view address : absl::StrSplit(options_.address, ',', absl::SkipWhitespace())) {
      addresses_.emplace_back(absl::StripAsciiWhitespace(address));
      stubs_.push_back(v1::SupervisorService::NewStub(
          auth::NewChannel(addresses_.back(), options_.credentials, options_.auth)));
    }
    if (stubs_.empty()) {  // validated by the worker; keep one stub so calls fail cleanly
      addresses_.push_back(options_.address);
      stubs_.push_back(v1::SupervisorService::NewStub(
          auth::NewChannel(options_.address, options_.credentials, options_.auth)));
    }
  }

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
    const absl::Time deadline = absl::Now() + timeout;
    const size_t n = stubs_.size();
    grpc::Status status;
    for (size_t attempt = 0; attempt < n; ++attempt) {
      const size_t index = current_.load() % n;
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(deadline));
      Response response;
      status = (stubs_[index].get()->*method)(&context, request, &response);
      if (status.ok()) return response;
      if (status.error_code() != grpc::StatusCode::UNAVAILABLE || n == 1) break;
      current_.store(NextIndex(index, context));
      if (absl::Now() >= deadline) break;
    }
    return FromGrpcStatus(status);
  }

  // After UNAVAILABLE from addresses_[index]: the leader it named, if it is
  // one of ours, else the next one.
  size_t NextIndex(size_t index, const grpc::ClientContext& context) const {
    const auto& trailing = context.GetServerTrailingMetadata();
    auto it = trailing.find("sluice-leader-address");
    if (it != trailing.end()) {
      const std::string leader(it->second.data(), it->second.size());
      for (size_t i = 0; i < addresses_.size(); ++i) {
        if (addresses_[i] == leader) return i;
      }
    }
    return (index + 1) % addresses_.size();
  }

  const GrpcSupervisorClientOptions options_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<Stub>> stubs_;
  std::atomic<size_t> current_{0};
};

}  // namespace

std::unique_ptr<SupervisorClient> NewGrpcSupervisorClient(GrpcSupervisorClientOptions options) {
  return std::make_unique<GrpcSupervisorClient>(std::move(options));
}

}  // namespace sluice::task
