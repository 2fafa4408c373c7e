// Tests of task_group_rows.h, the task group, checkpoint and task rows; on
// SQLite, and on PostgreSQL in the _postgresql_test target.
#include "supervisor/store/task_group_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/status_macros.h"
#include "supervisor/store/store_test_fixture.h"

namespace sluice::supervisor {
namespace {

using store_testing::TestBackend;
using TaskGroupRowsTest = store_testing::StoreTest;

TEST_P(TaskGroupRowsTest, TaskGroupsCheckpointsAndTasks) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(
      (*store)
          ->InTransaction([&](StoreTxn& txn) -> absl::Status {
            EXPECT_TRUE(txn.EnsureDatasource("wiki", 1).ok());
            TaskGroupRecord g;
            g.base_sequence_name = "wiki_0123456789abcdef";
            g.datasource = "wiki";
            g.group_id = 0;
            g.start_offsets = {{0, 10}, {2, 20}};
            g.created_at_ms = 5;
            EXPECT_TRUE(txn.InsertTaskGroup(g).ok());
            EXPECT_EQ(txn.InsertTaskGroup(g).code(), absl::StatusCode::kAlreadyExists);
            EXPECT_TRUE(txn.AppendCheckpoint(g.base_sequence_name, 1, {{0, 15}, {2, 25}}, 6).ok());
            TaskRecord t;
            t.task_id = "wiki_0123456789abcdef_00000001";
            t.datasource = "wiki";
            t.base_sequence_name = g.base_sequence_name;
            t.worker_id = "w0";
            t.state = v1::TASK_STATE_NOT_STARTED;
            t.spec.set_task_id(t.task_id);
            EXPECT_TRUE(txn.InsertTask(t).ok());
            EXPECT_TRUE(txn.UpdateTask(t.task_id, v1::TASK_STATE_READING, "", {{0, 12}}, 7).ok());
            EXPECT_EQ(txn.UpdateTask("nope", v1::TASK_STATE_READING, "", {}, 7).code(),
                      absl::StatusCode::kNotFound);
            return absl::OkStatus();
          })
          .ok());
  ASSERT_TRUE(
      (*store)
          ->InTransaction([&](StoreTxn& txn) -> absl::Status {
            auto groups = *txn.LiveTaskGroups("wiki");
            EXPECT_EQ(groups.size(), 1u);
            EXPECT_EQ(groups[0].checkpoints.size(), 2u);
            EXPECT_EQ(groups[0].checkpoints[1], (OffsetMap{{0, 15}, {2, 25}}));
            EXPECT_TRUE(
                txn.SetGroupPublishing(groups[0].base_sequence_name, {{0, 30}, {2, 40}}, 99).ok());
            auto task = *txn.GetTask("wiki_0123456789abcdef_00000001");
            EXPECT_EQ(task->state, v1::TASK_STATE_READING);
            EXPECT_EQ(task->current_offsets, (OffsetMap{{0, 12}}));
            EXPECT_EQ(task->spec.task_id(), task->task_id);
            EXPECT_EQ(txn.ListTasks("wiki", false)->size(), 1u);
            EXPECT_TRUE(txn.UpdateTask(task->task_id, v1::TASK_STATE_SUCCESS, "", {}, 8).ok());
            EXPECT_EQ(txn.ListTasks("wiki", false)->size(), 0u);
            EXPECT_EQ(txn.ListTasks("", true)->size(), 1u);
            EXPECT_TRUE(
                txn.FinishGroup(groups[0].base_sequence_name, GroupState::kDone, "published", 9)
                    .ok());
            EXPECT_TRUE(txn.LiveTaskGroups("wiki")->empty());
            return absl::OkStatus();
          })
          .ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, TaskGroupRowsTest, ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
