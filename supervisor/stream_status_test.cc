#include "supervisor/stream_status.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {
namespace {

class StreamStatusTest : public ::testing::Test {
 protected:
  StatusInputs Inputs() {
    StatusInputs in;
    in.datasource = "ds";
    in.topic = "events";
    in.spec_version = 4;
    in.task_duration = absl::Minutes(10);
    in.partitions = 2;
    in.partitions_known = true;
    in.detailed_state = "RUNNING";
    in.health = &health_;
    in.active = &active_;
    in.publishing = &publishing_;
    in.watermarks = &watermarks_;
    in.now = absl::FromUnixSeconds(1000);
    return in;
  }

  SupervisorHealth health_;
  std::map<int32_t, Group> active_;
  std::map<int32_t, std::vector<Group>> publishing_;
  std::map<int32_t, PartitionWatermarks> watermarks_;
};

TEST_F(StreamStatusTest, HealthCountsRunsTaskOutcomesAndKeepsTenErrors) {
  SupervisorHealth h;
  EXPECT_FALSE(h.ran_ok_once());
  h.NoteRun(false);
  h.NoteRun(false);
  EXPECT_EQ(h.consecutive_run_failures(), 2);
  h.NoteRun(true);
  EXPECT_EQ(h.consecutive_run_failures(), 0);
  EXPECT_TRUE(h.ran_ok_once());

  h.NoteTaskOutcome(v1::TASK_STATE_FAILED);
  h.NoteTaskOutcome(v1::TASK_STATE_SUCCESS);
  h.NoteTaskOutcome(v1::TASK_STATE_FAILED);
  h.NoteTaskOutcome(v1::TASK_STATE_STOPPED);  // not an outcome
  h.NoteTaskOutcome(v1::TASK_STATE_FAILED);
  EXPECT_EQ(h.task_failures_in_a_row(), 2);

  for (int i = 0; i < 12; ++i) h.NoteError(i, absl::InternalError(absl::StrCat("e", i)));
  ASSERT_EQ(h.recent_errors().size(), SupervisorHealth::kRecentErrors);
  EXPECT_EQ(h.recent_errors().front().time_ms(), 2);
  EXPECT_EQ(h.recent_errors().back().message(), "INTERNAL: e11");
}

TEST_F(StreamStatusTest, OnlyTheLastTenTaskOutcomesCount) {
  SupervisorHealth h;
  for (int i = 0; i < 12; ++i) h.NoteTaskOutcome(v1::TASK_STATE_FAILED);
  EXPECT_EQ(h.task_failures_in_a_row(), 10);
}

TEST_F(StreamStatusTest, StatePrecedence) {
  StatusInputs in = Inputs();
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_PENDING);  // no run succeeded yet
  health_.NoteRun(true);
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_RUNNING);
  in.suspended = true;
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_SUSPENDED);
  for (int i = 0; i < 3; ++i) health_.NoteTaskOutcome(v1::TASK_STATE_FAILED);
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_UNHEALTHY_TASKS);
  for (int i = 0; i < 3; ++i) health_.NoteRun(false);
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_UNHEALTHY_SUPERVISOR);
  in.offsets_problem = StreamProblem::kStoredOffsetsPastEnd;
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_STORED_OFFSETS_PAST_END);
  in.offsets_problem = StreamProblem::kStoredOffsetsUnavailable;
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_STORED_OFFSETS_UNAVAILABLE);
  in.stream_unreachable = true;
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM);
  in.stopping = true;
  EXPECT_EQ(SupervisorStateOf(in), v1::SUPERVISOR_STATE_STOPPING);
}

TEST_F(StreamStatusTest, DetailedStateAndHealth) {
  health_.NoteRun(true);
  StatusInputs in = Inputs();
  in.detailed_state = "WAITING_FOR_WORKERS";
  v1::SupervisorStatus s = BuildStatus(in);
  EXPECT_EQ(s.state(), v1::SUPERVISOR_STATE_RUNNING);
  EXPECT_TRUE(s.healthy());
  EXPECT_EQ(s.detailed_state(), "WAITING_FOR_WORKERS");

  in.stream_unreachable = true;
  s = BuildStatus(in);
  EXPECT_FALSE(s.healthy());
  EXPECT_EQ(s.detailed_state(), "LOST_CONTACT_WITH_STREAM");
  in.partitions_known = false;
  EXPECT_EQ(BuildStatus(in).detailed_state(), "UNABLE_TO_CONNECT_TO_STREAM");

  in.stream_unreachable = false;
  in.offsets_problem = StreamProblem::kStoredOffsetsPastEnd;
  EXPECT_EQ(BuildStatus(in).detailed_state(), "STORED_OFFSETS_PAST_END");

  in.offsets_problem = StreamProblem::kNone;
  in.suspended = true;
  s = BuildStatus(in);
  EXPECT_EQ(s.detailed_state(), "SUSPENDED");
  EXPECT_TRUE(s.healthy());

  in.segments_failing_verification = 1;
  s = BuildStatus(in);
  EXPECT_FALSE(s.healthy());
  EXPECT_EQ(s.segments_failing_verification(), 1);
}

TEST_F(StreamStatusTest, GroupsCurrentOffsetsAndLatest) {
  health_.NoteRun(true);
  health_.NoteError(5, absl::UnavailableError("x"));
  Group reading;
  reading.group_id = 0;
  reading.base_sequence_name = "r";
  reading.start_offsets = {{0, 10}};
  reading.checkpoints = {{0, {{0, 10}}}, {1, {{0, 15}}}};
  reading.created_at = absl::FromUnixSeconds(900);
  TaskInfo a;
  a.task_id = "a";
  a.worker_id = "w1";
  a.state = v1::TASK_STATE_READING;
  (*a.status.mutable_current_offsets())[0] = 17;
  (*a.status.mutable_current_offsets())[5] = 99;  // not the group's: ignored
  TaskInfo b = a;
  b.task_id = "b";
  (*b.status.mutable_current_offsets())[0] = 20;
  b.state = v1::TASK_STATE_FAILED;  // not live: not counted
  reading.tasks = {{"a", a}, {"b", b}};
  active_[0] = reading;
  Group publishing;
  publishing.group_id = 1;
  publishing.base_sequence_name = "p";
  publishing.start_offsets = {{1, 0}};
  publishing.checkpoints = {{0, {{1, 0}}}};
  publishing.end_offsets = {{1, 40}};
  publishing.completion_deadline = absl::FromUnixSeconds(1030);
  TaskInfo c = a;
  c.task_id = "c";
  (*c.status.mutable_current_offsets())[1] = 40;  // publishing: not current
  publishing.tasks = {{"c", c}};
  publishing_[1].push_back(publishing);
  watermarks_ = {{0, {0, 50}}, {1, {0, 45}}};

  StatusInputs in = Inputs();
  in.watermarks_at = absl::FromUnixMillis(999'500);
  v1::SupervisorStatus s = BuildStatus(in);
  EXPECT_EQ(s.datasource(), "ds");
  EXPECT_EQ(s.topic(), "events");
  EXPECT_EQ(s.spec_version(), 4);
  EXPECT_EQ(s.partitions(), 2);
  ASSERT_EQ(s.active_groups_size(), 1);
  const v1::TaskGroupStatus& g = s.active_groups(0);
  EXPECT_EQ(g.base_sequence_name(), "r");
  EXPECT_EQ(g.checkpoints_size(), 2);
  EXPECT_EQ(g.tasks_size(), 2);
  EXPECT_EQ(g.remaining_ms(), 500'000);  // created 100 s ago, 10 min duration
  ASSERT_EQ(s.publishing_groups_size(), 1);
  EXPECT_EQ(s.publishing_groups(0).end_offsets().at(1), 40);
  EXPECT_EQ(s.publishing_groups(0).remaining_ms(), 30'000);
  EXPECT_EQ(s.current_offsets().size(), 1);
  EXPECT_EQ(s.current_offsets().at(0), 17);
  EXPECT_EQ(s.latest_offsets().at(0), 50);
  EXPECT_EQ(s.latest_offsets().at(1), 45);
  EXPECT_EQ(s.offsets_last_updated_ms(), 999'500);
  ASSERT_EQ(s.recent_errors_size(), 1);
  EXPECT_EQ(s.recent_errors(0).time_ms(), 5);
}

TEST_F(StreamStatusTest, StoredFactsFillCurrentAndLag) {
  v1::SupervisorStatus s;
  (*s.mutable_current_offsets())[0] = 30;  // a reading task got here
  (*s.mutable_latest_offsets())[0] = 50;
  (*s.mutable_latest_offsets())[1] = 45;
  (*s.mutable_latest_offsets())[2] = 5;
  (*s.mutable_latest_offsets())[3] = 7;  // nothing read nor committed
  s.set_healthy(true);
  v1::SupervisorStatus out = WithStoredFacts(s, {{0, 20}, {1, 40}, {2, 9}}, 12, 0);
  EXPECT_EQ(out.committed_offsets().at(0), 20);
  EXPECT_EQ(out.current_offsets().at(0), 30);  // the task's, not the committed
  EXPECT_EQ(out.current_offsets().at(1), 40);
  EXPECT_EQ(out.lag().at(0), 20);
  EXPECT_EQ(out.lag().at(1), 5);
  EXPECT_EQ(out.lag().at(2), -4);  // past the end: shown, not counted
  EXPECT_EQ(out.lag().at(3), 7);
  EXPECT_EQ(out.aggregate_lag(), 32);
  EXPECT_EQ(out.segments_published(), 12);
  EXPECT_TRUE(out.healthy());
  EXPECT_FALSE(WithStoredFacts(s, {}, 0, 2).healthy());
}

TEST_F(StreamStatusTest, TimeLagIsTheNewestRecordsTimeMinusTheFurthestReadersLastRecord) {
  Group reading;
  reading.group_id = 0;
  reading.start_offsets = {{0, 0}, {1, 0}, {2, 0}};
  reading.checkpoints = {{0, reading.start_offsets}};
  TaskInfo a;
  a.task_id = "a";
  a.state = v1::TASK_STATE_READING;
  (*a.status.mutable_current_offsets())[0] = 30;
  (*a.status.mutable_last_read_timestamps_ms())[0] = 7'000;
  (*a.status.mutable_current_offsets())[1] = 45;
  (*a.status.mutable_last_read_timestamps_ms())[1] = 9'000;
  TaskInfo b = a;  // a replica further ahead on partition 0 only
  b.task_id = "b";
  (*b.status.mutable_current_offsets())[0] = 40;
  (*b.status.mutable_last_read_timestamps_ms())[0] = 8'000;
  (*b.status.mutable_current_offsets())[1] = 44;
  (*b.status.mutable_last_read_timestamps_ms())[1] = 8'900;
  reading.tasks = {{"a", a}, {"b", b}};
  active_[0] = reading;
  watermarks_ = {{0, {0, 50}}, {1, {0, 45}}, {2, {0, 9}}};
  const std::map<int32_t, int64_t> newest = {{0, 10'500}, {1, 9'000}, {2, 3'000}};
  StatusInputs in = Inputs();
  in.newest_timestamps = &newest;
  v1::SupervisorStatus s = BuildStatus(in);
  // 0: b is furthest (40 < 50): 10.5 s - 8 s. 1: read to the end. 2: no
  // reader reported a record: unknown.
  EXPECT_EQ(s.time_lag_ms().size(), 2u);
  EXPECT_EQ(s.time_lag_ms().at(0), 2'500);
  EXPECT_EQ(s.time_lag_ms().at(1), 0);
  // The store says partition 2 was committed to its end: 0 there too.
  v1::SupervisorStatus out = WithStoredFacts(s, {{2, 9}}, 0, 0);
  EXPECT_EQ(out.time_lag_ms().at(2), 0);
  EXPECT_EQ(out.max_time_lag_ms(), 2'500);
  EXPECT_EQ(WithStoredFacts(v1::SupervisorStatus(), {}, 0, 0).max_time_lag_ms(), 0);
}

TEST_F(StreamStatusTest, Summary) {
  v1::SupervisorStatus s;
  s.set_state(v1::SUPERVISOR_STATE_SUSPENDED);
  s.set_suspended(true);
  s.set_healthy(true);
  s.set_spec_version(7);
  s.set_detailed_state("SUSPENDED");
  v1::SupervisorSummary summary = SummaryOf("ds", s);
  EXPECT_EQ(summary.datasource(), "ds");
  EXPECT_EQ(summary.state(), v1::SUPERVISOR_STATE_SUSPENDED);
  EXPECT_TRUE(summary.suspended());
  EXPECT_TRUE(summary.healthy());
  EXPECT_EQ(summary.spec_version(), 7);
  EXPECT_EQ(summary.message(), "SUSPENDED");
}

}  // namespace
}  // namespace sluice::supervisor
