// The cluster with two supervisors over one PostgreSQL metadata store: one
// leads, the other is a standby; WaitHealthy needs exactly one leader and the
// workers registered with it; SupervisorStub() follows the leader across a
// clean stop (which gives the lease up); the stopped one comes back as a
// standby.
#include <signal.h>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/process_cluster.h"

namespace sluice {
namespace cluster {
namespace {

using ::testing::HasSubstr;

grpc::Status ListWorkers(v1::SupervisorService::Stub& stub, v1::ListWorkersResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  return stub.ListWorkers(&context, v1::ListWorkersRequest(), response);
}

TEST(ProcessClusterHaTest, OneLeaderAStandbyAndTheStubFollowsTheLeader) {
  auto postgres = testing::PostgresServer::Start();
  ASSERT_TRUE(postgres.ok()) << postgres.status();
  auto url = (*postgres)->CreateDatabase("cluster_ha");
  ASSERT_TRUE(url.ok()) << url.status();
  auto root = testing::MakeTempDir("cluster-ha");
  ASSERT_TRUE(root.ok()) << root.status();
  ProcessClusterOptions options;
  options.root_dir = *root;
  options.supervisors = 2;
  options.workers = 1;
  options.topics = {"wiki:2"};
  options.heartbeat_interval_ms = 300;
  options.min_worker_lost_timeout_ms = 1500;
  options.extra_flags = {{"supervisor", {"--metadata_store=" + *url}}};
  auto created = ProcessCluster::Create(options);
  ASSERT_TRUE(created.ok()) << created.status();
  ProcessCluster& cluster = **created;
  ASSERT_TRUE(cluster.Start().ok());
  absl::Status healthy = cluster.WaitHealthy(absl::Seconds(60));
  ASSERT_TRUE(healthy.ok()) << healthy;

  absl::StatusOr<std::string> leader = cluster.LeaderSupervisor(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();
  const std::string standby =
      *leader == SupervisorName(0) ? SupervisorName(1) : SupervisorName(0);
  EXPECT_TRUE(cluster.Leads(*leader));
  EXPECT_FALSE(cluster.Leads(standby));
  v1::ListWorkersResponse workers;
  grpc::Status status = ListWorkers(*cluster.SupervisorStub(), &workers);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(workers.workers_size(), 1);
  EXPECT_EQ(workers.workers(0).worker_id(), "worker-0");
  status = ListWorkers(*cluster.SupervisorStub(standby), &workers);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("standby"));

  // A clean stop gives the lease up: the standby leads, the worker registers
  // with it, and the cluster's stub follows.
  ASSERT_TRUE(cluster.Kill(*leader, SIGTERM).ok());
  absl::StatusOr<std::string> next = cluster.LeaderSupervisor(absl::Seconds(20));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, standby);
  healthy = cluster.WaitHealthy(absl::Seconds(30));
  ASSERT_TRUE(healthy.ok()) << healthy;
  status = ListWorkers(*cluster.SupervisorStub(), &workers);
  EXPECT_TRUE(status.ok()) << status.error_message();

  // Back on its port and data dir, as a standby.
  ASSERT_TRUE(cluster.Restart(*leader).ok());
  healthy = cluster.WaitHealthy(absl::Seconds(30));
  ASSERT_TRUE(healthy.ok()) << healthy;
  next = cluster.LeaderSupervisor(absl::Seconds(10));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, standby);
  EXPECT_FALSE(cluster.Leads(*leader));

  absl::Status stopped = cluster.StopAll();
  EXPECT_TRUE(stopped.ok()) << stopped;
}

}  // namespace
}  // namespace cluster
}  // namespace sluice
