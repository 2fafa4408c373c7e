#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "common/auth/authorizer.h"
#include "common/auth/method_roles.h"
#include "common/auth/policy.h"
#include "common/auth/token_store.h"
#include "common/auth/worker_token.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "sluice/v1/task_service.pb.h"

#include <google/protobuf/descriptor.h>

namespace sluice::auth {
namespace {

std::string WriteTemp(const std::string& name, const std::string& contents) {
  std::string path = std::string(getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << contents;
  return path;
}

TEST(Sha256HexTest, KnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenStoreTest, LooksUpByHashOnly) {
  auto store = TokenStore::Parse(
      "# comment\nsha256:" + Sha256Hex("s3cret") + "  ops-admin\n\n", "tokens");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(store->Lookup("s3cret").value_or(""), "ops-admin");
  EXPECT_FALSE(store->Lookup("s3cre").has_value());
  EXPECT_FALSE(store->Lookup("").has_value());
}

TEST(TokenStoreTest, RefusesPlainTokensAndDuplicates) {
  auto plain = TokenStore::Parse("s3cret ops-admin\n", "tokens");
  EXPECT_EQ(plain.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plain.status().message().find("tokens line 1"), std::string::npos);
  const std::string line = "sha256:" + Sha256Hex("x") + " a\n";
  EXPECT_EQ(TokenStore::Parse(line + line, "t").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TokenStore::Parse("# nothing\n", "t").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PolicyTest, ParsesRolesAndWorkerBinding) {
  auto policy = Policy::Parse(
      "token:ops admin,reader\ncert:spiffe://sluice/worker/w0 worker w0 address=w0.sluice:7070 "
      "max_capacity=8\ntoken:supervisor@w0 supervisor w0\n",
      "policy");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->Find("cert:spiffe://sluice/worker/w0")->address_pattern, "w0.sluice:7070");
  EXPECT_EQ(policy->Find("cert:spiffe://sluice/worker/w0")->max_capacity, 8);
  EXPECT_EQ(policy->Find("token:supervisor@w0")->worker_id, "w0");
  ASSERT_NE(policy->Find("token:ops"), nullptr);
  EXPECT_EQ(policy->Find("token:ops")->roles.size(), 2u);
  EXPECT_EQ(policy->Find("cert:spiffe://sluice/worker/w0")->worker_id, "w0");
  EXPECT_EQ(policy->Find("token:nobody"), nullptr);
}

TEST(PolicyTest, RefusesWhatWouldBeAmbiguous) {
  for (const char* bad : {"ops admin\n", "token:a superuser\n", "token:w worker\n",
                          "token:r reader w0\n", "token:a admin\ntoken:a reader\n",
                          "token:w worker ../x a=*:1\n",
                          // A worker must say where it may register.
                          "token:w worker w0\n", "token:w worker w0 address=w0\n",
                          "token:w worker w0 address=*:7070\n", "token:w worker w0 address=a*b:1\n",
                          "token:w worker w0 address=w0:1 max_capacity=0\n",
                          "token:w worker w0 address=w0:1 color=red\n",
                          "token:s supervisor w0 address=w0:1\n"}) {
    EXPECT_EQ(Policy::Parse(bad, "p").status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(PolicyTest, AddressPatterns) {
  EXPECT_TRUE(AddressMatches("w0.sluice:7070", "w0.sluice:7070"));
  EXPECT_TRUE(AddressMatches("w0.sluice:7070", "W0.Sluice:7070"));
  EXPECT_FALSE(AddressMatches("w0.sluice:7070", "w1.sluice:7070"));
  EXPECT_FALSE(AddressMatches("w0.sluice:7070", "w0.sluice:7071"));
  EXPECT_TRUE(AddressMatches("127.0.0.1:*", "127.0.0.1:41234"));
  EXPECT_FALSE(AddressMatches("127.0.0.1:*", "127.0.0.2:41234"));
  EXPECT_TRUE(AddressMatches("*.headless.sluice:7070", "w0.headless.sluice:7070"));
  EXPECT_TRUE(AddressMatches("*.headless.sluice:7070", "a.b.headless.sluice:7070"));
  EXPECT_FALSE(AddressMatches("*.headless.sluice:7070", "headless.sluice:7070"));
  EXPECT_FALSE(AddressMatches("*.headless.sluice:7070", ".headless.sluice:7070"));
  EXPECT_FALSE(AddressMatches("*.headless.sluice:7070", "evil-headless.sluice:7070"));
  EXPECT_FALSE(AddressMatches("w0:7070", "w0"));
}

TEST(WorkerTokenTest, DerivedPerWorkerAndKey) {
  const std::string w0 = SupervisorTokenForWorker("key", "w0");
  EXPECT_EQ(w0.size(), 64u);
  EXPECT_EQ(w0, SupervisorTokenForWorker("key", "w0"));
  EXPECT_NE(w0, SupervisorTokenForWorker("key", "w1"));
  EXPECT_NE(w0, SupervisorTokenForWorker("other", "w0"));
  // HMAC-SHA256(key, "sluice supervisor to worker w0"), as
  // `printf %s "sluice supervisor to worker w0" | openssl dgst -sha256 -hmac key` prints it.
  EXPECT_EQ(w0, "c916e54bb91c4b235191f4262ab77936c2276f8faa675d921284ad16c6642566");
}

TEST(MethodRolesTest, EveryMethodOfBothServicesHasRoles) {
  auto table = MethodRoles::ForServices(
      {"sluice.v1.SupervisorService", "sluice.v1.TaskService"});
  ASSERT_TRUE(table.ok()) << table.status();
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  EXPECT_EQ(table->Methods().size(),
            static_cast<size_t>(
                pool->FindServiceByName("sluice.v1.SupervisorService")->method_count() +
                pool->FindServiceByName("sluice.v1.TaskService")->method_count()));
  const auto* publish = table->Find("/sluice.v1.SupervisorService/PublishSegments");
  ASSERT_NE(publish, nullptr);
  EXPECT_EQ(*publish, std::set<v1::Role>{v1::ROLE_WORKER});
  // ListTasks is on both services: only the full path finds it.
  EXPECT_EQ(table->Find("ListTasks"), nullptr);
  EXPECT_NE(table->Find("/sluice.v1.TaskService/ListTasks"), nullptr);
}

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AuthOptions options;
    options.tokens_file = WriteTemp("tokens", "sha256:" + Sha256Hex("admin-token") +
                                                  " ops\nsha256:" + Sha256Hex("worker-token") +
                                                  " w0\nsha256:" + Sha256Hex("nobody-token") +
                                                  " nobody\n");
    options.policy_file = WriteTemp(
        "policy",
        "token:ops admin\ntoken:w0 worker w0 address=127.0.0.1:*\n"
        "cert:spiffe://sluice/worker/w1 worker w1 address=127.0.0.1:*\n");
    options.client_certificates = true;
    auto authz = Authorizer::Create(options, {"sluice.v1.SupervisorService"});
    ASSERT_TRUE(authz.ok()) << authz.status();
    authz_ = *std::move(authz);
  }
  absl::StatusCode Code(const CallIdentity& id, const std::string& method) {
    return authz_->Authorize(id, "/sluice.v1.SupervisorService/" + method).status().code();
  }
  std::unique_ptr<Authorizer> authz_;
};

TEST_F(AuthorizerTest, UnauthenticatedWithoutOrWithBadCredentials) {
  EXPECT_EQ(Code({}, "ListSegments"), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Code({"Bearer wrong", ""}, "ListSegments"), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Code({"Basic YWRtaW4=", ""}, "ListSegments"), absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthorizerTest, RolesForWhatIsNotAMethod) {
  const std::set<v1::Role> readers = {v1::ROLE_READER, v1::ROLE_ADMIN};
  EXPECT_EQ(authz_->AuthorizeRoles({}, readers, "the metrics endpoint").status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(authz_->AuthorizeRoles({"Bearer wrong", ""}, readers, "x").status().code(),
            absl::StatusCode::kUnauthenticated);
  auto admin = authz_->AuthorizeRoles({"Bearer admin-token", ""}, readers, "x");
  ASSERT_TRUE(admin.ok()) << admin.status();
  EXPECT_EQ(admin->principal, "token:ops");
  auto worker = authz_->AuthorizeRoles({"Bearer worker-token", ""}, readers, "the metrics endpoint");
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(worker.status().message().find("may not read the metrics endpoint"), std::string::npos)
      << worker.status();
  EXPECT_EQ(authz_->AuthorizeRoles({"Bearer nobody-token", ""}, readers, "x").status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(AuthorizerTest, RolesDecide) {
  EXPECT_EQ(Code({"Bearer admin-token", ""}, "SubmitSupervisor"), absl::StatusCode::kOk);
  EXPECT_EQ(Code({"Bearer admin-token", ""}, "PublishSegments"),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code({"Bearer worker-token", ""}, "PublishSegments"), absl::StatusCode::kOk);
  EXPECT_EQ(Code({"Bearer worker-token", ""}, "SubmitSupervisor"),
            absl::StatusCode::kPermissionDenied);
  // Authenticated but not in the policy.
  EXPECT_EQ(Code({"Bearer nobody-token", ""}, "ListSegments"),
            absl::StatusCode::kPermissionDenied);
  // A worker certificate: a worker, bound to its id, and nothing more.
  auto caller = authz_->Authorize({"", "spiffe://sluice/worker/w1"},
                                  "/sluice.v1.SupervisorService/WorkerHeartbeat");
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->worker_id, "w1");
  EXPECT_TRUE(caller->authenticated);
  EXPECT_EQ(Code({"", "spiffe://sluice/worker/w1"}, "ResetOffsets"),
            absl::StatusCode::kPermissionDenied);
}

TEST(AuthorizerBindingTest, AWorkersServerAcceptsOnlySupervisorPrincipalsBoundToIt) {
  AuthOptions options;
  options.tokens_file = ::testing::TempDir() + "/binding-tokens";
  std::ofstream(options.tokens_file)
      << "sha256:" << Sha256Hex(SupervisorTokenForWorker("k", "w0")) << " supervisor@w0\n"
      << "sha256:" << Sha256Hex(SupervisorTokenForWorker("k", "w1")) << " supervisor@w1\n"
      << "sha256:" << Sha256Hex("plain") << " supervisor\n";
  options.policy_file = ::testing::TempDir() + "/binding-policy";
  std::ofstream(options.policy_file) << "token:supervisor@w0 supervisor w0\n"
                                        "token:supervisor@w1 supervisor w1\n"
                                        "token:supervisor supervisor\n"
                                        "cert:sluice-supervisor supervisor\n";
  options.client_certificates = true;
  options.server_worker_id = "w0";
  auto authz = Authorizer::Create(options, {"sluice.v1.TaskService"});
  ASSERT_TRUE(authz.ok()) << authz.status();
  auto call = [&](const CallIdentity& id) {
    return (*authz)->Authorize(id, "/sluice.v1.TaskService/StopTask").status();
  };
  EXPECT_TRUE(call({"Bearer " + SupervisorTokenForWorker("k", "w0"), ""}).ok());
  absl::Status other = call({"Bearer " + SupervisorTokenForWorker("k", "w1"), ""});
  EXPECT_EQ(other.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(other.message(), "supervisor principal token:supervisor@w1 is bound to worker w1; this is worker w0");
  EXPECT_EQ(call({"Bearer plain", ""}).code(), absl::StatusCode::kPermissionDenied);
  // A certificate cannot be replayed: it may be unbound.
  EXPECT_TRUE(call({"", "sluice-supervisor"}).ok());
}

TEST(AuthorizerCreateTest, NoAuthenticationIsAnExplicitChoice) {
  auto refused = Authorizer::Create({}, {"sluice.v1.SupervisorService"});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("--insecure_no_auth"), std::string::npos);
  AuthOptions insecure;
  insecure.insecure_no_auth = true;
  auto open = Authorizer::Create(insecure, {"sluice.v1.SupervisorService"});
  ASSERT_TRUE(open.ok());
  auto caller = (*open)->Authorize({}, "/sluice.v1.SupervisorService/SubmitSupervisor");
  ASSERT_TRUE(caller.ok());
  EXPECT_FALSE(caller->authenticated);
}

TEST(LoopbackTest, Addresses) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:7070"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:0"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:7070"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:7070"));
  EXPECT_FALSE(IsLoopbackAddress("[::]:7070"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1:7070"));
}

}  // namespace
}  // namespace sluice::auth
