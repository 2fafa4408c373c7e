// RPCs through a real gRPC server on loopback are counted by method and code.
#include "common/metrics/grpc_server_metrics.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "common/metrics/catalog.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace sluice {
namespace metrics {
namespace {

// Health.Check that knows only the overall server ("").
class HealthService : public grpc::health::v1::Health::Service {
  grpc::Status Check(grpc::ServerContext*, const grpc::health::v1::HealthCheckRequest* req,
                     grpc::health::v1::HealthCheckResponse* resp) override {
    if (!req->service().empty()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown");
    resp->set_status(grpc::health::v1::HealthCheckResponse::SERVING);
    return grpc::Status::OK;
  }
};

TEST(GrpcServerMetrics, CountsRpcsByMethodAndCode) {
  Registry registry;
  HealthService health;
  grpc::ServerBuilder builder;
  builder.RegisterService(&health);
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> factories;
  factories.push_back(NewGrpcServerMetricsFactory(&registry));
  builder.experimental().SetInterceptorCreators(std::move(factories));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_TRUE(stub->Check(&ctx, req, &resp).ok());
  }
  {
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    req.set_service("no.such.Service");
    grpc::health::v1::HealthCheckResponse resp;
    EXPECT_EQ(stub->Check(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  }

  Counter* ok = registry.GetCounter(
      kGrpcServerHandled,
      {{"grpc_service", "grpc.health.v1.Health"}, {"grpc_method", "Check"}, {"grpc_code", "OK"}});
  Counter* not_found =
      registry.GetCounter(kGrpcServerHandled, {{"grpc_service", "grpc.health.v1.Health"},
                                               {"grpc_method", "Check"},
                                               {"grpc_code", "NOT_FOUND"}});
  EXPECT_EQ(ok->Value(), 2u);
  EXPECT_EQ(not_found->Value(), 1u);
  Histogram* seconds =
      registry.GetHistogram(kGrpcServerHandlingSeconds,
                            {{"grpc_service", "grpc.health.v1.Health"}, {"grpc_method", "Check"}});
  EXPECT_EQ(seconds->Read().count, 3u);
  std::string text = registry.Render();
  EXPECT_TRUE(absl::StrContains(
      text,
      "sluice_grpc_server_handled_total{grpc_code=\"NOT_FOUND\",grpc_method=\"Check\","
      "grpc_service=\"grpc.health.v1.Health\"} 1\n"))
      << text;
  server->Shutdown();
}

}  // namespace
}  // namespace metrics
}  // namespace sluice
