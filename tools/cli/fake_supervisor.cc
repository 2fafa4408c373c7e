#include "tools/cli/fake_supervisor.h"

#include <utility>

namespace sluice {
namespace sluicectl {

absl::StatusOr<std::unique_ptr<FakeSupervisor>> FakeSupervisor::Start() {
  std::unique_ptr<FakeSupervisor> fake(new FakeSupervisor());
  GrpcServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.services = {fake.get()};
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start(std::move(options));
  if (!server.ok()) return server.status();
  fake->server_ = *std::move(server);
  fake->server_->SetServing(true);
  return fake;
}

FakeSupervisor::~FakeSupervisor() {
  if (server_ != nullptr) server_->Shutdown(absl::Seconds(1));
}

void FakeSupervisor::SetResponse(const std::string& method,
                                 const google::protobuf::Message& response) {
  absl::MutexLock lock(&mu_);
  responses_[method] = response.SerializeAsString();
  errors_.erase(method);
}

void FakeSupervisor::SetError(const std::string& method, grpc::Status status) {
  absl::MutexLock lock(&mu_);
  errors_[method] = std::move(status);
  responses_.erase(method);
}

std::vector<std::string> FakeSupervisor::Calls() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, bytes] : calls_) names.push_back(name);
  return names;
}

grpc::Status FakeSupervisor::Answer(const std::string& method,
                                    const google::protobuf::Message& request,
                                    google::protobuf::Message* response) {
  absl::MutexLock lock(&mu_);
  calls_.emplace_back(method, request.SerializeAsString());
  if (auto it = errors_.find(method); it != errors_.end()) return it->second;
  auto it = responses_.find(method);
  if (it == responses_.end()) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "fake supervisor: no response configured for " + method);
  }
  response->ParseFromString(it->second);
  return grpc::Status::OK;
}

}  // namespace sluicectl
}  // namespace sluice
