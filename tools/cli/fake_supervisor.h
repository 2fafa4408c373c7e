// Test double for clients of the SupervisorService admin API (sluicectl): a
// real gRPC server on 127.0.0.1:0 whose admin methods record each request and
// answer with the response (or error) the test configured. Methods without a
// configured answer fail with UNIMPLEMENTED naming the method, so a client
// calling the wrong RPC fails loudly.
//
//   ASSERT_OK_AND_ASSIGN(auto fake, FakeSupervisor::Start());
//   fake->SetResponse("GetSupervisorStatus", status);
//   ... run the client against fake->address() ...
//   EXPECT_EQ(fake->Requests<v1::GetSupervisorStatusRequest>("GetSupervisorStatus")[0].datasource(), "wiki");
//
// Thread-safe. Not copyable.
#ifndef SLUICE_TOOLS_SLUICECTL_FAKE_SUPERVISOR_H_
#define SLUICE_TOOLS_SLUICECTL_FAKE_SUPERVISOR_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_server.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"

namespace sluice {
namespace sluicectl {

class FakeSupervisor final : public v1::SupervisorService::Service {
 public:
  static absl::StatusOr<std::unique_ptr<FakeSupervisor>> Start();
  ~FakeSupervisor() override;

  // host:port it listens on.
  std::string address() const { return server_->address(); }

  // The next calls of `method` (e.g. "ListSegments") answer `response`.
  void SetResponse(const std::string& method, const google::protobuf::Message& response)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The next calls of `method` fail with `status`.
  void SetError(const std::string& method, grpc::Status status) ABSL_LOCKS_EXCLUDED(mu_);

  // The requests `method` received, oldest first.
  template <typename Request>
  std::vector<Request> Requests(const std::string& method) const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    std::vector<Request> out;
    for (const auto& [name, bytes] : calls_) {
      if (name != method) continue;
      out.emplace_back();
      out.back().ParseFromString(bytes);
    }
    return out;
  }
  // Every method called, in order.
  std::vector<std::string> Calls() const ABSL_LOCKS_EXCLUDED(mu_);

#define SLUICE_FAKE_METHOD(Method, Request, Response)                                           \
  grpc::Status Method(grpc::ServerContext*, const v1::Request* request, v1::Response* response) \
      override {                                                                                \
    return Answer(#Method, *request, response);                                                 \
  }
  SLUICE_FAKE_METHOD(SubmitSupervisor, SubmitSupervisorRequest, SubmitSupervisorResponse)
  SLUICE_FAKE_METHOD(GetSupervisor, GetSupervisorRequest, GetSupervisorResponse)
  SLUICE_FAKE_METHOD(ListSupervisors, ListSupervisorsRequest, ListSupervisorsResponse)
  SLUICE_FAKE_METHOD(GetSupervisorHistory, GetSupervisorHistoryRequest, GetSupervisorHistoryResponse)
  SLUICE_FAKE_METHOD(GetSupervisorStatus, GetSupervisorStatusRequest, GetSupervisorStatusResponse)
  SLUICE_FAKE_METHOD(SuspendSupervisor, SuspendSupervisorRequest, SuspendSupervisorResponse)
  SLUICE_FAKE_METHOD(ResumeSupervisor, ResumeSupervisorRequest, ResumeSupervisorResponse)
  SLUICE_FAKE_METHOD(ResetSupervisor, ResetSupervisorRequest, ResetSupervisorResponse)
  SLUICE_FAKE_METHOD(ResetOffsets, ResetOffsetsRequest, ResetOffsetsResponse)
  SLUICE_FAKE_METHOD(HandoffTaskGroups, HandoffTaskGroupsRequest, HandoffTaskGroupsResponse)
  SLUICE_FAKE_METHOD(CompactDataSource, CompactDataSourceRequest, CompactDataSourceResponse)
  SLUICE_FAKE_METHOD(TerminateSupervisor, TerminateSupervisorRequest, TerminateSupervisorResponse)
  SLUICE_FAKE_METHOD(ListSegments, ListSegmentsRequest, ListSegmentsResponse)
  SLUICE_FAKE_METHOD(ListTasks, SupervisorServiceListTasksRequest, SupervisorServiceListTasksResponse)
  SLUICE_FAKE_METHOD(ListWorkers, ListWorkersRequest, ListWorkersResponse)
  SLUICE_FAKE_METHOD(GetCommitLog, GetCommitLogRequest, GetCommitLogResponse)
  SLUICE_FAKE_METHOD(MarkSegmentsLoaded, MarkSegmentsLoadedRequest, MarkSegmentsLoadedResponse)
#undef SLUICE_FAKE_METHOD

 private:
  FakeSupervisor() = default;
  grpc::Status Answer(const std::string& method, const google::protobuf::Message& request,
                      google::protobuf::Message* response) ABSL_LOCKS_EXCLUDED(mu_);

  std::unique_ptr<GrpcServer> server_;

  // Guards what the test configured and what the handlers recorded (handlers
  // run on gRPC threads).
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> responses_ ABSL_GUARDED_BY(mu_);  // Serialized.
  std::map<std::string, grpc::Status> errors_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, std::string>> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluicectl
}  // namespace sluice

#endif  // SLUICE_TOOLS_SLUICECTL_FAKE_SUPERVISOR_H_
