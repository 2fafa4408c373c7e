// The web console of a real supervisor (--console_listen) in a process
// cluster with authentication on:
// - its JSON API answers by role (reader reads, admin acts, a worker's token
//   and no token are refused), refuses cross-site requests before acting,
//   and shows the same numbers as the gRPC API;
// - headless Chromium (console_browser_test.mjs, playwright-core) signs in
//   as a reader and as an admin: pages load with real data, the lag chart
//   moves while records are produced, a reader has no admin button and a
//   forged admin POST is refused, suspend and resume work from the page.
//   Screenshots of each page land in the test's outputs
//   (bazel-testlogs/tests/console/console_process_test/test.outputs/).
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/auth/grpc_auth.h"
#include "common/metrics/http_get.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/free_ports.h"
#include "tools/cluster/process_cluster.h"
#include "tools/cluster/wiki_datasource.h"
#include "tools/produce/wiki_producer.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::string HomeDir() {
  const passwd* pw = getpwuid(getuid());  // Bazel moves $HOME
  return pw != nullptr ? pw->pw_dir : "/root";
}

// The newest playwright-core scripts/install_console_test.sh installed.
std::string PlaywrightModules() {
  if (const char* env = std::getenv("SLUICE_CONSOLE_TEST_MODULES")) return env;
  std::string best;
  fs::file_time_type newest;
  std::error_code ec;
  for (const auto& entry :
       fs::directory_iterator(HomeDir() + "/.cache/sluice/console-test", ec)) {
    const fs::path modules = entry.path() / "node_modules";
    if (!fs::exists(modules / "playwright-core" / "package.json")) continue;
    const auto when = fs::last_write_time(modules, ec);
    if (best.empty() || when > newest) {
      best = modules.string();
      newest = when;
    }
  }
  return best;
}

class ConsoleProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto root = testing::MakeTempDir("console");
    ASSERT_TRUE(root.ok()) << root.status();
    root_ = *root;
    auto ports = cluster::PickStablePorts(1);
    ASSERT_TRUE(ports.ok()) << ports.status();
    console_port_ = (*ports)[0];
    cluster::ProcessClusterOptions options;
    options.root_dir = root_ + "/cluster";
    options.workers = 2;
    options.topics = {"wiki:2"};
    options.extra_flags[cluster::kSupervisor] = {
        absl::StrCat("--console_listen=127.0.0.1:", console_port_)};
    auto cluster = cluster::ProcessCluster::Create(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->Start().ok());
    absl::Status healthy = cluster_->WaitHealthy(absl::Seconds(60));
    ASSERT_TRUE(healthy.ok()) << healthy;

    cluster::WikiSpecOptions spec;
    spec.bootstrap_servers = cluster_->bootstrap_servers();
    spec.replicas = 2;
    spec.task_duration = "PT30S";
    ASSERT_TRUE(cluster::SubmitSpec(*cluster_->SupervisorStub(), cluster::WikiSpec(spec)).ok());
    ASSERT_NO_FATAL_FAILURE(Produce(4000, 0));
  }

  void TearDown() override {
    if (cluster_ != nullptr) {
      EXPECT_TRUE(cluster_->StopAll().ok());
    }
  }

  void Produce(int64_t records, double rate) {
    produce::ProduceOptions produce;
    produce.properties = {{"bootstrap.servers", cluster_->bootstrap_servers()}};
    produce.topic = "wiki";
    produce.records = records;
    produce.rate = rate;
    auto produced = produce::ProduceWikiRecords(produce);
    ASSERT_TRUE(produced.ok()) << produced.status();
  }

  std::string Token(const std::string& principal) {
    auto token = auth::ReadTokenFile(cluster_->token_file(principal));
    EXPECT_TRUE(token.ok()) << token.status();
    return token.value_or("");
  }

  metrics::HttpGetResponse Call(const std::string& method, const std::string& path,
                                const std::string& token,
                                std::vector<std::string> headers = {}) {
    if (!token.empty()) headers.push_back(absl::StrCat("Authorization: Bearer ", token));
    auto response = metrics::HttpCall(console_port_, method, path, headers);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.value_or(metrics::HttpGetResponse{});
  }

  bool Suspended() {
    auto status = cluster::GetStatus(*cluster_->SupervisorStub(), "wiki");
    EXPECT_TRUE(status.ok()) << status.status();
    return status.ok() && status->suspended();
  }

  std::string root_;
  int console_port_ = 0;
  std::unique_ptr<cluster::ProcessCluster> cluster_;
};

TEST_F(ConsoleProcessTest, ApiAnswersByRoleAndRefusesCrossSite) {
  const std::string reader = Token("reader");
  const std::string admin = Token("admin");
  const std::string worker = Token(cluster::WorkerName(0));

  // The page loads without a credential; it holds no data.
  metrics::HttpGetResponse page = Call("GET", "/console/", "");
  EXPECT_EQ(page.status, 200);
  EXPECT_TRUE(absl::StrContains(page.body, "console.js"));

  // Who is asking.
  EXPECT_EQ(Call("GET", "/console/api/whoami", "").status, 401);
  EXPECT_EQ(Call("GET", "/console/api/whoami", "not-a-token").status, 401);
  EXPECT_EQ(Call("GET", "/console/api/whoami", worker).status, 403);
  metrics::HttpGetResponse as_reader = Call("GET", "/console/api/whoami", reader);
  EXPECT_EQ(as_reader.status, 200);
  EXPECT_TRUE(absl::StrContains(as_reader.body, "\"admin\":false")) << as_reader.body;
  EXPECT_TRUE(absl::StrContains(Call("GET", "/console/api/whoami", admin).body, "\"admin\":true"));

  // A spec holding a literal secret: the console shows what the gRPC API
  // shows ("***"), never the value.
  constexpr char kSecret[] = "console-test-secret-9f3a";
  {
    cluster::WikiSpecOptions options;
    options.bootstrap_servers = cluster_->bootstrap_servers();
    options.replicas = 2;
    options.task_duration = "PT30S";
    v1::SupervisorSpec spec = cluster::WikiSpec(options);
    (*spec.mutable_io_config()->mutable_consumer_properties())["sasl.password"] = kSecret;
    absl::Status submitted = cluster::SubmitSpec(*cluster_->SupervisorStub(), spec);
    ASSERT_TRUE(submitted.ok()) << submitted;
  }
  for (const char* path : {"/console/api/datasources/wiki/spec",
                           "/console/api/datasources/wiki/history"}) {
    metrics::HttpGetResponse shown = Call("GET", path, admin);
    EXPECT_EQ(shown.status, 200) << path;
    EXPECT_TRUE(absl::StrContains(shown.body, "\"sasl.password\":\"***\"")) << shown.body;
    EXPECT_FALSE(absl::StrContains(shown.body, kSecret)) << path << " shows the secret";
  }

  // Reads: the gRPC API's messages as JSON, for a reader.
  metrics::HttpGetResponse list = Call("GET", "/console/api/datasources", reader);
  EXPECT_EQ(list.status, 200);
  EXPECT_TRUE(absl::StrContains(list.body, "\"datasource\":\"wiki\"")) << list.body;
  metrics::HttpGetResponse status = Call("GET", "/console/api/datasources/wiki", reader);
  EXPECT_EQ(status.status, 200);
  EXPECT_TRUE(absl::StrContains(status.body, "\"aggregateLag\"")) << status.body;
  for (const char* sub : {"spec", "history", "segments", "commit-log", "tasks", "lag-history"}) {
    EXPECT_EQ(Call("GET", absl::StrCat("/console/api/datasources/wiki/", sub), reader).status, 200)
        << sub;
  }
  EXPECT_EQ(Call("GET", "/console/api/workers", reader).status, 200);
  EXPECT_EQ(Call("GET", "/console/api/datasources/nope", reader).status, 404);
  EXPECT_EQ(Call("GET", "/console/api/datasources/wiki", worker).status, 403);
  // No token reaches the answers.
  EXPECT_FALSE(absl::StrContains(status.body, reader));

  // Actions: a reader's is refused by the gRPC server's role check.
  metrics::HttpGetResponse forged = Call("POST", "/console/api/datasources/wiki/suspend", reader);
  EXPECT_EQ(forged.status, 403);
  EXPECT_TRUE(absl::StrContains(forged.body, "PERMISSION_DENIED")) << forged.body;
  EXPECT_FALSE(Suspended());
  // An admin's token on a request from another site's page is refused before
  // anything runs.
  EXPECT_EQ(Call("POST", "/console/api/datasources/wiki/suspend", admin,
                 {"Origin: http://evil.example"})
                .status,
            403);
  EXPECT_EQ(Call("POST", "/console/api/datasources/wiki/suspend", admin,
                 {"Sec-Fetch-Site: cross-site"})
                .status,
            403);
  EXPECT_FALSE(Suspended());
  // Actions are POSTs: a link cannot act.
  EXPECT_EQ(Call("GET", "/console/api/datasources/wiki/suspend", admin).status, 405);
  EXPECT_FALSE(Suspended());
  // An admin from the console's own page acts.
  EXPECT_EQ(Call("POST", "/console/api/datasources/wiki/suspend", admin,
                 {absl::StrCat("Origin: http://127.0.0.1:", console_port_),
                  "Sec-Fetch-Site: same-origin"})
                .status,
            200);
  EXPECT_TRUE(Suspended());
  EXPECT_EQ(Call("POST", "/console/api/datasources/wiki/resume", admin).status, 200);
  EXPECT_FALSE(Suspended());
  // Reset offsets checks its query before any call.
  EXPECT_EQ(Call("POST", "/console/api/datasources/wiki/reset-offsets?0=-5", admin).status, 400);
}

TEST_F(ConsoleProcessTest, ReaderAndAdminInABrowser) {
  auto node = testing::FindInPath("node");
  ASSERT_TRUE(node.ok()) << "node not found: scripts/install_deps.sh --tests installs it";
  ASSERT_TRUE(fs::exists("/usr/bin/chromium"))
      << "Debian's chromium is missing: scripts/install_deps.sh --tests installs it";
  const std::string modules = PlaywrightModules();
  ASSERT_FALSE(modules.empty())
      << "playwright-core is missing: run scripts/install_console_test.sh";
  auto script = testing::FindRunfile("tests/console/console_browser_test.mjs");
  ASSERT_TRUE(script.ok()) << script.status();
  // An ES module finds its imports in node_modules beside it.
  const std::string dir = root_ + "/browser";
  fs::create_directories(dir);
  fs::copy_file(*script, dir + "/console_browser_test.mjs");
  fs::create_directory_symlink(modules, dir + "/node_modules");
  const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::string shots = outputs != nullptr ? outputs : dir;

  // A second spec version, for the history page's diff.
  cluster::WikiSpecOptions spec;
  spec.bootstrap_servers = cluster_->bootstrap_servers();
  spec.replicas = 2;
  spec.task_duration = "PT31S";
  ASSERT_TRUE(cluster::SubmitSpec(*cluster_->SupervisorStub(), cluster::WikiSpec(spec)).ok());

  // Records keep coming while the browser watches the lag chart.
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    produce::ProduceOptions produce;
    produce.properties = {{"bootstrap.servers", cluster_->bootstrap_servers()}};
    produce.topic = "wiki";
    produce.rate = 500;
    produce.duration = absl::Minutes(3);
    produce.should_stop = [&] { return stop.load(); };
    (void)produce::ProduceWikiRecords(produce);
  });
  testing::SubprocessOptions options;
  options.binary = *node;
  options.args = {dir + "/console_browser_test.mjs",
                  absl::StrCat("--url=http://127.0.0.1:", console_port_, "/console/"),
                  "--reader_token_file=" + cluster_->token_file("reader"),
                  "--admin_token_file=" + cluster_->token_file("admin"), "--datasource=wiki",
                  "--screenshots=" + shots};
  options.working_dir = dir;
  options.name = "console-browser";
  testing::CapturedRun run = testing::RunToCompletion(options, absl::Minutes(4));
  stop = true;
  producer.join();
  std::cout << run.Describe() << std::endl;
  EXPECT_TRUE(run.ok()) << run.Describe();
  for (const char* check : {"ok the lag chart moved", "ok a reader's forged suspend is refused",
                            "ok the spec page shows the spec, its history and the diff",
                            "ok suspend from the page: SUSPENDED", "ok resume from the page"}) {
    EXPECT_TRUE(absl::StrContains(run.out, check)) << check;
  }
  EXPECT_TRUE(fs::exists(shots + "/console-datasource-reader.png"));
  EXPECT_FALSE(Suspended());
}

}  // namespace
}  // namespace sluice
