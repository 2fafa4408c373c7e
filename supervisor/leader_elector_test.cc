// Leader election and fencing over a real metadata store (SQLite: two
// connections to one file; the _postgresql_test twin: one PostgreSQL
// database): one leader at a time, renewal, takeover after expiry with a new
// epoch, resignation, and a deposed leader whose transactions write nothing.
#include "supervisor/leader_elector.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "supervisor/testing/test_store.h"

namespace sluice::supervisor {
namespace {

using testing::TestBackend;

class LeaderElectorTest : public ::testing::TestWithParam<TestBackend> {
 protected:
  void SetUp() override {
    std::string base = getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
    std::string tmpl = base + "/elector_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { RemoveAll(dir_).IgnoreError(); }

  // A new connection to the one store of the test.
  std::unique_ptr<MetadataStore> OpenStore() {
    absl::StatusOr<MetadataStoreOptions> options = testing::TestStoreOptions(GetParam(), dir_);
    EXPECT_TRUE(options.ok()) << options.status();
    if (!options.ok()) return nullptr;
    absl::StatusOr<std::unique_ptr<MetadataStore>> store = MetadataStore::Open(*options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  struct Events {
    std::atomic<int> elected{0};
    std::atomic<int64_t> epoch{0};
    std::atomic<int> lost{0};
  };

  LeaderElectorOptions Options(MetadataStore* store, const std::string& id, Events* events,
                               absl::Duration lease = absl::Milliseconds(600)) {
    LeaderElectorOptions options;
    options.store = store;
    options.supervisor_id = id;
    options.address = "127.0.0.1:" + std::to_string(7000 + id.size());
    options.lease = lease;
    options.on_elected = [events](int64_t epoch) {
      events->elected++;
      events->epoch = epoch;
    };
    options.on_lost = [events](const std::string&) { events->lost++; };
    return options;
  }

  // A write through the store's fenced path.
  static absl::Status WriteDatasource(MetadataStore* store, const std::string& name) {
    return store->InTransaction(
        [&](StoreTxn& txn) { return txn.EnsureDatasource(name, absl::ToUnixMillis(absl::Now())); });
  }
  static bool DatasourceExists(MetadataStore* store, const std::string& name) {
    bool exists = false;
    EXPECT_TRUE(store
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      absl::StatusOr<bool> found = txn.DatasourceExists(name);
                      if (!found.ok()) return found.status();
                      exists = *found;
                      return absl::OkStatus();
                    })
                    .ok());
    return exists;
  }

  std::string dir_;
};

TEST_P(LeaderElectorTest, FirstTakesEpochOneTheOtherFollowsAndNamesIt) {
  auto store_a = OpenStore();
  auto store_b = OpenStore();
  ASSERT_NE(store_a, nullptr);
  ASSERT_NE(store_b, nullptr);
  Events a_events, b_events;
  LeaderElector a(Options(store_a.get(), "sup-a", &a_events));
  LeaderElector b(Options(store_b.get(), "sup-b", &b_events));
  ASSERT_TRUE(a.RunOnce().ok());
  ASSERT_TRUE(b.RunOnce().ok());
  EXPECT_EQ(a_events.elected, 1);
  EXPECT_EQ(a_events.epoch, 1);
  EXPECT_TRUE(a.leadership().leading);
  EXPECT_FALSE(b.leadership().leading);
  EXPECT_EQ(b_events.elected, 0);
  const absl::Status not_leader = b.NotLeaderStatus();
  EXPECT_EQ(not_leader.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(not_leader.message(), "sup-a at 127.0.0.1:7005 (epoch 1)"))
      << not_leader;
  // The leader writes through its fence.
  EXPECT_TRUE(WriteDatasource(store_a.get(), "wiki").ok());
}

TEST_P(LeaderElectorTest, RenewalKeepsTheLeaseAcrossManyLeaseLengths) {
  auto store_a = OpenStore();
  auto store_b = OpenStore();
  Events a_events, b_events;
  LeaderElector a(Options(store_a.get(), "sup-a", &a_events, absl::Milliseconds(900)));
  LeaderElector b(Options(store_b.get(), "sup-b", &b_events, absl::Milliseconds(900)));
  ASSERT_TRUE(a.RunOnce().ok());
  const absl::Time end = absl::Now() + absl::Milliseconds(2700);
  while (absl::Now() < end) {
    absl::SleepFor(absl::Milliseconds(150));
    ASSERT_TRUE(a.RunOnce().ok());
    ASSERT_TRUE(b.RunOnce().ok());
  }
  EXPECT_TRUE(a.leadership().leading);
  EXPECT_EQ(a_events.lost, 0);
  EXPECT_EQ(b_events.elected, 0);
  EXPECT_EQ(a.leadership().epoch, 1);
}

// The heart of failover: the leader stops renewing (a pause), the standby
// takes the lease at epoch 2, and every later transaction of the old leader
// is refused inside the transaction and writes nothing; its next round says
// it lost, and it never leads again.
TEST_P(LeaderElectorTest, DeposedLeaderIsFencedAndWritesNothing) {
  auto store_a = OpenStore();
  auto store_b = OpenStore();
  Events a_events, b_events;
  LeaderElector a(Options(store_a.get(), "sup-a", &a_events));
  LeaderElector b(Options(store_b.get(), "sup-b", &b_events));
  ASSERT_TRUE(a.RunOnce().ok());
  ASSERT_TRUE(WriteDatasource(store_a.get(), "before").ok());

  // b cannot take a live lease.
  ASSERT_TRUE(b.RunOnce().ok());
  EXPECT_FALSE(b.leadership().leading);
  // a "pauses" past its lease; b takes over.
  absl::SleepFor(absl::Milliseconds(800));
  ASSERT_TRUE(b.RunOnce().ok());
  ASSERT_TRUE(b.leadership().leading);
  EXPECT_EQ(b_events.epoch, 2);

  // a wakes up and writes before its elector noticed anything.
  const absl::Status fenced = WriteDatasource(store_a.get(), "after");
  EXPECT_EQ(fenced.code(), absl::StatusCode::kUnavailable) << fenced;
  EXPECT_TRUE(IsFenced(fenced)) << fenced;
  EXPECT_TRUE(absl::StrContains(fenced.message(), "sup-b")) << fenced;
  EXPECT_EQ(store_a->fenced_transactions(), 1);
  EXPECT_FALSE(DatasourceExists(store_b.get(), "after"));
  EXPECT_TRUE(DatasourceExists(store_b.get(), "before"));
  EXPECT_TRUE(WriteDatasource(store_b.get(), "by-b").ok());

  ASSERT_TRUE(a.RunOnce().ok());
  EXPECT_EQ(a_events.lost, 1);
  EXPECT_FALSE(a.leadership().leading);
  EXPECT_TRUE(a.leadership().lost);
  // Even once b's lease runs out, a does not lead again.
  absl::SleepFor(absl::Milliseconds(800));
  ASSERT_TRUE(a.RunOnce().ok());
  EXPECT_FALSE(a.leadership().leading);
  EXPECT_EQ(a_events.elected, 1);
  EXPECT_FALSE(WriteDatasource(store_a.get(), "still-after").ok());
}

// A leader whose own lease ran out, with no one else leading yet, writes
// nothing either until it renews; its elector gives up leadership.
TEST_P(LeaderElectorTest, ExpiredLeaseRefusesWritesAndTheElectorGivesUp) {
  auto store_a = OpenStore();
  Events a_events;
  LeaderElector a(Options(store_a.get(), "sup-a", &a_events));
  ASSERT_TRUE(a.RunOnce().ok());
  absl::SleepFor(absl::Milliseconds(800));
  const absl::Status fenced = WriteDatasource(store_a.get(), "late");
  EXPECT_TRUE(IsFenced(fenced)) << fenced;
  EXPECT_TRUE(absl::StrContains(fenced.message(), "expired")) << fenced;
  ASSERT_TRUE(a.RunOnce().ok());
  EXPECT_EQ(a_events.lost, 1);
}

TEST_P(LeaderElectorTest, ResignationLetsTheStandbyLeadAtOnce) {
  auto store_a = OpenStore();
  auto store_b = OpenStore();
  Events a_events, b_events;
  LeaderElector a(Options(store_a.get(), "sup-a", &a_events, absl::Seconds(60)));
  LeaderElector b(Options(store_b.get(), "sup-b", &b_events, absl::Seconds(60)));
  ASSERT_TRUE(a.RunOnce().ok());
  ASSERT_TRUE(b.RunOnce().ok());
  EXPECT_FALSE(b.leadership().leading);
  a.Stop(/*resign=*/true);
  ASSERT_TRUE(b.RunOnce().ok());
  EXPECT_TRUE(b.leadership().leading);
  EXPECT_EQ(b_events.epoch, 2);
  EXPECT_FALSE(WriteDatasource(store_a.get(), "after-resign").ok());
}

// Two electors on their threads: exactly one leads, the other never does
// while the leader keeps renewing.
TEST_P(LeaderElectorTest, ThreadsElectExactlyOne) {
  auto store_a = OpenStore();
  auto store_b = OpenStore();
  Events a_events, b_events;
  LeaderElector a(Options(store_a.get(), "sup-a", &a_events));
  LeaderElector b(Options(store_b.get(), "sup-b", &b_events));
  a.Start();
  b.Start();
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (a_events.elected + b_events.elected == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(a_events.elected + b_events.elected, 1);
  EXPECT_EQ(a_events.lost + b_events.lost, 0);
  EXPECT_NE(a.leadership().leading, b.leadership().leading);
  a.Stop(false);
  b.Stop(false);
}

INSTANTIATE_TEST_SUITE_P(Backends, LeaderElectorTest, ::testing::ValuesIn(testing::TestBackends()),
                         [](const ::testing::TestParamInfo<TestBackend>& info) {
                           return testing::BackendName(info.param);
                         });

}  // namespace
}  // namespace sluice::supervisor
