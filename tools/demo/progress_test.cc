#include "tools/demo/progress.h"

#include "gtest/gtest.h"

namespace sluice {
namespace demo {
namespace {

v1::SupervisorTaskRecord Task(const std::string& group, v1::TaskState state, int64_t processed,
                              int64_t unparseable, int64_t checkpoints) {
  v1::SupervisorTaskRecord task;
  task.set_base_sequence_name(group);
  task.set_state(state);
  task.mutable_row_stats()->set_processed(processed);
  task.mutable_row_stats()->set_unparseable(unparseable);
  task.mutable_row_stats()->set_checkpoints(checkpoints);
  return task;
}

TEST(ProgressTest, ReplicasCountOnceAndFinishedGroupsStillCount) {
  v1::SupervisorStatus status;
  (*status.mutable_current_offsets())[0] = 120;
  (*status.mutable_current_offsets())[1] = 90;
  (*status.mutable_committed_offsets())[0] = 100;
  (*status.mutable_committed_offsets())[1] = 50;
  status.set_aggregate_lag(7);
  status.set_segments_published(3);
  status.add_active_groups()->set_base_sequence_name("wiki_b");
  status.add_publishing_groups()->set_base_sequence_name("wiki_a");
  v1::SupervisorServiceListTasksResponse tasks;
  // Group a (finished): two replicas, one behind the other.
  *tasks.add_tasks() = Task("wiki_a", v1::TASK_STATE_SUCCESS, 100, 2, 3);
  *tasks.add_tasks() = Task("wiki_a", v1::TASK_STATE_SUCCESS, 98, 2, 3);
  // Group b (reading): two replicas.
  *tasks.add_tasks() = Task("wiki_b", v1::TASK_STATE_READING, 40, 1, 1);
  *tasks.add_tasks() = Task("wiki_b", v1::TASK_STATE_PAUSED, 45, 1, 1);

  ProgressSnapshot snapshot;
  FillFromSupervisor(status, tasks, {{0, 0}, {1, 10}}, &snapshot);
  EXPECT_EQ(snapshot.read, 120 + 80);
  EXPECT_EQ(snapshot.committed, 100 + 40);
  EXPECT_EQ(snapshot.rows, 100 + 45);
  EXPECT_EQ(snapshot.unparseable, 2 + 1);
  EXPECT_EQ(snapshot.checkpoints, 3 + 1);
  EXPECT_EQ(snapshot.reading_tasks, 2);
  EXPECT_EQ(snapshot.lag, 7);
  EXPECT_EQ(snapshot.segments_published, 3);
  EXPECT_EQ(snapshot.reading_groups, (std::set<std::string>{"wiki_b"}));
  EXPECT_EQ(snapshot.publishing_groups, 1);

  snapshot.elapsed = absl::Milliseconds(12500);
  snapshot.produced = 250;
  snapshot.producing = true;
  EXPECT_EQ(FormatProgressLine(snapshot),
            "[  12.5s] produced 250+ | read 200 (3 unparseable) | tasks reading 2 | "
            "checkpoints 4 | segments published 3 | committed 140 | lag 7");
}

}  // namespace
}  // namespace demo
}  // namespace sluice
