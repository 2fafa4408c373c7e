// Tests of spec_rows.h, the spec rows and the per-datasource state: spec
// history with tombstones, the autoscaler's log and count, stream partition
// ids; on SQLite, and on PostgreSQL in the _postgresql_test target.
#include "supervisor/store/spec_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/status_macros.h"
#include "supervisor/store/store_test_fixture.h"

namespace sluice::supervisor {
namespace {

using store_testing::TestBackend;
using SpecRowsTest = store_testing::StoreTest;

TEST_P(SpecRowsTest, SpecHistoryWithTombstoneAndActiveSpecs) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_EQ(*txn.InsertSpec("wiki", Spec("a"), false, 1), 1);
                    EXPECT_EQ(*txn.InsertSpec("wiki", Spec("b"), false, 2), 2);
                    EXPECT_EQ(*txn.InsertSpec("wiki", Spec("b"), true, 3), 3);
                    v1::SupervisorSpec other = Spec("c");
                    other.set_datasource("clicks");
                    EXPECT_EQ(*txn.InsertSpec("clicks", other, false, 4), 1);
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto history = *txn.SpecHistory("wiki");
                    EXPECT_EQ(history.size(), 3u);
                    EXPECT_EQ(history[0].version, 3);
                    EXPECT_TRUE(history[0].terminated);
                    EXPECT_EQ(history[2].spec.io_config().topic(), "a");
                    auto active = *txn.ActiveSpecs();
                    EXPECT_EQ(active.size(), 1u);
                    EXPECT_EQ(active[0].datasource, "clicks");
                    return absl::OkStatus();
                  })
                  .ok());
}
TEST_P(SpecRowsTest, ScalingDecisionsAreLoggedAndTheLastCountIsKept) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto none = txn.AutoscaledTaskCount("wiki");
                    EXPECT_TRUE(none.ok() && !none->has_value());
                    v1::ScalingDecision d;
                    d.set_from_task_count(1);
                    d.set_to_task_count(3);
                    d.set_reason("scale out: 7 of 10 lag samples >= 6000000");
                    d.set_decided_at_ms(100);
                    d.set_applied_at_ms(120);
                    auto first = txn.RecordScaling("wiki", d);
                    EXPECT_TRUE(first.ok()) << first.status();
                    d.set_from_task_count(3);
                    d.set_to_task_count(2);
                    d.set_reason("scale in");
                    auto second = txn.RecordScaling("wiki", d);
                    EXPECT_TRUE(second.ok()) << second.status();
                    EXPECT_GT(*second, *first);
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto count = txn.AutoscaledTaskCount("wiki");
                    EXPECT_TRUE(count.ok() && count->value_or(0) == 2);
                    auto log = txn.ScalingDecisions("wiki");
                    EXPECT_TRUE(log.ok());
                    EXPECT_EQ(log->size(), 2u);
                    if (log->size() == 2) {
                      EXPECT_EQ((*log)[0].to_task_count(), 3);
                      EXPECT_EQ((*log)[0].reason(), "scale out: 7 of 10 lag samples >= 6000000");
                      EXPECT_EQ((*log)[0].decided_at_ms(), 100);
                      EXPECT_EQ((*log)[0].applied_at_ms(), 120);
                      EXPECT_EQ((*log)[1].from_task_count(), 3);
                    }
                    EXPECT_TRUE(txn.ClearAutoscaledTaskCount("wiki").ok());
                    auto cleared = txn.AutoscaledTaskCount("wiki");
                    EXPECT_TRUE(cleared.ok() && !cleared->has_value());
                    EXPECT_EQ(txn.ScalingDecisions("wiki")->size(), 2u);
                    return absl::OkStatus();
                  })
                  .ok());
}
TEST_P(SpecRowsTest, StreamPartitionIdsAreOnlyEverAdded) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  auto entry = [](int32_t id, const std::string& topic, int32_t partition) {
    v1::StreamPartition p;
    p.set_id(id);
    p.set_topic(topic);
    p.set_partition(partition);
    return p;
  };
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_TRUE(txn.StreamPartitions("wiki")->empty());
                    return txn.AddStreamPartitions(
                        "wiki", {entry(1, "b", 0), entry(0, "a", 0)}, 100);
                  })
                  .ok());
  absl::Status again = (*store)->InTransaction([&](StoreTxn& txn) {
    return txn.AddStreamPartitions("wiki", {entry(2, "c", 0), entry(3, "a", 0)}, 200);
  });
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_NE(again.message().find("a[0]"), std::string::npos) << again;
  absl::Status same_id = (*store)->InTransaction(
      [&](StoreTxn& txn) { return txn.AddStreamPartitions("wiki", {entry(1, "z", 5)}, 200); });
  EXPECT_EQ(same_id.code(), absl::StatusCode::kAlreadyExists) << same_id;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto stored = txn.StreamPartitions("wiki");
                    EXPECT_TRUE(stored.ok());
                    EXPECT_EQ(stored->size(), 2u) << "the refused transaction added nothing";
                    if (stored->size() == 2) {
                      EXPECT_EQ((*stored)[0].topic(), "a");
                      EXPECT_EQ((*stored)[1].id(), 1);
                      EXPECT_EQ((*stored)[1].topic(), "b");
                    }
                    EXPECT_TRUE(txn.StreamPartitions("other")->empty());
                    return absl::OkStatus();
                  })
                  .ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, SpecRowsTest, ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
