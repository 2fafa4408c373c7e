// The status says what is wrong with the stream (issue 12, point 9), with a
// real Kafka client: a datasource whose bootstrap.servers nobody listens on
// is UNABLE_TO_CONNECT_TO_STREAM and unhealthy within one period of its
// submission (it was PENDING and healthy for about 30 s), while one on the
// dev broker (reachable) next to it runs and is healthy.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdio>
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

class ClusterStreamStatusTest : public testing::WikiClusterTest {
 protected:
  void SetUp() override { StartWikiCluster(/*partitions=*/2); }

  absl::Status Submit(const std::string& datasource, const std::string& bootstrap,
                      const std::string& period) {
    return testing::SubmitSpec(stub_.get(),
                               testing::WikiCountSpec({.datasource = datasource,
                                                       .bootstrap_servers = bootstrap,
                                                       .period = period}));
  }

  v1::SupervisorStatus Status(const std::string& datasource) {
    v1::GetSupervisorStatusRequest ref;
    ref.set_datasource(datasource);
    v1::GetSupervisorStatusResponse response;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->GetSupervisorStatus(&ctx, ref, &response).ok());
    return response.status();
  }

};

TEST_F(ClusterStreamStatusTest, AnUnreachableKafkaIsUnableToConnectWithinOnePeriod) {
  ASSERT_TRUE(Submit("up", kafka_->bootstrap(), "PT1S").ok());
  // Port 1 on loopback: nobody listens, every connection is refused.
  const absl::Duration period = absl::Seconds(3);
  const absl::Time submitted = absl::Now();
  ASSERT_TRUE(Submit("down", "127.0.0.1:1", "PT3S").ok());
  absl::Time seen = absl::InfiniteFuture();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        const v1::SupervisorStatus status = Status("down");
        if (status.state() != v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM) {
          EXPECT_TRUE(status.healthy() || status.state() == v1::SUPERVISOR_STATE_PENDING) << status.DebugString();
          return false;
        }
        seen = absl::Now();
        return true;
      },
      absl::Seconds(30)))
      << Status("down").DebugString();
  const absl::Duration took = seen - submitted;
  std::printf("[stream status] unreachable bootstrap.servers: UNABLE_TO_CONNECT_TO_STREAM after %s "
              "(period %s)\n",
              absl::FormatDuration(took).c_str(), absl::FormatDuration(period).c_str());
  // One period (the query's deadline) plus the start delay and polling.
  EXPECT_LT(took, period + absl::Seconds(1));
  const v1::SupervisorStatus down = Status("down");
  EXPECT_FALSE(down.healthy());
  EXPECT_EQ(down.detailed_state(), "UNABLE_TO_CONNECT_TO_STREAM");

  // The reachable one beside it: running, healthy, never that state.
  ASSERT_TRUE(testing::WaitFor([&] { return Status("up").state() == v1::SUPERVISOR_STATE_RUNNING; },
                               absl::Seconds(30)))
      << Status("up").DebugString();
  const v1::SupervisorStatus up = Status("up");
  EXPECT_TRUE(up.healthy()) << up.DebugString();
  EXPECT_EQ(up.latest_offsets_size(), 2);
}

}  // namespace
}  // namespace sluice
