// Mutual TLS over a real gRPC server on loopback, with certificates made by
// `openssl` at test time.
#include "common/tls/credentials.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "common/tls/test_certs.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace sluice {
namespace tls {
namespace {

class HealthService : public grpc::health::v1::Health::Service {
  grpc::Status Check(grpc::ServerContext*, const grpc::health::v1::HealthCheckRequest*,
                     grpc::health::v1::HealthCheckResponse* resp) override {
    resp->set_status(grpc::health::v1::HealthCheckResponse::SERVING);
    return grpc::Status::OK;
  }
};

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(std::getenv("TEST_TMPDIR"));
    auto ca = MakeTestCa(*dir_, "ca");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = new TestCa(*ca);
    auto other_ca = MakeTestCa(*dir_, "other-ca");
    ASSERT_TRUE(other_ca.ok()) << other_ca.status();
    other_ca_ = new TestCa(*other_ca);
    for (auto [name, issuer, out] :
         {std::make_tuple("server", ca_, &server_), std::make_tuple("client", ca_, &client_),
          std::make_tuple("stranger", other_ca_, &stranger_)}) {
      auto cert = MakeTestCert(*dir_, *issuer, name);
      ASSERT_TRUE(cert.ok()) << cert.status();
      *out = new TestCert(*cert);
    }
  }

  // Starts a server with the health service over `options`; returns its port.
  int StartServer(const TlsOptions& options) {
    auto creds = MakeServerCredentials(options);
    EXPECT_TRUE(creds.ok()) << creds.status();
    if (!creds.ok()) return 0;
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", *creds, &port);
    builder.RegisterService(&health_);
    grpc_server_ = builder.BuildAndStart();
    EXPECT_NE(grpc_server_, nullptr);
    return port;
  }

  // One Health.Check over `options`; the status it ends with.
  grpc::Status Check(int port, const TlsOptions& options) {
    auto creds = MakeChannelCredentials(options);
    EXPECT_TRUE(creds.ok()) << creds.status();
    if (!creds.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "no credentials");
    auto stub = grpc::health::v1::Health::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port), *creds));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    grpc::Status status = stub->Check(&ctx, req, &resp);
    if (status.ok()) {
      EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
    }
    return status;
  }

  void TearDown() override {
    if (grpc_server_) grpc_server_->Shutdown();
  }

  static std::string* dir_;
  static TestCa* ca_;
  static TestCa* other_ca_;
  static TestCert* server_;
  static TestCert* client_;
  static TestCert* stranger_;  // signed by other_ca_
  HealthService health_;
  std::unique_ptr<grpc::Server> grpc_server_;
};

std::string* TlsTest::dir_;
TestCa* TlsTest::ca_;
TestCa* TlsTest::other_ca_;
TestCert* TlsTest::server_;
TestCert* TlsTest::client_;
TestCert* TlsTest::stranger_;

TEST_F(TlsTest, MutualTlsServesClientsWithAValidCertificate) {
  int port = StartServer({server_->cert_path, server_->key_path, ca_->cert_path});
  ASSERT_GT(port, 0);
  grpc::Status status = Check(port, {client_->cert_path, client_->key_path, ca_->cert_path});
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(TlsTest, MutualTlsRefusesClientsWithoutAValidCertificate) {
  int port = StartServer({server_->cert_path, server_->key_path, ca_->cert_path});
  ASSERT_GT(port, 0);
  // TLS, trusts the server, but presents no certificate.
  EXPECT_EQ(Check(port, {"", "", ca_->cert_path}).error_code(), grpc::StatusCode::UNAVAILABLE);
  // A certificate from another CA.
  EXPECT_EQ(Check(port, {stranger_->cert_path, stranger_->key_path, ca_->cert_path}).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // Plaintext.
  EXPECT_EQ(Check(port, {}).error_code(), grpc::StatusCode::UNAVAILABLE);
  // And a valid client still gets in afterwards.
  EXPECT_TRUE(Check(port, {client_->cert_path, client_->key_path, ca_->cert_path}).ok());
}

TEST_F(TlsTest, ClientRefusesAServerItCannotVerify) {
  int port = StartServer({stranger_->cert_path, stranger_->key_path, ""});
  ASSERT_GT(port, 0);
  EXPECT_EQ(Check(port, {client_->cert_path, client_->key_path, ca_->cert_path}).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(Check(port, {"", "", other_ca_->cert_path}).ok());
}

// What the Kubernetes set-up relies on: one worker certificate with the SAN
// *.sluice-task-headless.sluice.svc.cluster.local serves every pod's DNS name.
TEST_F(TlsTest, WildcardCertificateServesEveryPodName) {
  auto worker = MakeTestCert(*dir_, *ca_, "wildcard", 1,
                             "DNS:*.sluice-task-headless.sluice.svc.cluster.local");
  ASSERT_TRUE(worker.ok()) << worker.status();
  int port = StartServer({worker->cert_path, worker->key_path, ca_->cert_path});
  ASSERT_GT(port, 0);
  auto creds = MakeChannelCredentials({client_->cert_path, client_->key_path, ca_->cert_path});
  ASSERT_TRUE(creds.ok()) << creds.status();
  auto check_as = [&](const std::string& name) {
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride(name);  // as if dialling `name`
    auto stub = grpc::health::v1::Health::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), *creds, args));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    return stub->Check(&ctx, req, &resp).error_code();
  };
  EXPECT_EQ(check_as("sluice-task-0.sluice-task-headless.sluice.svc.cluster.local"),
            grpc::StatusCode::OK);
  EXPECT_EQ(check_as("sluice-task-17.sluice-task-headless.sluice.svc.cluster.local"),
            grpc::StatusCode::OK);
  EXPECT_EQ(check_as("sluice-supervisor.sluice.svc.cluster.local"), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, ServerWithoutCaDoesNotAskForClientCertificates) {
  int port = StartServer({server_->cert_path, server_->key_path, ""});
  ASSERT_GT(port, 0);
  EXPECT_TRUE(Check(port, {"", "", ca_->cert_path}).ok());
  EXPECT_EQ(Check(port, {}).error_code(), grpc::StatusCode::UNAVAILABLE);  // plaintext
}

TEST_F(TlsTest, NothingGivenIsPlaintext) {
  EXPECT_FALSE(TlsOptions{}.enabled());
  int port = StartServer({});
  ASSERT_GT(port, 0);
  EXPECT_TRUE(Check(port, {}).ok());
  EXPECT_EQ(Check(port, {"", "", ca_->cert_path}).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, LoadsWhatTheFilesHold) {
  auto material = LoadTlsMaterial({client_->cert_path, client_->key_path, ca_->cert_path});
  ASSERT_TRUE(material.ok()) << material.status();
  EXPECT_TRUE(absl::StartsWith(material->cert_chain, "-----BEGIN CERTIFICATE-----"));
  EXPECT_TRUE(absl::StrContains(material->private_key, "PRIVATE KEY-----"));
  EXPECT_TRUE(absl::StartsWith(material->ca_bundle, "-----BEGIN CERTIFICATE-----"));
}

// The status of LoadTlsMaterial, MakeServerCredentials and
// MakeChannelCredentials for the same options must agree.
void ExpectError(const TlsOptions& options, absl::StatusCode code,
                 const std::string& message_part) {
  absl::Status load = LoadTlsMaterial(options).status();
  EXPECT_EQ(load.code(), code) << load;
  EXPECT_TRUE(absl::StrContains(load.message(), message_part)) << load;
  absl::Status server = MakeServerCredentials(options).status();
  EXPECT_EQ(server.code(), code) << server;
  absl::Status client = MakeChannelCredentials(options).status();
  EXPECT_EQ(client.code(), code) << client;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

TEST_F(TlsTest, ClearErrorsForBadFiles) {
  const std::string missing = *dir_ + "/missing.pem";
  ExpectError({missing, client_->key_path, ""}, absl::StatusCode::kNotFound,
              "cannot read tls_cert \"" + missing + "\": No such file or directory");
  ExpectError({client_->cert_path, client_->key_path, missing}, absl::StatusCode::kNotFound,
              "tls_ca \"" + missing + "\"");

  // The key of another certificate.
  ExpectError({client_->cert_path, server_->key_path, ""}, absl::StatusCode::kInvalidArgument,
              "tls_key \"" + server_->key_path +
                  "\" does not match the certificate in tls_cert \"" + client_->cert_path + "\"");

  const std::string garbage = *dir_ + "/garbage.pem";
  WriteFile(garbage, "this is not PEM\n");
  ExpectError({garbage, client_->key_path, ""}, absl::StatusCode::kInvalidArgument,
              "tls_cert \"" + garbage + "\" is not a PEM certificate file");
  ExpectError({client_->cert_path, garbage, ""}, absl::StatusCode::kInvalidArgument,
              "tls_key \"" + garbage + "\" is not an unencrypted PEM private key");
  ExpectError({client_->cert_path, client_->key_path, garbage}, absl::StatusCode::kInvalidArgument,
              "tls_ca \"" + garbage + "\"");
  // A key where the certificate should be.
  ExpectError({client_->key_path, client_->key_path, ""}, absl::StatusCode::kInvalidArgument,
              "is not a PEM certificate file");

  // A truncated certificate.
  std::ifstream in(client_->cert_path);
  std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = *dir_ + "/truncated.pem";
  WriteFile(truncated, pem.substr(0, pem.size() / 2));
  ExpectError({truncated, client_->key_path, ""}, absl::StatusCode::kInvalidArgument,
              "is not a PEM certificate file");
}

TEST_F(TlsTest, CertificateAndKeyGoTogether) {
  ExpectError({client_->cert_path, "", ca_->cert_path}, absl::StatusCode::kInvalidArgument,
              "tls_cert and tls_key go together; got only tls_cert");
  ExpectError({"", client_->key_path, ""}, absl::StatusCode::kInvalidArgument, "got only tls_key");
  // A server cannot do TLS with only a CA; a client can.
  absl::Status server = MakeServerCredentials({"", "", ca_->cert_path}).status();
  EXPECT_EQ(server.code(), absl::StatusCode::kInvalidArgument) << server;
  EXPECT_TRUE(absl::StrContains(server.message(), "a TLS server needs tls_cert and tls_key"));
  EXPECT_TRUE(MakeChannelCredentials({"", "", ca_->cert_path}).ok());
}

TEST_F(TlsTest, ExpiredCertificateIsRefusedAtStartup) {
  auto expired = MakeTestCert(*dir_, *ca_, "expired", /*days=*/-1);
  ASSERT_TRUE(expired.ok()) << expired.status();
  ExpectError({expired->cert_path, expired->key_path, ca_->cert_path},
              absl::StatusCode::kFailedPrecondition, "expired on");
}

}  // namespace
}  // namespace tls
}  // namespace sluice
