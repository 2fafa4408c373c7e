// The supervisor's resources do not grow per datasource (issue 12, point 3):
// 500 datasources on one Kafka cluster (the supervisor and a task worker in
// this process, a mock Kafka) and the process's thread and file descriptor
// counts stay within a constant bound. Before, each datasource had a loop
// thread, a Kafka query thread and its own librdkafka handle (several
// threads and sockets each): about 5 threads and 5 fds per datasource.
//
// SLUICE_SCALE_DATASOURCES sets the number of datasources (default 500).
#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/in_process_cluster.h"
#include "tests/wiki_cluster_test.h"
#include "tests/wiki_count_spec.h"
#include "tests/task_mock_kafka.h"
#include "tests/task_test_util.h"

namespace sluice {
namespace {

// Entries of a /proc directory (threads: /proc/self/task, fds: /proc/self/fd).
int CountEntries(const char* path) {
  DIR* dir = opendir(path);
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - (std::string(path) == "/proc/self/fd" ? 1 : 0);  // opendir's own fd
}

class ClusterScaleTest : public testing::WikiClusterTest {
 protected:
  void SetUp() override { StartWikiCluster(/*partitions=*/4); }

  absl::Status Submit(const std::string& datasource, int task_count) {
    // Every datasource runs and queries Kafka every 2 s: 250 runs and
    // queries a second at 500 datasources.
    return testing::SubmitSpec(
        stub_.get(), testing::WikiCountSpec({.datasource = datasource,
                                             .bootstrap_servers = kafka_->bootstrap(),
                                             .task_count = task_count,
                                             .period = "PT2S"}));
  }

  // Supervisors that have run at least once (no longer PENDING), and that
  // have Kafka's watermarks (so their metadata client connected).
  int Running() {
    v1::ListSupervisorsRequest request;
    v1::ListSupervisorsResponse response;
    grpc::ClientContext ctx;
    if (!stub_->ListSupervisors(&ctx, request, &response).ok()) return -1;
    int running = 0;
    for (const v1::SupervisorSummary& s : response.supervisors()) {
      running += s.state() == v1::SUPERVISOR_STATE_RUNNING ? 1 : 0;
    }
    return running;
  }


  struct Sample {
    int datasources;
    int threads;
    int fds;
  };

  // Submits datasources up to `n`, waits until all run, then lets a few
  // periods pass (background queries, runs) and counts.
  Sample GrowTo(int n) {
    for (; submitted_ < n; ++submitted_) {
      // The first datasource takes the worker's 4 slots (4 groups): the
      // worker's tasks (a Kafka consumer each) are the same from 1 to 500
      // datasources, the others wait for workers (and run, and query Kafka).
      EXPECT_TRUE(Submit(absl::StrCat("ds", submitted_), submitted_ == 0 ? 4 : 1).ok());
    }
    EXPECT_TRUE(testing::WaitFor([&] { return Running() == n; }, absl::Minutes(3)))
        << Running() << " of " << n << " supervisors running";
    if (n == 1) {
      EXPECT_TRUE(testing::WaitFor([&] { return PlacedTasks("ds0") == 4; }, absl::Minutes(1)));
    }
    absl::SleepFor(absl::Seconds(5));
    Sample s{n, CountEntries("/proc/self/task"), CountEntries("/proc/self/fd")};
    std::printf("[scale] %d datasources: %d threads, %d fds\n", s.datasources, s.threads, s.fds);
    std::fflush(stdout);
    return s;
  }

  int submitted_ = 0;
};

TEST_F(ClusterScaleTest, ThreadsAndFdsStayFlatFromOneTo500Datasources) {
  const char* env = std::getenv("SLUICE_SCALE_DATASOURCES");
  const int most = env == nullptr ? 500 : std::atoi(env);
  std::printf("[scale] before any datasource: %d threads, %d fds\n",
              CountEntries("/proc/self/task"), CountEntries("/proc/self/fd"));
  const Sample one = GrowTo(1);
  const Sample hundred = GrowTo(std::min(100, most));
  const Sample all = GrowTo(most);
  // Constant bounds, never per datasource (slack for gRPC's own pools).
  EXPECT_LT(all.threads, 100) << "threads at " << most << " datasources";
  EXPECT_LE(all.threads - one.threads, 10)
      << "threads grew from " << one.threads << " (1 datasource) to " << all.threads;
  EXPECT_LE(all.fds - one.fds, 20) << "fds grew from " << one.fds << " (1 datasource) to "
                                   << all.fds;
  EXPECT_LE(all.threads - hundred.threads, 5);
}

}  // namespace
}  // namespace sluice
