#include "supervisor/supervisor_reads.h"

#include <gtest/gtest.h>

#include "supervisor/clock.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

class SupervisorReadsTest : public ::testing::Test {
 protected:
  SupervisorReadsTest() : store_(testing::OpenTestStore(dir_.path())) {}

  void Run(const std::function<absl::Status(StoreTxn&)>& fn) {
    ASSERT_TRUE(store_->InTransaction(fn).ok());
  }
  void AddSpec(const std::string& ds, const std::string& secret = "") {
    v1::SupervisorSpec spec = testing::TestSpec(ds);
    if (!secret.empty()) {
      (*spec.mutable_io_config()->mutable_consumer_properties())["sasl.password"] = secret;
    }
    Run([&](StoreTxn& txn) { return txn.InsertSpec(ds, spec, false, clock_.NowMs()).status(); });
  }
  void AddTask(const std::string& id, v1::TaskState state) {
    TaskRecord record;
    record.task_id = id;
    record.datasource = "ds";
    record.base_sequence_name = "base";
    record.worker_id = "w1";
    record.state = state;
    record.current_offsets = {{0, 3}};
    record.error = state == v1::TASK_STATE_FAILED ? "stored error" : "";
    Run([&](StoreTxn& txn) { return txn.InsertTask(record); });
  }

  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<MetadataStore> store_;
};

TEST_F(SupervisorReadsTest, SpecHistoryIsRedactedAndNamesAreChecked) {
  EXPECT_EQ(ReadSpecHistory(*store_, "a/b").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadSpecHistory(*store_, "ds").status().code(), absl::StatusCode::kNotFound);
  AddSpec("ds", "hunter2");
  AddSpec("ds", "hunter3");
  auto history = ReadSpecHistory(*store_, "ds");
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->versions_size(), 2);
  EXPECT_GT(history->versions(0).version(), history->versions(1).version());  // newest first
  for (const auto& version : history->versions()) {
    EXPECT_EQ(version.spec().io_config().consumer_properties().at("sasl.password"), "***");
    EXPECT_FALSE(version.terminated());
  }
}

TEST_F(SupervisorReadsTest, SegmentsRequestChecks) {
  v1::ListSegmentsRequest request;
  request.set_datasource("ds");
  EXPECT_EQ(ReadSegments(*store_, request).status().code(), absl::StatusCode::kNotFound);
  AddSpec("ds");
  auto none = ReadSegments(*store_, request);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->segments_size(), 0);
  request.set_limit(-1);
  EXPECT_EQ(ReadSegments(*store_, request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_limit(0);
  request.mutable_interval()->set_start_ms(10);
  request.mutable_interval()->set_end_ms(10);
  EXPECT_EQ(ReadSegments(*store_, request).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SupervisorReadsTest, TasksFilteredAndOverlaidWithReports) {
  AddSpec("ds");
  AddTask("running", v1::TASK_STATE_READING);
  AddTask("failed", v1::TASK_STATE_FAILED);
  v1::SupervisorServiceListTasksRequest request;
  request.set_datasource("ds");
  auto live = ReadTaskRecords(*store_, request);
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 1u);  // finished tasks only when asked
  EXPECT_EQ((*live)[0].task_id, "running");

  request.add_states(v1::TASK_STATE_FAILED);
  auto failed = ReadTaskRecords(*store_, request);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->size(), 2u);  // a terminal state asks for finished tasks
  v1::SupervisorServiceListTasksResponse answer = TaskListResponse(*failed, request, {});
  ASSERT_EQ(answer.tasks_size(), 1);  // filtered to FAILED
  EXPECT_EQ(answer.tasks(0).task_id(), "failed");
  EXPECT_EQ(answer.tasks(0).error(), "stored error");

  v1::TaskStatus report;
  report.set_task_id("running");
  (*report.mutable_current_offsets())[0] = 42;
  report.set_error("reported error");
  report.mutable_row_stats()->set_processed(7);
  v1::SupervisorServiceListTasksRequest all;
  answer = TaskListResponse(*live, all, {{"running", report}});
  ASSERT_EQ(answer.tasks_size(), 1);
  EXPECT_EQ(answer.tasks(0).current_offsets().at(0), 42);
  EXPECT_EQ(answer.tasks(0).row_stats().processed(), 7);
  EXPECT_EQ(answer.tasks(0).error(), "reported error");
  EXPECT_EQ(TaskListResponse(*live, all, {}).tasks(0).current_offsets().at(0), 3);

  request.set_datasource("nope");
  EXPECT_EQ(ReadTaskRecords(*store_, request).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SupervisorReadsTest, CommitLogTopicFallsBackToTheSpec) {
  EXPECT_EQ(ReadCommitLog(*store_, "ds").status().code(), absl::StatusCode::kNotFound);
  AddSpec("ds");
  auto log = ReadCommitLog(*store_, "ds");
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->datasource(), "ds");
  EXPECT_EQ(log->topic(), "events");
  EXPECT_TRUE(log->committed_offsets().empty());
  Run([&](StoreTxn& txn) {
    return txn.SetCommittedOffsets("ds", "stored-topic", {{0, 9}}, clock_.NowMs());
  });
  log = ReadCommitLog(*store_, "ds");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->topic(), "stored-topic");
  EXPECT_EQ(log->committed_offsets().at(0), 9);
}

TEST_F(SupervisorReadsTest, HandoffStatusOfUnknownSegmentsIsEmpty) {
  v1::GetHandoffStatusRequest request;
  request.set_datasource("ds");
  request.add_segment_ids("nope");
  EXPECT_EQ(ReadHandoffStatus(*store_, request).status().code(), absl::StatusCode::kNotFound);
  AddSpec("ds");
  auto status = ReadHandoffStatus(*store_, request);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->handed_off_segment_ids_size(), 0);
  EXPECT_EQ(status->failed_segment_ids_size(), 0);
}

}  // namespace
}  // namespace sluice::supervisor
