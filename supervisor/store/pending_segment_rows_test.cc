// Tests of pending_segment_rows.h, the allocation rows: housekeeping deletes
// the allocations of long-committed sequences and long-ended groups, and only
// those; on SQLite, and on PostgreSQL in the _postgresql_test target.
#include "supervisor/store/pending_segment_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/store/store_test_fixture.h"

namespace sluice::supervisor {
namespace {

using store_testing::TestBackend;
using PendingSegmentRowsTest = store_testing::StoreTest;

TEST_P(PendingSegmentRowsTest, PendingSegmentsOfLongCommittedSequencesAreDeleted) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  auto pending = [](const std::string& id, const std::string& sequence) {
    PendingSegment s;
    s.id = id;
    s.datasource = "wiki";
    s.sequence_name = sequence;
    s.start_ms = 0;
    s.end_ms = 3600000;
    s.version = "v1";
    s.partition_num = id == "a" ? 0 : (id == "b" ? 1 : 2);
    s.task_id = "t";
    return s;
  };
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_TRUE(txn.EnsureDatasource("wiki", 1).ok());
                    EXPECT_TRUE(txn.InsertPendingSegment(pending("a", "wiki_x_0"), 1).ok());
                    EXPECT_TRUE(txn.InsertPendingSegment(pending("b", "wiki_x_1"), 1).ok());
                    EXPECT_TRUE(txn.InsertPendingSegment(pending("c", "wiki_x_2"), 1).ok());
                    // wiki_x_0 committed at 1000, wiki_x_1 at 5000, wiki_x_2 never.
                    EXPECT_TRUE(txn.InsertCommittedSequence("wiki", "wiki_x_0", "t", {{0, 0}},
                                                            {{0, 10}}, {}, 1000)
                                    .ok());
                    EXPECT_TRUE(txn.InsertCommittedSequence("wiki", "wiki_x_1", "t", {{0, 10}},
                                                            {{0, 20}}, {}, 5000)
                                    .ok());
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfCommittedSequences(500), 0);
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfCommittedSequences(2000), 1);
                    EXPECT_FALSE(txn.PendingSegmentById("a")->has_value());
                    EXPECT_TRUE(txn.PendingSegmentById("b")->has_value());
                    EXPECT_TRUE(txn.PendingSegmentById("c")->has_value());
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfCommittedSequences(10000), 1);
                    EXPECT_FALSE(txn.PendingSegmentById("b")->has_value());
                    // Never committed: kept (its group may still be reading).
                    EXPECT_TRUE(txn.PendingSegmentById("c")->has_value());
                    return absl::OkStatus();
                  })
                  .ok());
}

// Allocations of a sequence that never publishes are not kept forever: once
// the group of the task that made them ended longer ago than the cut-off,
// they go, whether their sequence was committed or not; a live group's stay.
TEST_P(PendingSegmentRowsTest, PendingSegmentsOfLongEndedGroupsAreDeleted) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  auto add_group = [](StoreTxn& txn, const std::string& base) {
    TaskGroupRecord g;
    g.base_sequence_name = base;
    g.datasource = "wiki";
    g.start_offsets = {{0, 0}};
    EXPECT_TRUE(txn.InsertTaskGroup(g).ok());
    TaskRecord t;
    t.task_id = base + "_task";
    t.datasource = "wiki";
    t.base_sequence_name = base;
    t.worker_id = "w0";
    t.state = v1::TASK_STATE_READING;
    t.spec.set_task_id(t.task_id);
    EXPECT_TRUE(txn.InsertTask(t).ok());
  };
  auto pending = [](StoreTxn& txn, const std::string& base, int hour) {
    PendingSegment s;
    s.id = absl::StrCat(base, "_segment_", hour);
    s.datasource = "wiki";
    s.sequence_name = base + "_0";
    s.start_ms = int64_t{hour} * 3600000;
    s.end_ms = s.start_ms + 3600000;
    s.version = "v1";
    s.partition_num = base == "wiki_done" ? 0 : (base == "wiki_gone" ? 1 : 2);
    s.task_id = base + "_task";
    EXPECT_TRUE(txn.InsertPendingSegment(s, 1).ok());
  };
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_TRUE(txn.EnsureDatasource("wiki", 1).ok());
                    for (const char* base : {"wiki_done", "wiki_gone", "wiki_live"}) {
                      add_group(txn, base);
                      for (int hour = 0; hour < 3; ++hour) pending(txn, base, hour);
                    }
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_done_0"), 3);
                    EXPECT_TRUE(txn.FinishGroup("wiki_done", GroupState::kDone, "", 1000).ok());
                    EXPECT_TRUE(
                        txn.FinishGroup("wiki_gone", GroupState::kAbandoned, "", 5000).ok());
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfEndedGroups(500), 0);
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfEndedGroups(2000), 3);
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_done_0"), 0);
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_gone_0"), 3);
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfEndedGroups(1'000'000), 3);
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_gone_0"), 0);
                    // A reading group keeps its allocations.
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_live_0"), 3);
                    return absl::OkStatus();
                  })
                  .ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, PendingSegmentRowsTest, ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
