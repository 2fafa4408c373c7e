// Authentication and roles on both services, in-process over loopback with
// bearer tokens: every method the servers list through reflection has roles
// in the proto, an unauthenticated call to it is UNAUTHENTICATED, a call with
// a role the method does not allow is PERMISSION_DENIED, and a call with an
// allowed role gets past authorization. Workers are bound to their ids.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/auth/grpc_auth.h"
#include "common/auth/method_roles.h"
#include "common/auth/token_store.h"
#include "common/auth/worker_token.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "sluice/v1/task_service.grpc.pb.h"
#include "supervisor/testing/test_util.h"
#include "tests/grpc_introspection.h"
#include "tests/in_process_cluster.h"

namespace sluice {
namespace {

constexpr char kSupervisorKey[] = "supervisor-key-4";

struct Principal {
  std::string token;
  v1::Role role;
};

class ClusterAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = std::getenv("TEST_TMPDIR");
    principals_ = {{"admin", {"admin-token-1", v1::ROLE_ADMIN}},
                   {"reader", {"reader-token-2", v1::ROLE_READER}},
                   {"worker-0", {"worker-token-3", v1::ROLE_WORKER}},
                   // What the supervisor presents to worker-0: derived from
                   // its key, bound to worker-0.
                   {"supervisor@worker-0",
                    {auth::SupervisorTokenForWorker(kSupervisorKey, "worker-0"),
                     v1::ROLE_SUPERVISOR}}};
    std::ofstream tokens(dir + "/tokens");
    std::ofstream policy(dir + "/policy");
    for (const auto& [name, p] : principals_) {
      tokens << "sha256:" << auth::Sha256Hex(p.token) << " " << name << "\n";
      policy << "token:" << name << " " << auth::RoleName(p.role)
             << (p.role == v1::ROLE_WORKER ? " worker-0 address=127.0.0.1:* max_capacity=8" : "")
             << (p.role == v1::ROLE_SUPERVISOR ? " worker-0" : "") << "\n";
    }
    // Two supervisor tokens worker-0 must refuse: one bound to another
    // worker (what the supervisor sends worker-1), one bound to none.
    tokens << "sha256:" << auth::Sha256Hex(auth::SupervisorTokenForWorker(kSupervisorKey, "worker-1"))
           << " supervisor@worker-1\n"
           << "sha256:" << auth::Sha256Hex("unbound-supervisor-token") << " supervisor-unbound\n";
    policy << "token:supervisor@worker-1 supervisor worker-1\n"
           << "token:supervisor-unbound supervisor\n";
    tokens.close();
    policy.close();
    testing::InProcessClusterOptions options;
    options.supervisor_auth = {dir + "/tokens", dir + "/policy", false, false};
    options.worker_auth = options.supervisor_auth;
    options.supervisor_client_auth = {kSupervisorKey};
    options.worker_client_auth = {principals_["worker-0"].token};
    auto cluster = testing::InProcessCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  static std::shared_ptr<grpc::Channel> Dial(const std::string& address,
                                             const std::string& token) {
    return auth::NewChannel(address, grpc::InsecureChannelCredentials(), {token});
  }

  // Calls `path` with an empty request; the status.
  static grpc::Status Call(const std::shared_ptr<grpc::Channel>& channel, const std::string& path) {
    return testing::CallWithEmptyRequest(channel, path);
  }

  std::map<std::string, Principal> principals_;
  std::unique_ptr<testing::InProcessCluster> cluster_;
};

TEST_F(ClusterAuthTest, EveryReflectedMethodHasRolesAndEnforcesThem) {
  int methods = 0;
  for (const std::string& address :
       {cluster_->supervisor().address(), cluster_->worker().address()}) {
    // Reflection needs no role (it serves the public contract).
    auto services = testing::ReflectServices(Dial(address, ""));
    ASSERT_TRUE(services.ok()) << services.status();
    for (const auto& [service, names] : *services) {
      if (!absl::StartsWith(service, "sluice.")) continue;
      const auto* descriptor =
          google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
      ASSERT_NE(descriptor, nullptr) << service;
      for (const std::string& name : names) {
        ++methods;
        const std::string path = absl::StrCat("/", service, "/", name);
        const std::set<v1::Role> roles = auth::RolesOf(*descriptor->FindMethodByName(name));
        ASSERT_FALSE(roles.empty()) << path << " has no (sluice.v1.auth) roles";
        grpc::Status anonymous = Call(Dial(address, ""), path);
        EXPECT_EQ(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED) << path;
        grpc::Status forged = Call(Dial(address, "not-a-token"), path);
        EXPECT_EQ(forged.error_code(), grpc::StatusCode::UNAUTHENTICATED) << path;
        for (const auto& [who, principal] : principals_) {
          grpc::Status status = Call(Dial(address, principal.token), path);
          const bool refused_by_role =
              status.error_code() == grpc::StatusCode::PERMISSION_DENIED &&
              absl::StrContains(status.error_message(), "may not call");
          if (roles.count(principal.role)) {
            EXPECT_FALSE(refused_by_role) << path << " as " << who << ": " << status.error_message();
            EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << path << " as " << who;
          } else {
            EXPECT_TRUE(refused_by_role) << path << " as " << who << ": " << status.error_code()
                                         << " " << status.error_message();
          }
        }
      }
    }
  }
  EXPECT_EQ(methods, 36);  // 26 supervisor + 10 task methods
}

TEST_F(ClusterAuthTest, AWorkerTokenActsOnlyAsItsOwnWorker) {
  for (int i = 0; i < 100 && !cluster_->worker().registered(); ++i) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(cluster_->worker().registered()) << "the worker registers with its token";
  auto stub = v1::SupervisorService::NewStub(
      Dial(cluster_->supervisor().address(), principals_["worker-0"].token));
  v1::WorkerHeartbeatRequest beat;
  beat.set_worker_id("worker-9");
  v1::WorkerHeartbeatResponse answer;
  grpc::ClientContext c1;
  grpc::Status status = stub->WorkerHeartbeat(&c1, beat, &answer);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  v1::ReportTaskStatusRequest report;
  report.set_worker_id("worker-9");
  report.mutable_status()->set_task_id("wiki_0123456789abcdef_01234567");
  report.mutable_status()->set_state(v1::TASK_STATE_SUCCESS);
  v1::ReportTaskStatusResponse none;
  grpc::ClientContext c2;
  status = stub->ReportTaskStatus(&c2, report, &none);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  // A datasource exists (an admin submitted it), but not this task.
  auto admin = v1::SupervisorService::NewStub(
      Dial(cluster_->supervisor().address(), principals_["admin"].token));
  v1::SubmitSupervisorRequest submit;
  *submit.mutable_spec() = supervisor::testing::TestSpec("wiki");
  v1::SubmitSupervisorResponse submitted;
  grpc::ClientContext c0;
  ASSERT_TRUE(admin->SubmitSupervisor(&c0, submit, &submitted).ok());
  v1::PublishSegmentsRequest publish;
  publish.set_datasource("wiki");
  publish.set_task_id("wiki_0123456789abcdef_01234567");
  publish.set_sequence_name("wiki_0123456789abcdef_0");
  (*publish.mutable_start_offsets())[0] = 0;
  (*publish.mutable_end_offsets())[0] = 500;
  v1::PublishSegmentsResponse published;
  grpc::ClientContext c3;
  status = stub->PublishSegments(&c3, publish, &published);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "no such task")) << status.error_message();
}

TEST_F(ClusterAuthTest, ASupervisorTokenWorksOnlyOnTheWorkerItIsBoundTo) {
  // What worker-1 receives from the supervisor, replayed against worker-0;
  // and a supervisor token bound to no worker.
  for (const std::string& token :
       {auth::SupervisorTokenForWorker(kSupervisorKey, "worker-1"),
        std::string("unbound-supervisor-token")}) {
    auto stub = v1::TaskService::NewStub(Dial(cluster_->worker().address(), token));
    v1::StopTaskRequest stop;
    stop.set_task_id("wiki_0123456789abcdef_01234567");
    v1::StopTaskResponse stopped;
    grpc::ClientContext context;
    grpc::Status status = stub->StopTask(&context, stop, &stopped);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
    EXPECT_TRUE(absl::StrContains(status.error_message(), "worker-0")) << status.error_message();
  }
  // The supervisor's own key is no token at all.
  auto stub = v1::TaskService::NewStub(Dial(cluster_->worker().address(), kSupervisorKey));
  v1::ListTasksRequest list;
  v1::ListTasksResponse listed;
  grpc::ClientContext context;
  EXPECT_EQ(stub->ListTasks(&context, list, &listed).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // The token derived for worker-0 is what the supervisor uses: it reaches
  // the worker (NOT_FOUND: no such task, past authorization).
  auto bound = v1::TaskService::NewStub(
      Dial(cluster_->worker().address(), principals_["supervisor@worker-0"].token));
  v1::StopTaskRequest stop;
  stop.set_task_id("wiki_0123456789abcdef_01234567");
  v1::StopTaskResponse stopped;
  grpc::ClientContext c2;
  EXPECT_EQ(bound->StopTask(&c2, stop, &stopped).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ClusterAuthTest, AWorkerRegistersOnlyAtItsDeclaredAddressWithinItsCapacity) {
  auto stub = v1::SupervisorService::NewStub(
      Dial(cluster_->supervisor().address(), principals_["worker-0"].token));
  auto attempt = [&](const std::string& address, int capacity) {
    v1::RegisterWorkerRequest request;
    request.mutable_worker()->set_worker_id("worker-0");
    request.mutable_worker()->set_address(address);
    request.mutable_worker()->set_capacity(capacity);
    v1::RegisterWorkerResponse response;
    grpc::ClientContext context;
    return stub->RegisterWorker(&context, request, &response);
  };
  // Elsewhere than its declared 127.0.0.1:*: the supervisor would send its
  // calls (and the tasks placed there) to whoever listens.
  grpc::Status status = attempt("attacker.example:7070", 4);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "only at 127.0.0.1:*"))
      << status.error_message();
  // More slots than declared (max_capacity=8): it would draw every new task.
  status = attempt(cluster_->worker().address(), 1000);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "at most 8")) << status.error_message();
  // Its real address and capacity are fine.
  status = attempt(cluster_->worker().address(), 4);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace sluice
