// Tests of leader_lease_rows.h, the leader lease row and the fence: the row
// round-trips, and the fence holds only for the holder at its epoch before
// the lease expires by the database's clock; on SQLite, and on PostgreSQL in
// the _postgresql_test target. (The election over them:
// ../leader_elector_test.cc.)
#include "supervisor/store/leader_lease_rows.h"

#include <gtest/gtest.h>

#include <optional>

#include "common/status_macros.h"
#include "supervisor/store/store_test_fixture.h"

namespace sluice::supervisor {
namespace {

using store_testing::TestBackend;
using LeaderLeaseRowsTest = store_testing::StoreTest;

TEST_P(LeaderLeaseRowsTest, TheRowRoundTripsAndTheFenceHoldsOnlyForItsHolderUntilExpiry) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status no_lease, holder, other_epoch, other_holder, expired;
  std::optional<LeaderLease> before, after;
  ASSERT_TRUE((*store)
                  ->InLeaseTransaction([&](SqlConnection* db) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(before, ReadLeaderLease(db));
                    no_lease = CheckLeaderFence(db, {.holder_id = "a", .epoch = 1});
                    SLUICE_ASSIGN_OR_RETURN(const int64_t now_ms, DatabaseNowMs(db));
                    LeaderLease lease;
                    lease.holder_id = "a";
                    lease.holder_address = "127.0.0.1:1";
                    lease.epoch = 3;
                    lease.acquired_at_ms = now_ms;
                    lease.expires_at_ms = now_ms + 60000;
                    SLUICE_RETURN_IF_ERROR(WriteLeaderLease(db, lease));
                    SLUICE_ASSIGN_OR_RETURN(after, ReadLeaderLease(db));
                    holder = CheckLeaderFence(db, {.holder_id = "a", .epoch = 3});
                    other_epoch = CheckLeaderFence(db, {.holder_id = "a", .epoch = 2});
                    other_holder = CheckLeaderFence(db, {.holder_id = "b", .epoch = 3});
                    lease.expires_at_ms = now_ms - 1;
                    SLUICE_RETURN_IF_ERROR(WriteLeaderLease(db, lease));
                    expired = CheckLeaderFence(db, {.holder_id = "a", .epoch = 3});
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_FALSE(before.has_value());
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->holder_id, "a");
  EXPECT_EQ(after->holder_address, "127.0.0.1:1");
  EXPECT_EQ(after->epoch, 3);
  EXPECT_EQ(after->expires_at_ms - after->acquired_at_ms, 60000);
  EXPECT_TRUE(holder.ok()) << holder;
  for (const absl::Status& refused : {no_lease, other_epoch, other_holder, expired}) {
    EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable) << refused;
    EXPECT_TRUE(IsFenced(refused)) << refused;
  }
  EXPECT_NE(other_holder.message().find("127.0.0.1:1"), std::string::npos) << other_holder;
}

INSTANTIATE_TEST_SUITE_P(Backends, LeaderLeaseRowsTest,
                         ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
