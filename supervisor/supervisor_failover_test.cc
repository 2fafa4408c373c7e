// Two supervisor servers (real gRPC on loopback) over one metadata store
// (SQLite file; the _postgresql_test twin: one PostgreSQL database) with
// leader election: the standby is alive but not ready and answers calls
// UNAVAILABLE naming the leader (message and trailing metadata), a worker's
// client given both addresses follows the leader, and when the leader stops
// the standby takes over and serves.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <iostream>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/metrics/catalog.h"
#include "common/metrics/registry.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "supervisor/supervisor_server.h"
#include "supervisor/testing/test_store.h"
#include "task/grpc_supervisor_client.h"

namespace sluice::supervisor {
namespace {

using testing::TestBackend;

class SupervisorFailoverTest : public ::testing::TestWithParam<TestBackend> {
 protected:
  void SetUp() override {
    std::string base = getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
    std::string tmpl = base + "/failover_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    absl::StatusOr<MetadataStoreOptions> store = testing::TestStoreOptions(GetParam(), dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_url_ = store->postgres_url.empty() ? "sqlite://" + store->path : store->postgres_url;
  }
  void TearDown() override { RemoveAll(dir_).IgnoreError(); }

  std::unique_ptr<SupervisorServer> StartSupervisor(const std::string& id,
                                                    metrics::Registry* registry) {
    SupervisorServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.data_dir = dir_ + "/" + id;
    options.metadata_store_url = store_url_;
    options.deep_storage_uri = "file://" + dir_ + "/deep";
    options.auth.insecure_no_auth = true;
    options.metrics = registry;
    options.leader_election = true;
    options.leader_lease = absl::Seconds(1);
    options.supervisor_id = id;
    options.on_leadership_lost = [this](const std::string&) { lost_++; };
    absl::StatusOr<std::unique_ptr<SupervisorServer>> server =
        SupervisorServer::Start(std::move(options));
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? std::move(*server) : nullptr;
  }

  static grpc::health::v1::HealthCheckResponse::ServingStatus Health(const std::string& address,
                                                                     const std::string& service) {
    auto stub = grpc::health::v1::Health::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = stub->Check(&context, request, &response);
    if (!status.ok()) return grpc::health::v1::HealthCheckResponse::UNKNOWN;
    return response.status();
  }

  static bool Ready(const std::string& address) {
    return Health(address, "sluice.v1.SupervisorService") ==
           grpc::health::v1::HealthCheckResponse::SERVING;
  }

  static bool WaitReady(const std::string& address, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (Ready(address)) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }

  static grpc::Status ListSupervisors(const std::string& address, std::string* leader_metadata) {
    auto stub = v1::SupervisorService::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    v1::ListSupervisorsRequest request;
    v1::ListSupervisorsResponse response;
    grpc::Status status = stub->ListSupervisors(&context, request, &response);
    if (leader_metadata != nullptr) {
      auto it = context.GetServerTrailingMetadata().find("sluice-leader-address");
      if (it != context.GetServerTrailingMetadata().end()) {
        leader_metadata->assign(it->second.data(), it->second.size());
      }
    }
    return status;
  }

  std::string dir_;
  std::string store_url_;
  std::atomic<int> lost_{0};
};

TEST_P(SupervisorFailoverTest, StandbyNamesTheLeaderAndTakesOverWhenItStops) {
  metrics::Registry registry_a, registry_b;
  std::unique_ptr<SupervisorServer> a = StartSupervisor("sup-a", &registry_a);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitReady(a->address(), absl::Seconds(20)));
  std::unique_ptr<SupervisorServer> b = StartSupervisor("sup-b", &registry_b);
  ASSERT_NE(b, nullptr);
  const std::string a_address = a->address();
  const std::string b_address = b->address();

  // b: alive, not ready, refuses with the leader's name and address.
  absl::SleepFor(absl::Milliseconds(700));  // b's first rounds (nothing asserted on timing)
  EXPECT_EQ(Health(b_address, ""), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_FALSE(Ready(b_address));
  EXPECT_EQ(b->manager(), nullptr);
  std::string leader;
  grpc::Status refused = ListSupervisors(b_address, &leader);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "standby")) << refused.error_message();
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "sup-a at " + a_address))
      << refused.error_message();
  EXPECT_EQ(leader, a_address);
  EXPECT_TRUE(ListSupervisors(a_address, nullptr).ok());
  EXPECT_EQ(registry_a.GetGauge(metrics::kSupervisorLeader)->Value(), 1);
  EXPECT_EQ(registry_b.GetGauge(metrics::kSupervisorLeader)->Value(), 0);

  // A worker's client that knows both, standby first, reaches the leader.
  task::GrpcSupervisorClientOptions client_options;
  client_options.address = b_address + "," + a_address;
  client_options.call_timeout = absl::Seconds(5);
  std::unique_ptr<task::SupervisorClient> client = task::NewGrpcSupervisorClient(client_options);
  v1::ListSegmentsRequest segments;
  segments.set_datasource("wiki");
  // The leader's own answer (no such datasource), not the standby's UNAVAILABLE.
  absl::StatusOr<v1::ListSegmentsResponse> listed = client->ListSegments(segments);
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kNotFound) << listed.status();

  // The leader stops (giving the lease up): b leads and serves.
  const absl::Time stopped = absl::Now();
  a->Shutdown(absl::Seconds(1));
  ASSERT_TRUE(WaitReady(b_address, absl::Seconds(20)));
  const absl::Duration takeover = absl::Now() - stopped;
  std::cout << "standby ready " << absl::FormatDuration(takeover) << " after the leader stopped\n";
  EXPECT_NE(b->manager(), nullptr);
  EXPECT_TRUE(ListSupervisors(b_address, nullptr).ok());
  EXPECT_EQ(registry_b.GetGauge(metrics::kSupervisorLeader)->Value(), 1);
  ASSERT_NE(b->elector(), nullptr);
  EXPECT_EQ(b->elector()->leadership().epoch, 2);
  // The client follows (a is gone, b leads).
  listed = client->ListSegments(segments);
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kNotFound) << listed.status();
  EXPECT_EQ(lost_, 0);
  b->Shutdown(absl::Seconds(1));
}

// Without --leader_election nothing changes: ready at once, service health
// SERVING too, the leader gauge at 1.
TEST_P(SupervisorFailoverTest, WithoutElectionTheSupervisorLeadsFromTheStart) {
  metrics::Registry registry;
  SupervisorServerOptions options;
  options.data_dir = dir_ + "/single";
  options.metadata_store_url = store_url_;
  options.auth.insecure_no_auth = true;
  options.metrics = &registry;
  absl::StatusOr<std::unique_ptr<SupervisorServer>> server = SupervisorServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(Ready((*server)->address()));
  EXPECT_EQ(Health((*server)->address(), ""), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ((*server)->elector(), nullptr);
  EXPECT_EQ(registry.GetGauge(metrics::kSupervisorLeader)->Value(), 1);
}

// A supervisor started without --leader_election over a store an elected
// supervisor leads would act as a second leader, unfenced: refused at start
// (FAILED_PRECONDITION naming the holder, its lease and the flag), and the
// leader serves on. Once the lease is given up, it starts.
TEST_P(SupervisorFailoverTest, WithoutElectionAStoreWithALiveLeaseIsRefused) {
  metrics::Registry registry_a;
  std::unique_ptr<SupervisorServer> a = StartSupervisor("sup-a", &registry_a);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitReady(a->address(), absl::Seconds(20)));

  metrics::Registry registry;
  SupervisorServerOptions options;
  options.data_dir = dir_ + "/single";
  options.metadata_store_url = store_url_;
  options.auth.insecure_no_auth = true;
  options.metrics = &registry;
  absl::StatusOr<std::unique_ptr<SupervisorServer>> second = SupervisorServer::Start(options);
  ASSERT_FALSE(second.ok()) << "a second supervisor leads beside sup-a";
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "sup-a")) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "expires")) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "--leader_election"))
      << second.status();
  EXPECT_TRUE(Ready(a->address()));
  EXPECT_EQ(lost_, 0);

  a->Shutdown(absl::Seconds(1));  // resigns: the lease expires now
  a.reset();
  absl::StatusOr<std::unique_ptr<SupervisorServer>> after = SupervisorServer::Start(options);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(Ready((*after)->address()));
}

// A lease under a second would make renewals (every third of it) race the
// store's own latency: refused at start, naming the flag.
TEST_P(SupervisorFailoverTest, ALeaseUnderASecondIsRefused) {
  SupervisorServerOptions options;
  options.data_dir = dir_ + "/short";
  options.metadata_store_url = store_url_;
  options.auth.insecure_no_auth = true;
  options.leader_election = true;
  options.leader_lease = absl::Milliseconds(500);
  absl::StatusOr<std::unique_ptr<SupervisorServer>> server = SupervisorServer::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(server.status().message(), "--leader_lease_ms")) << server.status();
}

INSTANTIATE_TEST_SUITE_P(Backends, SupervisorFailoverTest,
                         ::testing::ValuesIn(testing::TestBackends()),
                         [](const ::testing::TestParamInfo<TestBackend>& info) {
                           return testing::BackendName(info.param);
                         });

}  // namespace
}  // namespace sluice::supervisor
