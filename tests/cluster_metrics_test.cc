// The in-process cluster with metrics: each server records its RPCs in its
// own registry, served over HTTP; the test scrapes both endpoints over TCP
// and finds the calls it made, by method and status code.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/metrics/http_get.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/grpc_introspection.h"
#include "tests/in_process_cluster.h"

namespace sluice {
namespace {

class ClusterMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto [registry, out] : {std::make_pair(&supervisor_metrics_, &supervisor_http_),
                                 std::make_pair(&worker_metrics_, &worker_http_)}) {
      auto http = metrics::MetricsHttpServer::StartIfListening("127.0.0.1:0", registry);
      ASSERT_TRUE(http.ok()) << http.status();
      *out = std::move(*http);
    }
    testing::InProcessClusterOptions options;
    options.supervisor_metrics = &supervisor_metrics_;
    options.worker_metrics = &worker_metrics_;
    auto cluster = testing::InProcessCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  static std::shared_ptr<grpc::Channel> Dial(const std::string& address) {
    return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  }

  static std::string Scrape(const metrics::MetricsHttpServer& http) {
    auto response = metrics::HttpGet(http.port(), "/metrics");
    EXPECT_TRUE(response.ok()) << response.status();
    if (!response.ok()) return "";
    EXPECT_EQ(response->status, 200);
    return response->body;
  }

  metrics::Registry supervisor_metrics_, worker_metrics_;  // outlive the servers
  std::unique_ptr<metrics::MetricsHttpServer> supervisor_http_, worker_http_;
  std::unique_ptr<testing::InProcessCluster> cluster_;
};

TEST_F(ClusterMetricsTest, ScrapesCountTheRpcsEachServerHandled) {
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(testing::CheckHealth(Dial(cluster_->supervisor().address())).ok());
  ASSERT_TRUE(testing::CheckHealth(Dial(cluster_->worker().address())).ok());
  auto unknown = testing::CheckHealth(Dial(cluster_->worker().address()), "no.such.Service");
  ASSERT_EQ(unknown.status().code(), absl::StatusCode::kNotFound) << unknown.status();

  // One SupervisorService call; whatever it answers is what must be counted.
  auto stub = v1::SupervisorService::NewStub(Dial(cluster_->supervisor().address()));
  grpc::ClientContext ctx;
  v1::ListSupervisorsRequest request;
  v1::ListSupervisorsResponse response;
  grpc::Status status = stub->ListSupervisors(&ctx, request, &response);
  const std::string code =
      absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));

  const std::string supervisor_text = Scrape(*supervisor_http_);
  EXPECT_TRUE(
      absl::StrContains(supervisor_text,
                        "sluice_grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Check\","
                        "grpc_service=\"grpc.health.v1.Health\"} 3\n"))
      << supervisor_text;
  EXPECT_TRUE(absl::StrContains(supervisor_text,
                                absl::StrCat("sluice_grpc_server_handled_total{grpc_code=\"", code,
                                             "\",grpc_method=\"ListSupervisors\","
                                             "grpc_service=\"sluice.v1.SupervisorService\"} 1\n")))
      << supervisor_text;
  EXPECT_TRUE(absl::StrContains(supervisor_text,
                                "sluice_grpc_server_handling_seconds_count{grpc_method=\"Check\","
                                "grpc_service=\"grpc.health.v1.Health\"} 3\n"))
      << supervisor_text;

  const std::string worker_text = Scrape(*worker_http_);
  EXPECT_TRUE(
      absl::StrContains(worker_text,
                        "sluice_grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Check\","
                        "grpc_service=\"grpc.health.v1.Health\"} 1\n"))
      << worker_text;
  EXPECT_TRUE(absl::StrContains(
      worker_text,
      "sluice_grpc_server_handled_total{grpc_code=\"NOT_FOUND\",grpc_method=\"Check\","
      "grpc_service=\"grpc.health.v1.Health\"} 1\n"))
      << worker_text;
  // Each process counts only its own calls.
  EXPECT_FALSE(absl::StrContains(worker_text, "ListSupervisors")) << worker_text;
}

TEST_F(ClusterMetricsTest, HealthzAnswersWhileTheProcessRuns) {
  auto response = metrics::HttpGet(worker_http_->port(), "/healthz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "ok\n");
}

}  // namespace
}  // namespace sluice
