// The in-process cluster over mutual TLS: the supervisor and a task worker on
// 127.0.0.1:0 with certificates made by `openssl` at test time. Clients with
// a certificate from the cluster's CA are served (health and reflection, as
// grpcurl -cacert/-cert/-key would use them); clients without one, with one
// from another CA, or in plaintext are refused; bad certificate options stop
// a server from starting, with a message naming the file.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "common/file_util.h"
#include "common/tls/credentials.h"
#include "common/tls/test_certs.h"
#include "supervisor/supervisor_server.h"
#include "task/worker_server.h"
#include "tests/grpc_introspection.h"

namespace sluice {
namespace {

class ClusterTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_tls_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto ca = tls::MakeTestCa(dir_, "cluster-ca");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *ca;
    auto other_ca = tls::MakeTestCa(dir_, "other-ca");
    ASSERT_TRUE(other_ca.ok()) << other_ca.status();
    for (auto [name, issuer, out] :
         {std::make_tuple("supervisor", &ca_, &supervisor_cert_),
          std::make_tuple("worker", &ca_, &worker_cert_),
          std::make_tuple("operator", &ca_, &operator_cert_),
          std::make_tuple("stranger", &*other_ca, &stranger_cert_)}) {
      auto cert = tls::MakeTestCert(dir_, *issuer, name);
      ASSERT_TRUE(cert.ok()) << cert.status();
      *out = *cert;
    }

    supervisor::SupervisorServerOptions sopts;
    sopts.listen_address = "127.0.0.1:0";
    sopts.data_dir = dir_ + "/supervisor";
    sopts.tls = {supervisor_cert_.cert_path, supervisor_cert_.key_path, ca_.cert_path};
    auto s = supervisor::SupervisorServer::Start(sopts);
    ASSERT_TRUE(s.ok()) << s.status();
    supervisor_ = std::move(*s);

    auto w = task::WorkerServer::Start(WorkerOptions());
    ASSERT_TRUE(w.ok()) << w.status();
    worker_ = std::move(*w);
  }

  void TearDown() override {
    worker_.reset();
    supervisor_.reset();
    ASSERT_TRUE(RemoveAll(dir_).ok());
  }

  task::WorkerServerOptions WorkerOptions() const {
    task::WorkerServerOptions wopts;
    wopts.listen_address = "127.0.0.1:0";
    wopts.data_dir = dir_ + "/worker";
    wopts.supervisor_address = supervisor_->address();
    wopts.worker_id = "worker-0";
    wopts.deep_storage_uri = "file://" + dir_ + "/deep";
    wopts.tls = {worker_cert_.cert_path, worker_cert_.key_path, ca_.cert_path};
    return wopts;
  }

  static std::shared_ptr<grpc::Channel> Dial(const std::string& address,
                                             const tls::TlsOptions& tls) {
    auto creds = tls::MakeChannelCredentials(tls);
    EXPECT_TRUE(creds.ok()) << creds.status();
    return grpc::CreateChannel(address, creds.ok() ? *creds : nullptr);
  }

  std::string dir_;
  tls::TestCa ca_;
  tls::TestCert supervisor_cert_, worker_cert_, operator_cert_, stranger_cert_;
  std::unique_ptr<supervisor::SupervisorServer> supervisor_;
  std::unique_ptr<task::WorkerServer> worker_;
};

TEST_F(ClusterTlsTest, ClientsWithTheClusterCaCertificateAreServed) {
  const tls::TlsOptions operator_tls{operator_cert_.cert_path, operator_cert_.key_path,
                                     ca_.cert_path};
  for (const std::string& address : {supervisor_->address(), worker_->address()}) {
    auto health = testing::CheckHealth(Dial(address, operator_tls));
    ASSERT_TRUE(health.ok()) << address << ": " << health.status();
    EXPECT_EQ(*health, "SERVING") << address;
  }
  auto services = testing::ReflectServices(Dial(supervisor_->address(), operator_tls));
  ASSERT_TRUE(services.ok()) << services.status();
  EXPECT_TRUE(services->count("sluice.v1.SupervisorService"));
  services = testing::ReflectServices(Dial(worker_->address(), operator_tls));
  ASSERT_TRUE(services.ok()) << services.status();
  EXPECT_TRUE(services->count("sluice.v1.TaskService"));
  // The services' own certificates work as client certificates too (the
  // worker calls the supervisor and back with them).
  auto health = testing::CheckHealth(
      Dial(supervisor_->address(), {worker_cert_.cert_path, worker_cert_.key_path, ca_.cert_path}));
  ASSERT_TRUE(health.ok()) << health.status();
}

TEST_F(ClusterTlsTest, ClientsWithoutAValidCertificateAreRefused) {
  const std::map<std::string, tls::TlsOptions> refused = {
      {"no client certificate", {"", "", ca_.cert_path}},
      {"certificate from another CA",
       {stranger_cert_.cert_path, stranger_cert_.key_path, ca_.cert_path}},
      {"plaintext", {}},
  };
  for (const std::string& address : {supervisor_->address(), worker_->address()}) {
    for (const auto& [what, tls] : refused) {
      auto health = testing::CheckHealth(Dial(address, tls));
      EXPECT_EQ(health.status().code(), absl::StatusCode::kUnavailable)
          << address << ", " << what << ": " << (health.ok() ? *health : health.status().ToString());
    }
  }
}

TEST_F(ClusterTlsTest, BadCertificateOptionsStopAServerFromStarting) {
  task::WorkerServerOptions wopts = WorkerOptions();
  wopts.data_dir = dir_ + "/worker-bad";
  wopts.tls.key_path = supervisor_cert_.key_path;  // not the worker certificate's key
  auto w = task::WorkerServer::Start(wopts);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << w.status();
  EXPECT_TRUE(absl::StrContains(w.status().message(), "does not match the certificate"))
      << w.status();

  supervisor::SupervisorServerOptions sopts;
  sopts.listen_address = "127.0.0.1:0";
  sopts.data_dir = dir_ + "/supervisor-bad";
  sopts.tls = {"", "", ca_.cert_path};  // a CA alone cannot make a TLS server
  auto s = supervisor::SupervisorServer::Start(sopts);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
}

}  // namespace
}  // namespace sluice
