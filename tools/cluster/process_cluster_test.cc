#include "tools/cluster/process_cluster.h"

#include <signal.h>
#include <sys/stat.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
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
using ::testing::Not;
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

// Stand-ins for the binaries: each start appends its name (argv[0]) and flags
// as one line to $ARGS_FILE, then sleeps.
std::string FakeBinary(const std::string& dir) {
  const std::string path = dir + "/fake-binary";
  std::ofstream out(path);
  out << "#!/bin/sh\necho \"$0 $*\" >> \"$ARGS_FILE\"\nexec sleep 600\n";
  out.close();
  chmod(path.c_str(), 0755);
  return path;
}

std::vector<std::string> ArgLines(const std::string& path, size_t want) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  std::vector<std::string> lines;
  while (absl::Now() < deadline) {
    lines.clear();
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    if (lines.size() >= want) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return lines;
}

// Several supervisors: their own ports and data dirs, the leader-election
// flags (and none of them with one supervisor), every worker told every
// address, extra flags for all and for one, the environment for every child.
TEST(ProcessClusterTest, SeveralSupervisorsGetTheirOwnAddressesAndElectionFlags) {
  for (int supervisors : {1, 2}) {
    auto root = testing::MakeTempDir("cluster");
    ASSERT_TRUE(root.ok()) << root.status();
    const std::string fake = FakeBinary(*root);
    ProcessClusterOptions options;
    options.root_dir = *root;
    options.supervisors = supervisors;
    options.workers = 1;
    options.external_bootstrap_servers = "127.0.0.1:1";
    options.supervisor_binary = fake;
    options.task_binary = fake;
    options.deep_storage_uri = "s3://bucket/prefix";
    options.env = {{"ARGS_FILE", *root + "/args"}};
    options.extra_flags = {{"supervisor", {"--metadata_store=postgresql://x"}},
                           {"supervisor-1", {"--only_one"}}};
    auto cluster = ProcessCluster::Create(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    ASSERT_TRUE((*cluster)->Start().ok());
    const std::vector<std::string> lines = ArgLines(*root + "/args", supervisors + 1);
    ASSERT_EQ(lines.size(), static_cast<size_t>(supervisors + 1)) << absl::StrJoin(lines, "\n");
    const std::vector<std::string>& addresses = (*cluster)->supervisor_addresses();
    ASSERT_EQ(addresses.size(), static_cast<size_t>(supervisors));
    EXPECT_EQ((*cluster)->supervisor_address(), addresses[0]);
    std::vector<std::string> expected_names = {"broker", "supervisor"};
    if (supervisors == 2) expected_names.push_back("supervisor-1");
    expected_names.push_back("worker-0");
    EXPECT_EQ((*cluster)->names(), expected_names);
    EXPECT_EQ((*cluster)->supervisors(), supervisors);
    int supervisor_lines = 0;
    for (const std::string& line : lines) {
      EXPECT_THAT(line, HasSubstr("--deep_storage=s3://bucket/prefix"));
      if (absl::StrContains(line, "--worker_id=worker-0")) {
        EXPECT_THAT(line, HasSubstr("--supervisor=" + absl::StrJoin(addresses, ",") + " "));
        continue;
      }
      ++supervisor_lines;
      EXPECT_THAT(line, HasSubstr("--metadata_store=postgresql://x"));
      const int index = absl::StrContains(line, "--listen=" + addresses[0] + " ") ? 0 : 1;
      ASSERT_LT(index, supervisors) << line;
      EXPECT_THAT(line, HasSubstr("--data_dir=" + (*cluster)->data_dir(SupervisorName(index))));
      if (supervisors == 1) {
        EXPECT_THAT(line, Not(HasSubstr("--leader_election")));
        EXPECT_THAT(line, Not(HasSubstr("--advertise_address")));
        EXPECT_THAT(line, Not(HasSubstr("--supervisor_id")));
      } else {
        EXPECT_THAT(line, AllOf(HasSubstr("--leader_election"),
                                HasSubstr("--advertise_address=" + addresses[index]),
                                HasSubstr("--supervisor_id=" + SupervisorName(index))));
      }
      EXPECT_EQ(absl::StrContains(line, "--only_one"), index == 1) << line;
    }
    EXPECT_EQ(supervisor_lines, supervisors);
    EXPECT_EQ(SupervisorName(0), "supervisor");
    EXPECT_EQ(SupervisorName(1), "supervisor-1");
    if (supervisors == 2) {
      EXPECT_NE((*cluster)->data_dir("supervisor-1"), (*cluster)->data_dir("supervisor"));
      EXPECT_NE(addresses[0], addresses[1]);
      // The fakes serve no health: nobody leads.
      EXPECT_EQ((*cluster)->LeaderSupervisor(absl::Milliseconds(200)).status().code(),
                absl::StatusCode::kDeadlineExceeded);
    }
    // A process that ends by itself: WaitForExit says how, and it is no
    // unexpected death afterwards.
    ASSERT_EQ(kill((*cluster)->pid("worker-0"), SIGTERM), 0);
    auto exit = (*cluster)->WaitForExit("worker-0", absl::Seconds(10));
    ASSERT_TRUE(exit.ok()) << exit.status();
    EXPECT_EQ(exit->signal, SIGTERM);
    EXPECT_TRUE((*cluster)->CheckAlive().ok());
    EXPECT_EQ((*cluster)->WaitForExit("supervisor", absl::Milliseconds(100)).status().code(),
              absl::StatusCode::kDeadlineExceeded);
  }
}

TEST(ProcessClusterTest, RejectsBadOptions) {
  ProcessClusterOptions options;
  options.root_dir = "relative/dir";
  EXPECT_EQ(ProcessCluster::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.root_dir = "/tmp/x";
  options.brokers = 0;
  EXPECT_EQ(ProcessCluster::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.brokers = 1;
  options.supervisors = 0;
  EXPECT_EQ(ProcessCluster::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cluster
}  // namespace sluice
