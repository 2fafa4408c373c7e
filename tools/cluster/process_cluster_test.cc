#include "tools/cluster/process_cluster.h"

#include <signal.h>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/kafka/metadata_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace sluice {
namespace cluster {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<ProcessCluster> MakeCluster(
    int workers, std::map<std::string, std::vector<std::string>> extra = {}) {
  auto root = testing::MakeTempDir("cluster");
  EXPECT_TRUE(root.ok()) << root.status();
  ProcessClusterOptions options;
  options.root_dir = *root;
  options.workers = workers;
  options.topics = {"wiki:2"};
  options.heartbeat_interval_ms = 300;
  options.min_worker_lost_timeout_ms = 1500;
  options.extra_flags = std::move(extra);
  auto cluster = ProcessCluster::Create(options);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *std::move(cluster) : nullptr;
}

v1::ListWorkersResponse Workers(ProcessCluster& cluster) {
  auto stub = cluster.SupervisorStub();
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::ListWorkersResponse response;
  grpc::Status status = stub->ListWorkers(&context, v1::ListWorkersRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

const v1::WorkerInfo* FindWorker(const v1::ListWorkersResponse& workers, const std::string& id) {
  for (const v1::WorkerInfo& w : workers.workers()) {
    if (w.worker_id() == id) return &w;
  }
  return nullptr;
}

TEST(ProcessClusterTest, KilledWorkerRestartsOnItsPortAndRegistersAgain) {
  auto cluster = MakeCluster(2);
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->Start().ok());
  absl::Status healthy = cluster->WaitHealthy(absl::Seconds(60));
  ASSERT_TRUE(healthy.ok()) << healthy;
  EXPECT_THAT(cluster->names(), ElementsAre("broker", "supervisor", "worker-0", "worker-1"));

  // The broker serves the topic it was asked for, over the real protocol.
  auto metadata =
      kafka::MetadataClient::Create({{"bootstrap.servers", cluster->bootstrap_servers()}});
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  auto partitions = (*metadata)->ListPartitions("wiki", absl::Seconds(10));
  ASSERT_TRUE(partitions.ok()) << partitions.status();
  EXPECT_THAT(*partitions, ElementsAre(0, 1));
  auto reply = cluster->BrokerCommand("status");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(*reply, StartsWith("ok"));
  EXPECT_EQ(cluster->BrokerCommand("no such command").status().code(),
            absl::StatusCode::kFailedPrecondition);

  v1::ListWorkersResponse before = Workers(*cluster);
  ASSERT_EQ(before.workers_size(), 2);
  const v1::WorkerInfo* old = FindWorker(before, "worker-1");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->address(), cluster->worker_address(1));
  const int64_t old_start = old->start_time_ms();
  const pid_t old_pid = cluster->pid("worker-1");

  // kill -9: stopped on purpose, so not an unexpected death.
  ASSERT_TRUE(cluster->Kill("worker-1", SIGKILL).ok());
  EXPECT_FALSE(cluster->Running("worker-1"));
  EXPECT_TRUE(cluster->CheckAlive().ok());
  EXPECT_EQ(cluster->Kill("worker-1", SIGKILL).code(), absl::StatusCode::kFailedPrecondition);
  // The supervisor notices the silence.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (FindWorker(Workers(*cluster), "worker-1")->alive() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_FALSE(FindWorker(Workers(*cluster), "worker-1")->alive());

  // Restarted on the same port and data dir, it registers again.
  ASSERT_TRUE(cluster->Restart("worker-1").ok());
  EXPECT_NE(cluster->pid("worker-1"), old_pid);
  healthy = cluster->WaitHealthy(absl::Seconds(30));
  ASSERT_TRUE(healthy.ok()) << healthy;
  const v1::ListWorkersResponse after = Workers(*cluster);
  const v1::WorkerInfo* again = FindWorker(after, "worker-1");
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->alive());
  EXPECT_GT(again->start_time_ms(), old_start);
  EXPECT_EQ(again->address(), cluster->worker_address(1));
  EXPECT_THAT(cluster->log_path("worker-1"), EndsWith("/logs/worker-1.restart-1.log"));
  EXPECT_THAT(cluster->log_path("worker-0"), EndsWith("/logs/worker-0.log"));

  // Every process ends with exit code 0 on SIGTERM.
  absl::Status stopped = cluster->StopAll();
  EXPECT_TRUE(stopped.ok()) << stopped;
  EXPECT_FALSE(cluster->Running("broker"));
  EXPECT_FALSE(cluster->Running("supervisor"));
}

TEST(ProcessClusterTest, ADeathBehindItsBackIsReported) {
  auto cluster = MakeCluster(1);
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->Start().ok());
  absl::Status healthy = cluster->WaitHealthy(absl::Seconds(60));
  ASSERT_TRUE(healthy.ok()) << healthy;
  ASSERT_EQ(kill(cluster->pid("worker-0"), SIGKILL), 0);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (cluster->Running("worker-0") && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  absl::Status alive = cluster->CheckAlive();
  EXPECT_EQ(alive.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(alive.message(), AllOf(HasSubstr("worker-0"), HasSubstr("signal 9")));
  EXPECT_EQ(cluster->WaitHealthy(absl::Seconds(5)).code(), absl::StatusCode::kAborted);
  absl::Status stopped = cluster->StopAll();
  EXPECT_THAT(stopped.message(), HasSubstr("worker-0 had already ended: killed by signal 9"));
}

TEST(ProcessClusterTest, AProcessThatCannotStartFailsWaitHealthyWithItsLog) {
  auto cluster = MakeCluster(0, {{"supervisor", {"--fault_points=no-such-point-syntax"}}});
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->Start().ok());
  absl::Status healthy = cluster->WaitHealthy(absl::Seconds(30));
  EXPECT_EQ(healthy.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(healthy.message(), AllOf(HasSubstr("supervisor"), HasSubstr("exit code 2"),
                                       HasSubstr("--fault_points")));
}

TEST(ProcessClusterTest, RejectsBadOptions) {
  ProcessClusterOptions options;
  options.root_dir = "relative/dir";
  EXPECT_EQ(ProcessCluster::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.root_dir = "/tmp/x";
  options.brokers = 0;
  EXPECT_EQ(ProcessCluster::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cluster
}  // namespace sluice
