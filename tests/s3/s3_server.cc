#include "tests/s3/s3_server.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <iostream>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/file_util.h"

namespace sluice::s3::testing {
namespace {

using sluice::testing::FindRunfile;
using sluice::testing::PickFreePort;
using sluice::testing::Subprocess;
using sluice::testing::SubprocessOptions;
using sluice::testing::TestTmpDir;
using sluice::testing::WaitForPort;

std::string RandomToken(int n) {
  absl::BitGen gen;
  std::string out;
  for (int i = 0; i < n; ++i) out += "abcdefghijklmnopqrstuvwxyz0123456789"[absl::Uniform(gen, 0, 36)];
  return out;
}

// Bazel's test environment has no HOME: the password database's home first.
std::string UserHome() {
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr) {
    return pw->pw_dir;
  }
  const char* home = std::getenv("HOME");
  return home != nullptr ? home : "";
}

std::unique_ptr<S3Server>& Shared() {
  static auto* server = new std::unique_ptr<S3Server>();
  return *server;
}

absl::Status& StartError() {
  static auto* status = new absl::Status();
  return *status;
}

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::unique_ptr<S3Server>> server = S3Server::Start(TestTmpDir() + "/s3s-fs");
    if (!server.ok()) {
      StartError() = server.status();
      std::cerr << "[s3] s3s-fs did not start: " << server.status() << std::endl;
      return;
    }
    Shared() = *std::move(server);
    std::cerr << "[s3] s3s-fs at " << Shared()->endpoint() << " after "
              << absl::FormatDuration(absl::Now() - start) << std::endl;
  }

  void TearDown() override {
    if (Shared() == nullptr) return;
    const absl::Status stopped = Shared()->Stop();
    EXPECT_TRUE(stopped.ok()) << stopped;
    Shared().reset();
  }
};

::testing::Environment* const kEnvironment = ::testing::AddGlobalTestEnvironment(new Environment);

}  // namespace

absl::StatusOr<std::string> FindS3sFs() {
  if (const char* env = std::getenv("SLUICE_S3S_FS"); env != nullptr && *env != '\0') {
    return std::string(env);
  }
  absl::StatusOr<std::string> version_file = FindRunfile("third_party/s3s-fs/VERSION");
  if (!version_file.ok()) return version_file.status();
  absl::StatusOr<std::string> version = ReadFile(*version_file);
  if (!version.ok()) return version.status();
  const std::string path =
      absl::StrCat(UserHome(), "/.cache/sluice/s3s-fs/",
                   absl::StripAsciiWhitespace(*version), "/bin/s3s-fs");
  if (!PathExists(path)) {
    return absl::NotFoundError(absl::StrCat(
        path, " is missing: scripts/install_s3_server.sh (run by scripts/install_deps.sh) "
              "builds it; $SLUICE_S3S_FS points elsewhere"));
  }
  return path;
}

absl::StatusOr<std::unique_ptr<S3Server>> S3Server::Start(const std::string& data_dir) {
  absl::StatusOr<std::string> binary = FindS3sFs();
  if (!binary.ok()) return binary.status();
  absl::Status made = MakeDirs(data_dir);
  if (!made.ok()) return made;
  absl::StatusOr<int> port = PickFreePort();
  if (!port.ok()) return port.status();

  std::unique_ptr<S3Server> server(new S3Server());
  server->port_ = *port;
  server->data_dir_ = data_dir;
  server->credentials_.access_key_id = absl::StrCat("AK", RandomToken(18));
  server->credentials_.secret_access_key = RandomToken(40);
  server->credentials_.source = "test";

  SubprocessOptions options;
  options.binary = *binary;
  options.args = {"--host", "127.0.0.1", "--port", absl::StrCat(*port),
                  "--access-key", server->credentials_.access_key_id,
                  "--secret-key", server->credentials_.secret_access_key, data_dir};
  options.name = "s3s-fs";
  absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(options);
  if (!process.ok()) return process.status();
  server->process_ = *std::move(process);
  absl::Status up = WaitForPort(*port, absl::Seconds(20), server->process_.get());
  if (!up.ok()) return up;
  return server;
}

std::string S3Server::endpoint() const { return absl::StrCat("http://127.0.0.1:", port_); }

std::string S3Server::ObjectPath(const std::string& bucket, const std::string& key) const {
  return absl::StrCat(data_dir_, "/", bucket, "/", key);
}

absl::Status S3Server::CreateBucket(const std::string& bucket) const {
  return MakeDirs(absl::StrCat(data_dir_, "/", bucket));
}

S3Options S3Server::Options(const std::string& endpoint) const {
  S3Options options;
  options.endpoint = endpoint.empty() ? this->endpoint() : endpoint;
  options.region = "us-east-1";
  options.path_style = true;
  options.credentials = credentials_;
  options.retry.initial_backoff = absl::Milliseconds(20);
  options.retry.max_backoff = absl::Milliseconds(200);
  options.retry.max_attempts = 4;
  options.connect_timeout = absl::Seconds(2);
  options.request_timeout = absl::Seconds(20);
  return options;
}

absl::Status S3Server::Stop() {
  if (process_ == nullptr || !process_->Running()) return absl::OkStatus();
  absl::StatusOr<sluice::testing::ExitStatus> exit = process_->Stop(absl::Seconds(5));
  return exit.status();
}

S3Server* SharedS3Server() {
  S3Server* server = Shared().get();
  if (server == nullptr) {
    ADD_FAILURE() << "the shared s3s-fs server did not start: " << StartError();
  }
  return server;
}

std::string UniqueBucket() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = absl::AsciiStrToLower(
      info != nullptr ? absl::StrCat("t-", info->test_suite_name(), "-", info->name()) : "t-b");
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  }
  if (name.size() > 63) name.resize(63);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

}  // namespace sluice::s3::testing
