// The in-process cluster over mutual TLS, with certificates made by `openssl`
// at test time, and client certificates as the only credentials: the
// principal is the certificate's SAN URI (else its CN), its roles come from
// the policy. Clients with a certificate from the cluster's CA are served
// (health and reflection, as grpcurl -cacert/-cert/-key would use them) and
// may call what their role allows: a worker's certificate cannot call admin
// RPCs, nor act as another worker; clients without one, with one from another
// CA, or in plaintext are refused; bad certificate options stop a server from
// starting, with a message naming the file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/tls/credentials.h"
#include "common/tls/test_certs.h"
#include "supervisor/supervisor_server.h"
#include "task/worker_server.h"
#include "tests/grpc_introspection.h"
#include "tests/in_process_cluster.h"

namespace sluice {
namespace {

class ClusterTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::getenv("TEST_TMPDIR");
    auto ca = tls::MakeTestCa(dir_, "cluster-ca");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *ca;
    auto other_ca = tls::MakeTestCa(dir_, "other-ca");
    ASSERT_TRUE(other_ca.ok()) << other_ca.status();
    const std::string loopback = tls::kLoopbackSans;
    for (auto [name, issuer, out, sans] :
         {std::make_tuple("supervisor", &ca_, &supervisor_cert_, loopback),
          std::make_tuple("worker", &ca_, &worker_cert_,
                          loopback + ",URI:spiffe://sluice/worker/worker-0"),
          std::make_tuple("operator", &ca_, &operator_cert_, loopback),
          std::make_tuple("stranger", &*other_ca, &stranger_cert_, loopback)}) {
      auto cert = tls::MakeTestCert(dir_, *issuer, name, 1, sans);
      ASSERT_TRUE(cert.ok()) << cert.status();
      *out = *cert;
    }
    const std::string policy = dir_ + "/policy";
    std::ofstream(policy) << "cert:supervisor supervisor\n"
                             "cert:spiffe://sluice/worker/worker-0 worker worker-0 address=127.0.0.1:*\n"
                             "cert:operator admin\n";
    testing::InProcessClusterOptions options;
    options.supervisor_auth = {"", policy, /*client_certificates=*/true, false};
    options.worker_auth = {"", policy, /*client_certificates=*/true, false};
    options.supervisor_tls = {supervisor_cert_.cert_path, supervisor_cert_.key_path, ca_.cert_path};
    options.worker_tls = {worker_cert_.cert_path, worker_cert_.key_path, ca_.cert_path};
    auto cluster = testing::InProcessCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
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
  std::unique_ptr<testing::InProcessCluster> cluster_;
};

TEST_F(ClusterTlsTest, ClientsWithTheClusterCaCertificateAreServed) {
  const tls::TlsOptions operator_tls{operator_cert_.cert_path, operator_cert_.key_path,
                                     ca_.cert_path};
  const std::string supervisor = cluster_->supervisor().address();
  const std::string worker = cluster_->worker().address();
  for (const std::string& address : {supervisor, worker}) {
    auto health = testing::CheckHealth(Dial(address, operator_tls));
    ASSERT_TRUE(health.ok()) << address << ": " << health.status();
    EXPECT_EQ(*health, "SERVING") << address;
  }
  auto services = testing::ReflectServices(Dial(supervisor, operator_tls));
  ASSERT_TRUE(services.ok()) << services.status();
  EXPECT_TRUE(services->count("sluice.v1.SupervisorService"));
  services = testing::ReflectServices(Dial(worker, operator_tls));
  ASSERT_TRUE(services.ok()) << services.status();
  EXPECT_TRUE(services->count("sluice.v1.TaskService"));
  // The services' own certificates work as client certificates too (the
  // worker calls the supervisor and back with them).
  auto health = testing::CheckHealth(
      Dial(supervisor, {worker_cert_.cert_path, worker_cert_.key_path, ca_.cert_path}));
  ASSERT_TRUE(health.ok()) << health.status();
}

TEST_F(ClusterTlsTest, ACertificateCarriesItsPrincipalsRolesOnly) {
  auto call = [&](const std::string& address, const tls::TestCert& cert, const std::string& method) {
    return testing::CallWithEmptyRequest(Dial(address, {cert.cert_path, cert.key_path, ca_.cert_path}),
                                         method)
        .error_code();
  };
  const std::string supervisor = cluster_->supervisor().address();
  // The worker registered with its own certificate (worker role, bound to worker-0).
  for (int i = 0; i < 100 && !cluster_->worker().registered(); ++i) absl::SleepFor(absl::Milliseconds(50));
  EXPECT_TRUE(cluster_->worker().registered());
  // An operator (admin) may read and administer; a worker's certificate may not.
  EXPECT_EQ(call(supervisor, operator_cert_, "/sluice.v1.SupervisorService/ListSupervisors"),
            grpc::StatusCode::OK);
  for (const char* admin : {"/sluice.v1.SupervisorService/ListSupervisors",
                            "/sluice.v1.SupervisorService/SubmitSupervisor",
                            "/sluice.v1.SupervisorService/ResetOffsets"}) {
    EXPECT_EQ(call(supervisor, worker_cert_, admin), grpc::StatusCode::PERMISSION_DENIED) << admin;
  }
  // The supervisor's certificate drives tasks; an operator's does not.
  EXPECT_EQ(call(cluster_->worker().address(), operator_cert_, "/sluice.v1.TaskService/Pause"),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(call(cluster_->worker().address(), worker_cert_, "/sluice.v1.TaskService/RunTask"),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(ClusterTlsTest, ClientsWithoutAValidCertificateAreRefused) {
  const std::map<std::string, tls::TlsOptions> refused = {
      {"no client certificate", {"", "", ca_.cert_path}},
      {"certificate from another CA",
       {stranger_cert_.cert_path, stranger_cert_.key_path, ca_.cert_path}},
      {"plaintext", {}},
  };
  for (const std::string& address :
       {cluster_->supervisor().address(), cluster_->worker().address()}) {
    for (const auto& [what, tls] : refused) {
      auto health = testing::CheckHealth(Dial(address, tls));
      EXPECT_EQ(health.status().code(), absl::StatusCode::kUnavailable)
          << address << ", " << what << ": "
          << (health.ok() ? *health : health.status().ToString());
    }
  }
}

TEST_F(ClusterTlsTest, BadCertificateOptionsStopAServerFromStarting) {
  task::WorkerServerOptions wopts;
  wopts.auth.insecure_no_auth = true;  // auth: tests/cluster_auth_test.cc
  wopts.listen_address = "127.0.0.1:0";
  wopts.data_dir = dir_ + "/worker-bad";
  wopts.supervisor_address = cluster_->supervisor().address();
  wopts.worker_id = "worker-bad";
  // Not the key of the worker certificate.
  wopts.tls = {worker_cert_.cert_path, supervisor_cert_.key_path, ca_.cert_path};
  auto w = task::WorkerServer::Start(wopts);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << w.status();
  EXPECT_TRUE(absl::StrContains(w.status().message(), "does not match the certificate"))
      << w.status();

  supervisor::SupervisorServerOptions sopts;
  sopts.auth.insecure_no_auth = true;  // auth: tests/cluster_auth_test.cc
  sopts.listen_address = "127.0.0.1:0";
  sopts.data_dir = dir_ + "/supervisor-bad";
  sopts.tls = {"", "", ca_.cert_path};  // a CA alone cannot make a TLS server
  auto s = supervisor::SupervisorServer::Start(sopts);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
}

}  // namespace
}  // namespace sluice
