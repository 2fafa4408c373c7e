// In-process cluster: the supervisor and a task worker on localhost:0, seen
// through the standard health and reflection protocols (what grpcurl and
// Kubernetes probes use).
#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/file_util.h"
#include "supervisor/supervisor_server.h"
#include "task/worker_server.h"
#include "tests/grpc_introspection.h"

namespace sluice {
namespace {

class ClusterSmokeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_smoke_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    supervisor::SupervisorServerOptions sopts;
    sopts.auth.insecure_no_auth = true;  // auth: tests/cluster_auth_test.cc
    sopts.listen_address = "127.0.0.1:0";
    sopts.data_dir = dir_ + "/supervisor";
    auto s = supervisor::SupervisorServer::Start(sopts);
    ASSERT_TRUE(s.ok()) << s.status();
    supervisor_ = std::move(*s);

    task::WorkerServerOptions wopts;
    wopts.auth.insecure_no_auth = true;  // auth: tests/cluster_auth_test.cc
    wopts.listen_address = "127.0.0.1:0";
    wopts.data_dir = dir_ + "/worker";
    wopts.supervisor_address = supervisor_->address();
    wopts.worker_id = "worker-0";
    wopts.deep_storage_uri = "file://" + dir_ + "/deep";
    auto w = task::WorkerServer::Start(wopts);
    ASSERT_TRUE(w.ok()) << w.status();
    worker_ = std::move(*w);
  }

  void TearDown() override {
    worker_.reset();
    supervisor_.reset();
    ASSERT_TRUE(RemoveAll(dir_).ok());
  }

  static std::shared_ptr<grpc::Channel> Dial(const std::string& address) {
    return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  }

  std::string dir_;
  std::unique_ptr<supervisor::SupervisorServer> supervisor_;
  std::unique_ptr<task::WorkerServer> worker_;
};

TEST_F(ClusterSmokeTest, BothServersBindDistinctPortsAndReportServing) {
  EXPECT_NE(supervisor_->address(), worker_->address());
  EXPECT_NE(supervisor_->address(), "127.0.0.1:0");
  for (const std::string& address : {supervisor_->address(), worker_->address()}) {
    auto health = testing::CheckHealth(Dial(address));
    ASSERT_TRUE(health.ok()) << address << ": " << health.status();
    EXPECT_EQ(*health, "SERVING") << address;
  }
}

TEST_F(ClusterSmokeTest, ReflectionListsEveryMethodOfBothServices) {
  const std::set<std::string> supervisor_methods = {
      "CheckpointDataSourceMetadata", "PublishSegments", "GetPublishedSegments",
      "AllocateSegment", "GetHandoffStatus", "ReportOffsetOutOfRange", "RegisterWorker",
      "WorkerHeartbeat", "ReportTaskStatus", "MarkSegmentsLoaded", "SubmitSupervisor",
      "GetSupervisor", "ListSupervisors", "GetSupervisorHistory", "GetSupervisorStatus",
      "SuspendSupervisor", "ResumeSupervisor", "ResetSupervisor", "ResetOffsets",
      "HandoffTaskGroups", "CompactDataSource", "TerminateSupervisor", "ListSegments",
      "ListTasks", "ListWorkers", "GetCommitLog"};
  const std::set<std::string> task_methods = {
      "RunTask", "StopTask", "ListTasks", "Pause", "Resume", "SetEndOffsets",
      "GetCurrentOffsets", "GetEndOffsets", "GetCheckpoints", "GetTaskStatus"};

  auto services = testing::ReflectServices(Dial(supervisor_->address()));
  ASSERT_TRUE(services.ok()) << services.status();
  ASSERT_TRUE(services->count("sluice.v1.SupervisorService"));
  EXPECT_EQ(services->at("sluice.v1.SupervisorService"), supervisor_methods);
  EXPECT_TRUE(services->count("grpc.health.v1.Health"));
  EXPECT_TRUE(services->count("grpc.reflection.v1alpha.ServerReflection"));

  services = testing::ReflectServices(Dial(worker_->address()));
  ASSERT_TRUE(services.ok()) << services.status();
  ASSERT_TRUE(services->count("sluice.v1.TaskService"));
  EXPECT_EQ(services->at("sluice.v1.TaskService"), task_methods);
}

TEST_F(ClusterSmokeTest, ShutdownMakesHealthUnreachable) {
  const std::string address = worker_->address();
  worker_->Shutdown(absl::Seconds(1));
  auto health = testing::CheckHealth(Dial(address));
  EXPECT_FALSE(health.ok() && *health == "SERVING");
}

}  // namespace
}  // namespace sluice
