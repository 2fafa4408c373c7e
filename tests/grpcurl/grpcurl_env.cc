#include "tests/grpcurl/grpcurl_env.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/tls/test_certs.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/binaries.h"

namespace sluice::grpcurl {
namespace {

std::string UserHome() {
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr) {
    return pw->pw_dir;
  }
  const char* home = getenv("HOME");
  return home != nullptr ? home : "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Result RunProcess(const std::string& binary, const std::vector<std::string>& args,
                  const std::string& stdin_data, const std::string& cwd,
                  const std::map<std::string, std::string>& env, absl::Duration timeout) {
  testing::SubprocessOptions options;
  options.binary = binary;
  options.args = args;
  options.env = env;
  options.working_dir = cwd;
  options.pipe_stdin = true;
  options.name = "grpcurl-run";
  return testing::RunToCompletion(std::move(options), timeout, stdin_data);
}

// The standalone supervisors' flags and processes.
struct Standalone {
  std::unique_ptr<testing::Subprocess> process;
  std::string address;
};

absl::StatusOr<Standalone> StartSupervisor(const std::string& name, const std::string& dir,
                                           std::vector<std::string> flags) {
  absl::StatusOr<std::string> binary = cluster::FindSluiceBinary(cluster::kSupervisorBinary);
  if (!binary.ok()) return binary.status();
  absl::StatusOr<int> port = testing::PickFreePort();
  if (!port.ok()) return port.status();
  Standalone s;
  s.address = absl::StrCat("127.0.0.1:", *port);
  mkdir((dir + "/" + name).c_str(), 0700);
  mkdir((dir + "/" + name + "-deep").c_str(), 0700);
  testing::SubprocessOptions options;
  options.binary = *binary;
  options.name = name;
  options.args = {"--listen=" + s.address, "--data_dir=" + dir + "/" + name,
                  "--deep_storage=file://" + dir + "/" + name + "-deep"};
  options.args.insert(options.args.end(), flags.begin(), flags.end());
  auto process = testing::Subprocess::Start(options);
  if (!process.ok()) return process.status();
  s.process = std::move(*process);
  if (absl::Status ready = testing::WaitForPort(*port, absl::Seconds(30), s.process.get());
      !ready.ok()) {
    return ready;
  }
  return s;
}

class GrpcurlEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const absl::Time start = absl::Now();
    // The pin the install script reads is the one this test expects.
    absl::StatusOr<std::string> pinned = ReadRepoFile("third_party/grpcurl/VERSION");
    ASSERT_TRUE(pinned.ok()) << pinned.status();
    ASSERT_EQ(absl::StripAsciiWhitespace(*pinned), kGrpcurlVersion)
        << "third_party/grpcurl/VERSION and kGrpcurlVersion (grpcurl_env.h) disagree";
    absl::StatusOr<std::string> grpcurl = FindGrpcurl();
    ASSERT_TRUE(grpcurl.ok()) << grpcurl.status();
    Result version = Grpcurl({"-version"});
    ASSERT_TRUE(absl::StrContains(version.out + version.err, kGrpcurlVersion))
        << *grpcurl << " is not grpcurl " << kGrpcurlVersion << ": " << version.Describe();

    auto dir = testing::MakeTempDir("grpcurl");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = *dir;

    cluster::ProcessClusterOptions options;
    options.root_dir = dir_ + "/cluster";
    options.workers = 2;
    options.worker_capacity = 8;
    options.topics = {"wiki:4", "wiki-edits:2"};
    auto created = cluster::ProcessCluster::Create(options);
    ASSERT_TRUE(created.ok()) << created.status();
    cluster_ = std::move(*created);
    ASSERT_TRUE(cluster_->Start().ok());
    absl::Status healthy = cluster_->WaitHealthy(absl::Seconds(60));
    ASSERT_TRUE(healthy.ok()) << healthy;

    // Records into both topics, with the repository's producer.
    absl::StatusOr<std::string> produce = testing::FindRunfile("tools/sluice-produce");
    ASSERT_TRUE(produce.ok()) << produce.status();
    for (const char* topic : {"wiki", "wiki-edits"}) {
      Result produced = RunProcess(
          *produce,
          {"--bootstrap=" + cluster_->bootstrap_servers(), absl::StrCat("--topic=", topic),
           absl::StrCat("--records=", kRecordsPerTopic), "--progress=false"},
          "", "", {}, absl::Seconds(60));
      ASSERT_TRUE(produced.ok()) << "sluice-produce " << topic << ": " << produced.Describe();
    }

    // Certificates: the TLS supervisor's (it also answers to the name the
    // docs use, sluice-supervisor.sluice.svc) and two clients'.
    cert_dir_ = dir_ + "/certs";
    mkdir(cert_dir_.c_str(), 0700);
    auto ca = tls::MakeTestCa(cert_dir_, "ca");
    ASSERT_TRUE(ca.ok()) << ca.status();
    auto server = tls::MakeTestCert(
        cert_dir_, *ca, "supervisor", 1,
        absl::StrCat(tls::kLoopbackSans, ",DNS:sluice-supervisor.sluice.svc"));
    ASSERT_TRUE(server.ok()) << server.status();
    for (const char* client : {"operator", "grafana"}) {
      auto cert = tls::MakeTestCert(cert_dir_, *ca, client);
      ASSERT_TRUE(cert.ok()) << cert.status();
      ASSERT_EQ(symlink(cert->cert_path.c_str(), (cert_dir_ + "/" + client + ".crt").c_str()), 0);
      // MakeTestCert writes <name>.pem and <name>.key; the docs say <name>.crt.
      ASSERT_EQ(cert->key_path, cert_dir_ + "/" + client + ".key");
    }
    ASSERT_EQ(symlink(ca->cert_path.c_str(), (cert_dir_ + "/ca.crt").c_str()), 0);
    const std::string policy = cert_dir_ + "/policy";
    std::ofstream(policy) << "cert:operator admin\ncert:grafana reader\n";

    auto tls_supervisor = StartSupervisor(
        "tls-supervisor", dir_,
        {"--tls_cert=" + server->cert_path, "--tls_key=" + server->key_path,
         "--tls_ca=" + ca->cert_path, "--auth_policy_file=" + policy});
    ASSERT_TRUE(tls_supervisor.ok()) << tls_supervisor.status();
    tls_supervisor_ = std::move(*tls_supervisor);
    auto no_auth = StartSupervisor("no-auth-supervisor", dir_, {"--insecure_no_auth"});
    ASSERT_TRUE(no_auth.ok()) << no_auth.status();
    no_auth_supervisor_ = std::move(*no_auth);
    std::cerr << "[grpcurl] deployment up in " << absl::Now() - start << ": supervisor "
              << cluster_->supervisor_address() << ", workers " << cluster_->worker_address(0)
              << " " << cluster_->worker_address(1) << ", TLS supervisor "
              << tls_supervisor_.address << ", no-auth supervisor " << no_auth_supervisor_.address
              << "\n";
    ready_ = true;
  }

  void TearDown() override {
    if (cluster_ != nullptr) {
      absl::Status alive = cluster_->CheckAlive();
      EXPECT_TRUE(alive.ok()) << alive;
      absl::Status stopped = cluster_->StopAll();
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
    for (Standalone* s : {&tls_supervisor_, &no_auth_supervisor_}) {
      if (s->process != nullptr) {
        auto exit = s->process->Stop(absl::Seconds(30));
        EXPECT_TRUE(exit.ok() && exit->success())
            << s->process->name() << ": " << (exit.ok() ? exit->ToString() : exit.status().ToString())
            << "\n" << s->process->StderrTail();
      }
    }
  }

  bool ready_ = false;
  std::string dir_;
  std::string cert_dir_;
  std::unique_ptr<cluster::ProcessCluster> cluster_;
  Standalone tls_supervisor_;
  Standalone no_auth_supervisor_;
};

GrpcurlEnvironment* const env = static_cast<GrpcurlEnvironment*>(
    ::testing::AddGlobalTestEnvironment(new GrpcurlEnvironment));

}  // namespace

absl::StatusOr<std::string> FindGrpcurl() {
  std::string path;
  if (const char* e = getenv("SLUICE_GRPCURL"); e != nullptr && *e != '\0') {
    path = e;
  } else {
    path = absl::StrCat(UserHome(), "/.cache/sluice/grpcurl/", kGrpcurlVersion, "/bin/grpcurl");
  }
  if (access(path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no grpcurl at ", path,
                     " (scripts/install_deps.sh builds it; $SLUICE_GRPCURL points elsewhere)"));
  }
  return path;
}

Result Grpcurl(const std::vector<std::string>& args, const std::string& stdin_data,
               absl::Duration timeout) {
  absl::StatusOr<std::string> grpcurl = FindGrpcurl();
  if (!grpcurl.ok()) {
    Result r;
    r.err = grpcurl.status().ToString();
    return r;
  }
  return RunProcess(*grpcurl, args, stdin_data, "", {}, timeout);
}

Result Shell(const std::string& command, const std::string& cwd,
             const std::map<std::string, std::string>& env, absl::Duration timeout) {
  absl::StatusOr<std::string> grpcurl = FindGrpcurl();
  if (!grpcurl.ok()) {
    Result r;
    r.err = grpcurl.status().ToString();
    return r;
  }
  std::map<std::string, std::string> full = env;
  const char* path = getenv("PATH");
  full["PATH"] = absl::StrCat(grpcurl->substr(0, grpcurl->rfind('/')), ":",
                              path != nullptr ? path : "/usr/bin:/bin");
  return RunProcess("/bin/bash", {"-o", "pipefail", "-c", command}, "", cwd, full, timeout);
}

namespace {
std::string ErrorField(const Result& result, absl::string_view field) {
  for (absl::string_view line : absl::StrSplit(result.err, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, field)) return std::string(absl::StripAsciiWhitespace(line));
  }
  return "";
}
}  // namespace

std::string ErrorCode(const Result& result) { return ErrorField(result, "Code:"); }
std::string ErrorMessage(const Result& result) { return ErrorField(result, "Message:"); }

std::vector<std::string> BearerArgs(const std::string& principal) {
  std::string token;
  if (Cluster() != nullptr) {
    token = std::string(absl::StripAsciiWhitespace(ReadFile(Cluster()->token_file(principal))));
  }
  return {"-H", "authorization: Bearer " + token};
}

cluster::ProcessCluster* Cluster() {
  if (!env->ready_) {
    ADD_FAILURE() << "the grpcurl test deployment did not start (see the environment's failure)";
    return nullptr;
  }
  return env->cluster_.get();
}

std::string TlsSupervisorAddress() { return env->tls_supervisor_.address; }
std::string NoAuthSupervisorAddress() { return env->no_auth_supervisor_.address; }
std::string CertDir() { return env->cert_dir_; }

absl::StatusOr<std::string> ReadRepoFile(const std::string& path) {
  absl::StatusOr<std::string> file = testing::FindRunfile(path);
  if (!file.ok()) return file.status();
  return ReadFile(*file);
}

absl::StatusOr<std::string> ReadmeSpec() {
  absl::StatusOr<std::string> readme = ReadRepoFile("README.md");
  if (!readme.ok()) return readme.status();
  const size_t intro = readme->find("A spec reads like Druid's");
  if (intro == std::string::npos) return absl::NotFoundError("README.md: no \"A spec reads like Druid's\"");
  const size_t begin = readme->find("```json\n", intro);
  if (begin == std::string::npos) return absl::NotFoundError("README.md: no ```json after the spec intro");
  const size_t body = begin + 8;
  const size_t end = readme->find("```", body);
  if (end == std::string::npos) return absl::NotFoundError("README.md: unterminated ```json");
  return readme->substr(body, end - body);
}

Result PollUntil(const std::vector<std::string>& args,
                 const std::function<bool(const std::string&)>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  Result r;
  while (true) {
    r = Grpcurl(args);
    if (r.ok() && done(r.out)) return r;
    if (absl::Now() > deadline) return r;
    absl::SleepFor(absl::Milliseconds(300));
  }
}

}  // namespace sluice::grpcurl
