// Tests of offset_rows.h, the commit metadata rows: offset resets, and initial
// offsets recorded once and tied to their topic; on SQLite, and on PostgreSQL
// in the _postgresql_test target.
#include "supervisor/store/offset_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/status_macros.h"
#include "supervisor/store/store_test_fixture.h"

namespace sluice::supervisor {
namespace {

using store_testing::TestBackend;
using OffsetRowsTest = store_testing::StoreTest;

TEST_P(OffsetRowsTest, OffsetResetsAreReadBackInOrder) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_RETURN_IF_ERROR(txn.EnsureDatasource("wiki", 1));
                    SLUICE_RETURN_IF_ERROR(
                        txn.RecordOffsetReset("wiki", 0, 20, 5, "operator reset of offsets", 10));
                    return txn.RecordOffsetReset("wiki", 1, 7, std::nullopt, "operator reset", 11);
                  })
                  .ok());
  std::vector<v1::OffsetReset> resets;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(resets, txn.OffsetResets("wiki"));
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_EQ(resets.size(), 2u);
  EXPECT_EQ(resets[0].partition(), 0);
  EXPECT_EQ(resets[0].old_offset(), 20);
  EXPECT_EQ(resets[0].new_offset(), 5);
  EXPECT_EQ(resets[0].reason(), "operator reset of offsets");
  EXPECT_EQ(resets[0].reset_at_ms(), 10);
  EXPECT_LT(resets[0].reset_id(), resets[1].reset_id());
  EXPECT_TRUE(resets[1].has_old_offset());
  EXPECT_FALSE(resets[1].has_new_offset());
}
TEST_P(OffsetRowsTest, InitialOffsetsAreRecordedOnceAndGuardTheTopic) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto recorded = txn.RecordInitialOffsets("wiki", "edits", {{0, 10}}, 1);
                    EXPECT_EQ(*recorded, (OffsetMap{{0, 10}}));
                    EXPECT_TRUE(txn.SetCommittedOffsets("wiki", "edits", {{0, 50}}, 2).ok());
                    // A second call only records partitions without an offset.
                    recorded = txn.RecordInitialOffsets("wiki", "edits", {{0, 99}, {1, 3}}, 3);
                    EXPECT_EQ(*recorded, (OffsetMap{{1, 3}}));
                    EXPECT_EQ(*txn.CommittedOffsets("wiki"), (OffsetMap{{0, 50}, {1, 3}}));
                    EXPECT_EQ(*txn.InitialOffsets("wiki"), (OffsetMap{{0, 10}, {1, 3}}));
                    auto other = txn.RecordInitialOffsets("wiki", "clicks", {{0, 1}}, 4);
                    EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
                    EXPECT_TRUE(txn.DeleteCommittedOffsets("wiki", {}).ok());
                    EXPECT_FALSE(txn.CommitTopic("wiki")->has_value());
                    return absl::OkStatus();
                  })
                  .ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, OffsetRowsTest, ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
