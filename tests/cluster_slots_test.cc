// Slots through the whole stack (the supervisor and a real task worker in
// this process, a mock Kafka): datasources submitted and terminated over and
// over leave no slot behind, so a new datasource then gets all its tasks
// within seconds. Before, each terminated datasource's task kept its slot
// for good once it ended (nobody released it), and after 4 cycles the
// worker's 4 slots were gone.
//
// SLUICE_SLOT_CYCLES sets the number of cycles (default 24, six times the
// worker's slots; the scenario is 200).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

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

class ClusterSlotsTest : public testing::WikiClusterTest {
 protected:
  void SetUp() override {
    testing::InProcessClusterOptions options;
    options.worker_knobs.handoff_poll_interval = absl::Milliseconds(50);
    options.handoff_period = absl::Milliseconds(100);
    StartWikiCluster(/*partitions=*/2, options);
  }

  absl::Status Submit(const std::string& datasource, int task_count, int replicas) {
    return testing::SubmitSpec(
        stub_.get(), testing::WikiCountSpec({.datasource = datasource,
                                             .bootstrap_servers = kafka_->bootstrap(),
                                             .task_count = task_count,
                                             .replicas = replicas}));
  }


  absl::Status Terminate(const std::string& datasource) {
    v1::TerminateSupervisorRequest ref;
    ref.set_datasource(datasource);
    v1::TerminateSupervisorResponse summary;
    grpc::ClientContext ctx;
    const grpc::Status status = stub_->TerminateSupervisor(&ctx, ref, &summary);
    return status.ok() ? absl::OkStatus() : absl::InternalError(status.error_message());
  }

};

TEST_F(ClusterSlotsTest, SubmitTerminateCyclesLeaveNoSlotBehind) {
  const char* env = std::getenv("SLUICE_SLOT_CYCLES");
  const int cycles = env == nullptr ? 24 : std::atoi(env);
  const absl::Time start = absl::Now();
  for (int cycle = 0; cycle < cycles; ++cycle) {
    const std::string ds = absl::StrCat("cycle", cycle);
    ASSERT_TRUE(Submit(ds, 1, 1).ok());
    ASSERT_TRUE(testing::WaitFor([&] { return PlacedTasks(ds) == 1; }, absl::Seconds(30)))
        << "cycle " << cycle << ": the task of " << ds << " was never placed";
    ASSERT_TRUE(Terminate(ds).ok());
  }
  std::printf("[slots] %d submit/terminate cycles in %s\n", cycles,
              absl::FormatDuration(absl::Now() - start).c_str());
  // 2 groups x 2 replicas: every slot of the worker.
  const absl::Time fresh = absl::Now();
  ASSERT_TRUE(Submit("fresh", 2, 2).ok());
  EXPECT_TRUE(testing::WaitFor([&] { return PlacedTasks("fresh") == 4; }, absl::Seconds(10)))
      << PlacedTasks("fresh") << " of 4 tasks placed";
  std::printf("[slots] the new datasource had its 4 tasks after %s\n",
              absl::FormatDuration(absl::Now() - fresh).c_str());
  v1::ListWorkersRequest request;
  v1::ListWorkersResponse workers;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->ListWorkers(&ctx, request, &workers).ok());
  ASSERT_EQ(workers.workers_size(), 1);
  EXPECT_EQ(workers.workers(0).running_tasks(), 4) << workers.DebugString();
}

}  // namespace
}  // namespace sluice
