#include "common/grpc_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <signal.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.pb.h"
#include "common/metrics/grpc_server_metrics.h"
#include "common/unparseable_request.h"

namespace sluice {
namespace {

// Splits "host:port" (host may be "[v6]"), keeping the host as written.
absl::StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", address, "\" is not HOST:PORT (PORT 0-65535)"));
  }
  return std::make_pair(address.substr(0, colon), port);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(GrpcServerOptions options) {
  if (options.max_request_bytes <= 0 || options.max_response_bytes <= 0 ||
      options.max_threads < 2 || options.max_streams_per_connection < 1) {
    return absl::InvalidArgumentError(
        "gRPC server bounds must be positive (and at least 2 threads)");
  }
  auto host_port = SplitHostPort(options.listen_address);
  if (!host_port.ok()) return host_port.status();

  grpc::EnableDefaultHealthCheckService(true);
  // gRPC's default health service is built on upb, so grpc/health/v1/health.proto
  // is not in protobuf's generated pool, where reflection looks: `grpcurl ...
  // grpc.health.v1.Health/Check` then fails with "target server does not
  // expose service". Touching the generated descriptor links and registers it.
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(
      options.listen_address,
      options.credentials ? options.credentials : grpc::InsecureServerCredentials(), &bound_port);
  builder.SetMaxReceiveMessageSize(options.max_request_bytes);
  builder.SetMaxSendMessageSize(options.max_response_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_streams_per_connection);
  grpc::ResourceQuota quota("sluice-grpc-server");
  quota.SetMaxThreads(options.max_threads);
  builder.SetResourceQuota(quota);
  for (grpc::Service* service : options.services) builder.RegisterService(service);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> f;
  f.push_back(NewUnparseableRequestInterceptorFactory());
  if (options.metrics != nullptr) f.push_back(metrics::NewGrpcServerMetricsFactory(options.metrics));
  builder.experimental().SetInterceptorCreators(std::move(f));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen_address,
                                               " (address in use or not local?)"));
  }
  // The health of "" (the whole server) is what probes and clients ask for.
  auto result = std::unique_ptr<GrpcServer>(new GrpcServer(
      std::move(server), bound_port, absl::StrCat(host_port->first, ":", bound_port)));
  result->SetServing(false);
  return result;
}

GrpcServer::GrpcServer(std::unique_ptr<grpc::Server> server, int port, std::string address)
    : server_(std::move(server)), port_(port), address_(std::move(address)) {}

GrpcServer::~GrpcServer() { Shutdown(absl::ZeroDuration()); }

void GrpcServer::SetServing(bool serving) {
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus(serving);
}

void GrpcServer::SetServiceServing(const std::string& service, bool serving) {
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus(service, serving);
}

void GrpcServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  SetServing(false);
  if (auto* health = server_->GetHealthCheckService()) health->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(grace));
  server_->Wait();
}

void BlockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForShutdownSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int signal_number = 0;
  while (sigwait(&set, &signal_number) != 0) {
  }
  return signal_number;
}

}  // namespace sluice
