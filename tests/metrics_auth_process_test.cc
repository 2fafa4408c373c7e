// Process level, authentication on (the cluster's fresh bearer tokens): the
// HTTP port of the supervisor and of a worker answers /healthz to anyone
// (liveness probes carry no token) and everything else only to a caller with
// the reader (or admin) role: 401 with "WWW-Authenticate: Bearer" without a
// token or with an unknown one, 403 for a principal without the role. With
// --insecure_no_auth the port stays open.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/auth/grpc_auth.h"
#include "common/auth/worker_token.h"
#include "common/metrics/http_get.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/free_ports.h"
#include "tools/cluster/process_cluster.h"

namespace sluice {
namespace {

struct Started {
  std::unique_ptr<cluster::ProcessCluster> cluster;
  int supervisor_port = 0;
  int worker_port = 0;
};

Started Start(bool authentication) {
  Started s;
  auto root = testing::MakeTempDir(authentication ? "metrics_auth" : "metrics_open");
  EXPECT_TRUE(root.ok()) << root.status();
  auto ports = cluster::PickStablePorts(2);
  EXPECT_TRUE(ports.ok()) << ports.status();
  if (!root.ok() || !ports.ok()) return s;
  s.supervisor_port = (*ports)[0];
  s.worker_port = (*ports)[1];
  cluster::ProcessClusterOptions options;
  options.root_dir = *root;
  options.workers = 1;
  options.topics = {"wiki:1"};
  options.authentication = authentication;
  options.extra_flags[cluster::kSupervisor] = {
      absl::StrCat("--metrics_listen=127.0.0.1:", s.supervisor_port)};
  options.extra_flags[cluster::WorkerName(0)] = {
      absl::StrCat("--metrics_listen=127.0.0.1:", s.worker_port)};
  auto cluster = cluster::ProcessCluster::Create(options);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return s;
  s.cluster = *std::move(cluster);
  absl::Status started = s.cluster->Start();
  if (started.ok()) started = s.cluster->WaitHealthy(absl::Seconds(60));
  EXPECT_TRUE(started.ok()) << started;
  if (!started.ok()) s.cluster.reset();
  return s;
}

std::string Token(const cluster::ProcessCluster& cluster, const std::string& principal) {
  auto token = auth::ReadTokenFile(cluster.token_file(principal));
  EXPECT_TRUE(token.ok()) << token.status();
  return token.value_or("");
}

int Status(int port, const std::string& path, const std::string& token = "") {
  auto response = metrics::HttpGet(port, path, token);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? response->status : 0;
}

TEST(MetricsAuthProcessTest, OnlyLivenessAnswersWithoutAReaderToken) {
  Started s = Start(/*authentication=*/true);
  ASSERT_NE(s.cluster, nullptr);
  const std::string reader = Token(*s.cluster, "reader");
  const std::string admin = Token(*s.cluster, "admin");
  const std::string worker = Token(*s.cluster, cluster::WorkerName(0));
  // What the supervisor presents to worker 0 (derived from its key).
  const std::string supervisor =
      auth::SupervisorTokenForWorker(Token(*s.cluster, "supervisor"), cluster::WorkerName(0));
  for (auto [port, component] : {std::make_pair(s.supervisor_port, "supervisor"),
                                 std::make_pair(s.worker_port, "worker")}) {
    SCOPED_TRACE(absl::StrCat("port ", port));
    EXPECT_EQ(Status(port, "/healthz"), 200);
    EXPECT_EQ(Status(port, "/metrics"), 401);
    EXPECT_EQ(Status(port, "/metrics", "not-a-token"), 401);
    EXPECT_EQ(Status(port, "/metrics", worker), 403);
    EXPECT_EQ(Status(port, "/metrics", supervisor), 403);
    EXPECT_EQ(Status(port, "/no-such-path"), 401);  // nothing is told without a token
    EXPECT_EQ(Status(port, "/metrics", admin), 200);
    auto scraped = metrics::HttpGet(port, "/metrics", reader);
    ASSERT_TRUE(scraped.ok()) << scraped.status();
    EXPECT_EQ(scraped->status, 200);
    EXPECT_TRUE(absl::StrContains(scraped->body, "# TYPE ")) << scraped->body.substr(0, 200);
    // Each binary shows its own resident memory (a few MiB at least).
    const std::string rss_prefix =
        absl::StrCat("sluice_process_resident_memory_bytes{component=\"", component, "\"} ");
    const size_t at = scraped->body.find(rss_prefix);
    ASSERT_NE(at, std::string::npos) << scraped->body;
    double rss = 0;
    EXPECT_TRUE(absl::SimpleAtod(
        scraped->body.substr(at + rss_prefix.size(),
                             scraped->body.find('\n', at) - at - rss_prefix.size()),
        &rss));
    EXPECT_GT(rss, 4 << 20);
  }
  // No token reaches a log line.
  for (const std::string& name : {std::string(cluster::kSupervisor), cluster::WorkerName(0)}) {
    std::ifstream in(s.cluster->log_path(name));
    std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const std::string& token : {reader, admin, worker, supervisor}) {
      EXPECT_FALSE(absl::StrContains(log, token)) << name << "'s log shows a token";
    }
    EXPECT_FALSE(absl::StrContains(log, "not-a-token")) << name << "'s log shows a token";
  }
  EXPECT_TRUE(s.cluster->StopAll().ok());
}

TEST(MetricsAuthProcessTest, InsecureNoAuthLeavesThePortOpen) {
  Started s = Start(/*authentication=*/false);
  ASSERT_NE(s.cluster, nullptr);
  for (int port : {s.supervisor_port, s.worker_port}) {
    EXPECT_EQ(Status(port, "/healthz"), 200);
    EXPECT_EQ(Status(port, "/metrics"), 200);
  }
  EXPECT_TRUE(s.cluster->StopAll().ok());
}

}  // namespace
}  // namespace sluice
