// The clients tier: the example clients of examples/python (grpcio) and
// examples/go (grpc-go) run as subprocesses through their run.sh, which
// generate the stubs from proto/ at run time, against one real deployment
// (tools/cluster: dev broker with topic "wiki" (4 partitions) and
// kRecords records, the supervisor and two workers, bearer tokens). Each
// client submits the README's spec (pointed at the cluster's broker, with a
// short taskDuration/period/startDelay so groups roll over and commit within
// seconds), waits for committed records, lists segments and prints the
// status; the test checks its exit code and output. Bad credentials: the
// clients exit non-zero and print the gRPC code. A second supervisor alone,
// with mutual TLS and client certificates as the only credential (as in the
// grpcurl tier), takes the clients' --tls_ca/--tls_cert/--tls_key.
//
// The toolchains come from scripts/install_clients.sh (examples/env.sh says
// where); without them every test fails: the tier never skips.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/tls/test_certs.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/binaries.h"
#include "tools/cluster/process_cluster.h"

namespace sluice::clients {
namespace {

constexpr int64_t kRecords = 6000;

using Result = testing::CapturedRun;

Result Run(const std::string& binary, const std::vector<std::string>& args,
           absl::Duration timeout) {
  testing::SubprocessOptions options;
  options.binary = binary;
  options.args = args;
  options.name = "client-run";
  return testing::RunToCompletion(std::move(options), timeout);
}

class ClientsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const absl::Time start = absl::Now();
    auto dir = testing::MakeTempDir("clients");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = *dir;
    cluster::ProcessClusterOptions options;
    options.root_dir = dir_ + "/cluster";
    options.workers = 2;
    options.worker_capacity = 8;
    options.topics = {"wiki:4"};
    auto created = cluster::ProcessCluster::Create(options);
    ASSERT_TRUE(created.ok()) << created.status();
    cluster_ = std::move(*created);
    ASSERT_TRUE(cluster_->Start().ok());
    absl::Status healthy = cluster_->WaitHealthy(absl::Seconds(60));
    ASSERT_TRUE(healthy.ok()) << healthy;
    absl::StatusOr<std::string> produce = testing::FindRunfile("tools/sluice-produce");
    ASSERT_TRUE(produce.ok()) << produce.status();
    Result produced = Run(*produce,
                          {"--bootstrap=" + cluster_->bootstrap_servers(), "--topic=wiki",
                           absl::StrCat("--records=", kRecords), "--progress=false"},
                          absl::Seconds(60));
    ASSERT_EQ(produced.exit_code, 0) << "sluice-produce: " << produced.Describe();
    // The mutual-TLS supervisor: cert:operator is an admin.
    cert_dir_ = dir_ + "/certs";
    mkdir(cert_dir_.c_str(), 0700);
    auto ca = tls::MakeTestCa(cert_dir_, "ca");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = ca->cert_path;
    auto server = tls::MakeTestCert(cert_dir_, *ca, "supervisor", 1);
    ASSERT_TRUE(server.ok()) << server.status();
    auto client = tls::MakeTestCert(cert_dir_, *ca, "operator");
    ASSERT_TRUE(client.ok()) << client.status();
    client_cert_ = client->cert_path;
    client_key_ = client->key_path;
    const std::string policy = cert_dir_ + "/policy";
    std::ofstream(policy) << "cert:operator admin\n";
    absl::StatusOr<std::string> binary = cluster::FindSluiceBinary(cluster::kSupervisorBinary);
    ASSERT_TRUE(binary.ok()) << binary.status();
    absl::StatusOr<int> port = testing::PickFreePort();
    ASSERT_TRUE(port.ok()) << port.status();
    tls_address_ = absl::StrCat("127.0.0.1:", *port);
    testing::SubprocessOptions tls_options;
    tls_options.binary = *binary;
    tls_options.name = "tls-supervisor";
    tls_options.args = {"--listen=" + tls_address_, "--data_dir=" + dir_ + "/tls-supervisor",
                        "--deep_storage=file://" + dir_ + "/tls-deep",
                        "--tls_cert=" + server->cert_path, "--tls_key=" + server->key_path,
                        "--tls_ca=" + ca->cert_path, "--auth_policy_file=" + policy};
    mkdir((dir_ + "/tls-supervisor").c_str(), 0700);
    mkdir((dir_ + "/tls-deep").c_str(), 0700);
    auto tls_process = testing::Subprocess::Start(tls_options);
    ASSERT_TRUE(tls_process.ok()) << tls_process.status();
    tls_supervisor_ = std::move(*tls_process);
    absl::Status tls_ready = testing::WaitForPort(*port, absl::Seconds(30), tls_supervisor_.get());
    ASSERT_TRUE(tls_ready.ok()) << tls_ready;

    bad_token_ = dir_ + "/bad.token";
    std::ofstream(bad_token_) << "0123456789abcdef\n";
    std::cerr << "[clients] deployment up in " << absl::Now() - start << ": supervisor "
              << cluster_->supervisor_address() << "\n";
    ready_ = true;
  }

  void TearDown() override {
    if (tls_supervisor_ != nullptr) {
      auto exit = tls_supervisor_->Stop(absl::Seconds(30));
      EXPECT_TRUE(exit.ok() && exit->success())
          << (exit.ok() ? exit->ToString() : exit.status().ToString()) << "\n"
          << tls_supervisor_->StderrTail();
    }
    if (cluster_ == nullptr) return;
    absl::Status alive = cluster_->CheckAlive();
    EXPECT_TRUE(alive.ok()) << alive;
    absl::Status stopped = cluster_->StopAll();
    EXPECT_TRUE(stopped.ok()) << stopped;
  }

  bool ready_ = false;
  std::string dir_;
  std::string bad_token_;
  std::string cert_dir_, ca_, client_cert_, client_key_, tls_address_;
  std::unique_ptr<cluster::ProcessCluster> cluster_;
  std::unique_ptr<testing::Subprocess> tls_supervisor_;
};

ClientsEnvironment* const env = static_cast<ClientsEnvironment*>(
    ::testing::AddGlobalTestEnvironment(new ClientsEnvironment));

// Runs examples/<language>/run.sh with `args`.
Result RunScript(const std::string& language, const std::string& datasource,
                 std::vector<std::string> args) {
  if (!env->ready_) {
    ADD_FAILURE() << "the clients test deployment did not start (see the environment's failure)";
    return {};
  }
  absl::StatusOr<std::string> script = testing::FindRunfile("examples/" + language + "/run.sh");
  if (!script.ok()) {
    ADD_FAILURE() << script.status();
    return {};
  }
  args.insert(args.begin(), *script);
  const absl::Time start = absl::Now();
  Result r = Run("/bin/bash", args, absl::Seconds(90));
  std::cerr << "[clients] " << language << " client (" << datasource << "): exit "
            << r.exit_code << " in " << absl::Now() - start << "\n";
  return r;
}

// Runs examples/<language>/run.sh against the cluster with the admin token
// (or `token_file`), the README's spec for `datasource`.
Result RunClient(const std::string& language, const std::string& datasource,
                 const std::string& token_file = "") {
  if (!env->ready_) return RunScript(language, datasource, {});
  cluster::ProcessCluster* c = env->cluster_.get();
  return RunScript(
      language, datasource,
      {"--supervisor=" + c->supervisor_address(),
       "--auth_token_file=" + (token_file.empty() ? c->token_file("admin") : token_file),
       "--datasource=" + datasource, "--bootstrap=" + c->bootstrap_servers(),
       "--task_duration=PT4S", "--period=PT0.5S", "--start_delay=PT0.1S"});
}

// The number after "<prefix>" on a line of `out` (-1 if there is none).
int64_t Number(const std::string& out, absl::string_view prefix) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    int64_t n;
    if (absl::ConsumePrefix(&line, prefix) && absl::SimpleAtoi(line, &n)) return n;
  }
  return -1;
}

void ExpectIngested(const std::string& language, const std::string& datasource) {
  Result r = RunClient(language, datasource);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(absl::StrContains(r.out, "submitted datasource " + datasource + " (spec version 1)"))
      << r.Describe();
  const int64_t committed = Number(r.out, "committed records: ");
  EXPECT_GT(committed, 0) << r.Describe();
  EXPECT_LE(committed, kRecords) << r.Describe();
  EXPECT_GT(Number(r.out, "segments: "), 0) << r.Describe();
  EXPECT_TRUE(absl::StrContains(r.out, "\n  " + datasource + "_")) << r.Describe();
  // The status as proto JSON, with the proto field names.
  const size_t status = r.out.find("status: {");
  ASSERT_NE(status, std::string::npos) << r.Describe();
  const std::string json = r.out.substr(status);
  EXPECT_TRUE(absl::StrContains(json, "\"datasource\":")) << r.Describe();
  EXPECT_TRUE(absl::StrContains(json, "\"" + datasource + "\"")) << r.Describe();
  EXPECT_TRUE(absl::StrContains(json, "\"committed_offsets\":")) << r.Describe();
  // Enum values in JSON carry their enum's prefix (buf's ENUM_VALUE_PREFIX).
  EXPECT_TRUE(absl::StrContains(json, "\"SUPERVISOR_STATE_")) << r.Describe();
  EXPECT_TRUE(absl::StrContains(json, "\"partitions\": 4") ||
              absl::StrContains(json, "\"partitions\":4"))
      << r.Describe();
}

void ExpectUnauthenticated(const std::string& language, const std::string& datasource) {
  Result r = RunClient(language, datasource, env->bad_token_);
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_TRUE(absl::StrContains(r.err, "error: SubmitSupervisor: UNAUTHENTICATED")) << r.Describe();
  EXPECT_FALSE(absl::StrContains(r.out, "submitted")) << r.Describe();
}

TEST(ClientsTest, PythonClientIngestsTheReadmeSpec) { ExpectIngested("python", "wiki-py"); }

TEST(ClientsTest, GoClientIngestsTheReadmeSpec) { ExpectIngested("go", "wiki-go"); }

TEST(ClientsTest, PythonClientWithAnUnknownTokenIsUnauthenticated) {
  ExpectUnauthenticated("python", "wiki-py-bad");
}

TEST(ClientsTest, GoClientWithAnUnknownTokenIsUnauthenticated) {
  ExpectUnauthenticated("go", "wiki-go-bad");
}

// A reader may read but not submit: the code says so.
TEST(ClientsTest, ReaderTokenIsPermissionDenied) {
  ASSERT_TRUE(env->ready_);
  Result r = RunClient("python", "wiki-py-reader", env->cluster_->token_file("reader"));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_TRUE(absl::StrContains(r.err, "error: SubmitSupervisor: PERMISSION_DENIED"))
      << r.Describe();
}

// Mutual TLS: with the operator's client certificate the submit is accepted
// (the TLS supervisor has no workers, so nothing commits: the client gives
// up after its --timeout and says so); without one, the handshake fails.
void ExpectMutualTls(const std::string& language, const std::string& timeout) {
  ASSERT_TRUE(env->ready_);
  const std::string ds = "tls-" + language;
  const std::vector<std::string> common = {
      "--supervisor=" + env->tls_address_, "--tls_ca=" + env->ca_, "--datasource=" + ds,
      "--bootstrap=127.0.0.1:1", "--timeout=" + timeout};
  std::vector<std::string> with_cert = common;
  with_cert.insert(with_cert.end(),
                   {"--tls_cert=" + env->client_cert_, "--tls_key=" + env->client_key_});
  Result r = RunScript(language, ds, with_cert);
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_TRUE(absl::StrContains(r.out, "submitted datasource " + ds + " (spec version 1)"))
      << r.Describe();
  EXPECT_TRUE(absl::StrContains(r.err, "error: no records committed for " + ds)) << r.Describe();

  Result no_cert = RunScript(language, ds, common);
  EXPECT_EQ(no_cert.exit_code, 1) << no_cert.Describe();
  EXPECT_TRUE(absl::StrContains(no_cert.err, "error: SubmitSupervisor: UNAVAILABLE"))
      << no_cert.Describe();
}

TEST(ClientsTest, PythonClientWithClientCertificates) { ExpectMutualTls("python", "1"); }

TEST(ClientsTest, GoClientWithClientCertificates) { ExpectMutualTls("go", "1s"); }

}  // namespace
}  // namespace sluice::clients
