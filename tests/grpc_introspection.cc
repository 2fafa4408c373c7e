#include "tests/grpc_introspection.h"

#include <grpcpp/generic/generic_stub.h>

#include "absl/synchronization/mutex.h"

#include <google/protobuf/descriptor.pb.h>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"

namespace sluice::testing {

using grpc::reflection::v1alpha::ServerReflection;
using grpc::reflection::v1alpha::ServerReflectionRequest;
using grpc::reflection::v1alpha::ServerReflectionResponse;

absl::StatusOr<std::string> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                        const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
}

absl::StatusOr<std::map<std::string, std::set<std::string>>> ReflectServices(
    const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = ServerReflection::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = stub->ServerReflectionInfo(&context);

  ServerReflectionRequest list;
  list.set_list_services("*");
  ServerReflectionResponse response;
  if (!stream->Write(list) || !stream->Read(&response)) {
    return FromGrpcStatus(stream->Finish());
  }
  if (!response.has_list_services_response()) {
    return absl::InternalError("reflection: no list_services_response");
  }
  std::map<std::string, std::set<std::string>> services;
  for (const auto& service : response.list_services_response().service()) {
    ServerReflectionRequest by_symbol;
    by_symbol.set_file_containing_symbol(service.name());
    ServerReflectionResponse files;
    if (!stream->Write(by_symbol) || !stream->Read(&files)) {
      return FromGrpcStatus(stream->Finish());
    }
    if (files.has_error_response()) {
      return absl::InternalError(absl::StrCat("reflection error for ", service.name(), ": ",
                                              files.error_response().error_message()));
    }
    std::set<std::string>& methods = services[service.name()];
    for (const std::string& bytes : files.file_descriptor_response().file_descriptor_proto()) {
      google::protobuf::FileDescriptorProto file;
      if (!file.ParseFromString(bytes)) return absl::InternalError("bad FileDescriptorProto");
      for (const auto& svc : file.service()) {
        const std::string full =
            file.package().empty() ? svc.name() : absl::StrCat(file.package(), ".", svc.name());
        if (full != service.name()) continue;
        for (const auto& method : svc.method()) methods.insert(method.name());
      }
    }
  }
  stream->WritesDone();
  grpc::Status finish = stream->Finish();
  if (!finish.ok()) return FromGrpcStatus(finish);
  return services;
}

grpc::Status CallWithEmptyRequest(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& path) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1), response;
  grpc::Status status;
  absl::Mutex mu;
  bool done = false;
  stub.UnaryCall(&context, path, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   absl::MutexLock lock(&mu);
                   status = std::move(s);
                   done = true;
                 });
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(&done));
  return status;
}

}  // namespace sluice::testing
