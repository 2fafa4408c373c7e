// Druid parity on the supervisor side (issue 18, points 3, 4 and 7), with
// real tasks reading a real-protocol Kafka (the in-process mock) in an
// in-process cluster:
// - early handoff: HandoffTaskGroups commits what the group read while the
//   same task reads on;
// - idleConfig: a stream that stops goes IDLE (its group published, no task
//   running) and wakes when records arrive; every record is committed once;
// - a live spec change keeps the running task; a change of what a record
//   becomes restarts it;
// - autoScalerConfig (point 8): tasks that fall behind scale the groups out
//   (a roll-over, no task killed), a caught-up stream scales them in at the
//   next roll-over; every record is committed once;
// - CompactDataSource compacts an interval's segments on demand while the
//   task reads on.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "sluice/v1/task_service.grpc.pb.h"
#include "tests/task_test_util.h"
#include "tests/wiki_cluster_test.h"
#include "tests/wiki_count_spec.h"

namespace sluice {
namespace {

class ClusterSupervisorOpsTest : public testing::WikiClusterTest {
 protected:
  void SetUp() override { StartWikiCluster(/*partitions=*/2); }

  v1::SupervisorSpec Spec() {
    return testing::WikiCountSpec({.datasource = "wiki", .bootstrap_servers = kafka_->bootstrap()});
  }

  // `n` records to each partition, row times in one hour.
  void Produce(int n) {
    produced_at_ = absl::ToUnixMillis(absl::Now());
    for (int32_t p = 0; p < 2; ++p) {
      std::vector<std::string> values;
      for (int i = 0; i < n; ++i) {
        values.push_back(absl::StrCat(R"({"timestamp": )", 1796000000000 + produced_ * 1000 + i,
                                      R"(, "page": "p)", p, "-", i % 7, R"("})"));
      }
      ASSERT_TRUE(kafka_->Produce("wiki", p, values).ok());
    }
    produced_ += n;
  }

  v1::SupervisorStatus Status() {
    v1::GetSupervisorStatusRequest request;
    request.set_datasource("wiki");
    v1::GetSupervisorStatusResponse response;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->GetSupervisorStatus(&ctx, request, &response).ok());
    return response.status();
  }

  v1::GetCommitLogResponse CommitLog() {
    v1::GetCommitLogRequest request;
    request.set_datasource("wiki");
    v1::GetCommitLogResponse response;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->GetCommitLog(&ctx, request, &response).ok());
    return response;
  }

  // Committed offset of every partition is `offset`.
  bool CommittedAt(int64_t offset) {
    const v1::GetCommitLogResponse log = CommitLog();
    if (log.committed_offsets().size() != 2) return false;
    for (const auto& [p, o] : log.committed_offsets()) {
      if (o != offset) return false;
    }
    return true;
  }

  // The one task reading, once it read `offset` on both partitions ("" if not).
  std::string ReadingTaskAt(int64_t offset) {
    const v1::SupervisorStatus status = Status();
    if (status.active_groups_size() != 1 || status.active_groups(0).tasks_size() != 1) return "";
    const v1::TaskSummary& task = status.active_groups(0).tasks(0);
    if (task.state() != v1::TASK_STATE_READING) return "";
    for (int32_t p = 0; p < 2; ++p) {
      auto it = task.current_offsets().find(p);
      if (it == task.current_offsets().end() || it->second != offset) return "";
    }
    return task.task_id();
  }

  // Rows committed in all, over every sequence of the commit log.
  int64_t CommittedRows() {
    int64_t rows = 0;
    const v1::GetCommitLogResponse log = CommitLog();
    for (const auto& sequence : log.sequences()) {
      for (const auto& range : sequence.partition_stats()) rows += range.rows();
    }
    return rows;
  }

  v1::SubmitSupervisorResponse Submit(const v1::SupervisorSpec& spec) {
    v1::SubmitSupervisorRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitSupervisorResponse response;
    grpc::ClientContext ctx;
    const grpc::Status status = stub_->SubmitSupervisor(&ctx, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  int produced_ = 0;
  // When the last Produce started (epoch millis).
  int64_t produced_at_ = 0;
};

TEST_F(ClusterSupervisorOpsTest, EarlyHandoffCommitsWhatWasReadWhileTheTaskReadsOn) {
  Submit(Spec());
  Produce(300);
  std::string task;
  ASSERT_TRUE(testing::WaitFor([&] { return !(task = ReadingTaskAt(300)).empty(); },
                               absl::Seconds(30)))
      << Status().DebugString();
  EXPECT_TRUE(CommitLog().sequences().empty());
  // Read to the end: no time lag; the task reports the Kafka time of the
  // last record it read (CreateTime, set by the producer just now).
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        const v1::SupervisorStatus status = Status();
        return status.time_lag_ms().size() == 2 && status.time_lag_ms().at(0) == 0 &&
               status.time_lag_ms().at(1) == 0;
      },
      absl::Seconds(30)))
      << Status().DebugString();
  EXPECT_EQ(Status().max_time_lag_ms(), 0);
  {
    auto worker = v1::TaskService::NewStub(
        grpc::CreateChannel(cluster_->worker().address(), grpc::InsecureChannelCredentials()));
    v1::GetTaskStatusRequest status_request;
    status_request.set_task_id(task);
    v1::GetTaskStatusResponse task_status;
    grpc::ClientContext ctx;
    ASSERT_TRUE(worker->GetTaskStatus(&ctx, status_request, &task_status).ok());
    ASSERT_EQ(task_status.status().last_read_timestamps_ms().size(), 2u);
    for (const auto& [p, time] : task_status.status().last_read_timestamps_ms()) {
      EXPECT_GE(time, produced_at_ - 1) << p;
      EXPECT_LE(time, absl::ToUnixMillis(absl::Now())) << p;
    }
  }

  v1::HandoffTaskGroupsRequest request;
  request.set_datasource("wiki");
  request.add_group_ids(0);
  v1::HandoffTaskGroupsResponse response;
  grpc::ClientContext ctx;
  const grpc::Status handed = stub_->HandoffTaskGroups(&ctx, request, &response);
  ASSERT_TRUE(handed.ok()) << handed.error_message();
  ASSERT_EQ(response.group_ids_size(), 1);
  EXPECT_EQ(response.group_ids(0), 0);

  ASSERT_TRUE(testing::WaitFor([&] { return CommittedAt(300); }, absl::Seconds(30)))
      << CommitLog().DebugString();
  EXPECT_EQ(CommittedRows(), 600);
  ASSERT_EQ(CommitLog().sequences_size(), 1);
  EXPECT_EQ(CommitLog().sequences(0).task_id(), task);
  // The same task reads on into its next sequence.
  Produce(50);
  ASSERT_TRUE(testing::WaitFor([&] { return ReadingTaskAt(350) == task; }, absl::Seconds(30)))
      << Status().DebugString();

  // An unknown group: INVALID_ARGUMENT, nothing done.
  request.set_group_ids(0, 5);
  grpc::ClientContext bad;
  EXPECT_EQ(stub_->HandoffTaskGroups(&bad, request, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// CompactDataSource on a datasource without a compaction config: three
// handed-off sequences' segments of one hour become one segment while the
// task reads on; every committed row is still there once, and the status
// says what was compacted.
TEST_F(ClusterSupervisorOpsTest, CompactDataSourceCompactsOnDemandWhileTheTaskReadsOn) {
  Submit(Spec());
  for (int round = 1; round <= 3; ++round) {
    Produce(100);
    ASSERT_TRUE(testing::WaitFor([&] { return !ReadingTaskAt(100 * round).empty(); },
                                 absl::Seconds(30)))
        << Status().DebugString();
    v1::HandoffTaskGroupsRequest handoff;
    handoff.set_datasource("wiki");
    v1::HandoffTaskGroupsResponse handed;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->HandoffTaskGroups(&ctx, handoff, &handed).ok());
    ASSERT_TRUE(testing::WaitFor([&] { return CommittedAt(100 * round); }, absl::Seconds(30)))
        << CommitLog().DebugString();
  }
  auto used = [&] {
    v1::ListSegmentsRequest request;
    request.set_datasource("wiki");
    v1::ListSegmentsResponse response;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->ListSegments(&ctx, request, &response).ok());
    return std::vector<v1::SegmentDescriptor>(response.segments().begin(),
                                              response.segments().end());
  };
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        for (const auto& s : used()) {
          if (s.handoff_state() != v1::HANDOFF_STATE_HANDED_OFF) return false;
        }
        return true;
      },
      absl::Seconds(30)));
  const std::vector<v1::SegmentDescriptor> before = used();
  ASSERT_EQ(before.size(), 3u);  // one hour, one segment per sequence
  EXPECT_FALSE(Status().compaction().enabled());

  v1::CompactDataSourceRequest request;
  request.set_datasource("wiki");
  v1::CompactDataSourceResponse response;
  {
    grpc::ClientContext ctx;
    const grpc::Status compacted = stub_->CompactDataSource(&ctx, request, &response);
    ASSERT_TRUE(compacted.ok()) << compacted.error_message();
  }
  ASSERT_EQ(response.queued_size(), 1);
  EXPECT_EQ(response.queued(0).start_ms(), before[0].interval().start_ms());
  ASSERT_TRUE(testing::WaitFor([&] { return Status().compaction().compactions() == 1; },
                               absl::Seconds(30)))
      << Status().compaction().DebugString();
  const std::vector<v1::SegmentDescriptor> after = used();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].provenance().ranges_size(), 6);  // 3 sequences x 2 partitions
  int64_t rows_before = 0;
  for (const auto& s : before) rows_before += s.num_rows();
  EXPECT_LE(after[0].num_rows(), rows_before);  // rollup may combine rows across sequences
  const v1::CompactionStatus compaction = Status().compaction();
  EXPECT_EQ(compaction.segments_replaced(), 3);
  ASSERT_EQ(compaction.recent_size(), 1);
  EXPECT_EQ(compaction.recent(0).input_segments(), 3);
  EXPECT_EQ(compaction.last_error(), "");

  // The task read on meanwhile; a fourth sequence appends beside the
  // compacted segment.
  Produce(10);
  ASSERT_TRUE(testing::WaitFor([&] { return !ReadingTaskAt(310).empty(); }, absl::Seconds(30)));
  // Nothing left to compact, and a bad interval or datasource is refused.
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->CompactDataSource(&ctx, request, &response).ok());
    EXPECT_EQ(response.queued_size(), 0);
  }
  request.mutable_interval()->set_start_ms(10);
  request.mutable_interval()->set_end_ms(5);
  {
    grpc::ClientContext ctx;
    EXPECT_EQ(stub_->CompactDataSource(&ctx, request, &response).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  request.clear_interval();
  request.set_datasource("nope");
  {
    grpc::ClientContext ctx;
    EXPECT_EQ(stub_->CompactDataSource(&ctx, request, &response).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
}

TEST_F(ClusterSupervisorOpsTest, AStillStreamGoesIdleAndNewRecordsWakeIt) {
  v1::SupervisorSpec spec = Spec();
  spec.mutable_io_config()->mutable_idle_config()->set_enabled(true);
  spec.mutable_io_config()->mutable_idle_config()->set_inactive_after_millis(1000);
  Submit(spec);
  Produce(200);
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        const v1::SupervisorStatus status = Status();
        return status.state() == v1::SUPERVISOR_STATE_IDLE && status.active_groups().empty() &&
               status.publishing_groups().empty();
      },
      absl::Seconds(60)))
      << Status().DebugString();
  EXPECT_TRUE(Status().healthy());
  EXPECT_TRUE(CommittedAt(200)) << CommitLog().DebugString();
  EXPECT_EQ(CommittedRows(), 400);
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Status().state(), v1::SUPERVISOR_STATE_IDLE) << "a still stream stays idle";
  EXPECT_EQ(PlacedTasks("wiki"), 0);

  Produce(100);
  ASSERT_TRUE(testing::WaitFor([&] { return Status().active_groups_size() == 1; },
                               absl::Seconds(30)))
      << Status().DebugString();
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Status().state() == v1::SUPERVISOR_STATE_IDLE && CommittedAt(300); },
      absl::Seconds(60)))
      << Status().DebugString() << CommitLog().DebugString();
  EXPECT_EQ(CommittedRows(), 600) << "every record once";
}

TEST_F(ClusterSupervisorOpsTest, ALiveChangeKeepsTheTaskAndASchemaChangeRestartsIt) {
  Submit(Spec());
  Produce(100);
  std::string task;
  ASSERT_TRUE(testing::WaitFor([&] { return !(task = ReadingTaskAt(100)).empty(); },
                               absl::Seconds(30)))
      << Status().DebugString();

  v1::SupervisorSpec live = Spec();
  live.mutable_tuning_config()->set_max_rows_per_segment(1000000);
  live.mutable_io_config()->set_task_duration("PT2H");
  v1::SubmitSupervisorResponse response = Submit(live);
  EXPECT_EQ(response.update(), v1::SPEC_UPDATE_APPLIED_LIVE);
  EXPECT_EQ(std::vector<std::string>(response.changed_fields().begin(),
                                     response.changed_fields().end()),
            (std::vector<std::string>{"ioConfig.taskDuration", "tuningConfig.maxRowsPerSegment"}));
  EXPECT_EQ(Submit(live).update(), v1::SPEC_UPDATE_UNCHANGED);
  Produce(20);
  ASSERT_TRUE(testing::WaitFor([&] { return ReadingTaskAt(120) == task; }, absl::Seconds(30)))
      << "the task read on: " << Status().DebugString();

  v1::SupervisorSpec schema = live;
  v1::MetricSpec* metric = schema.mutable_data_schema()->add_metrics_spec();
  metric->set_type("longSum");
  metric->set_name("n");
  response = Submit(schema);
  EXPECT_EQ(response.update(), v1::SPEC_UPDATE_RESTARTED);
  EXPECT_TRUE(response.replaced());
  // The old task published what it read; a new one reads on.
  ASSERT_TRUE(testing::WaitFor([&] { return CommittedAt(120); }, absl::Seconds(30)))
      << CommitLog().DebugString();
  Produce(10);
  std::string next;
  ASSERT_TRUE(testing::WaitFor([&] { return !(next = ReadingTaskAt(130)).empty(); },
                               absl::Seconds(30)))
      << Status().DebugString();
  EXPECT_NE(next, task);
}

TEST_F(ClusterSupervisorOpsTest, TheAutoscalerScalesOutWhenTasksFallBehindAndInWhenCaughtUp) {
  v1::SupervisorSpec spec = Spec();
  spec.mutable_io_config()->set_task_duration("PT8S");  // the scale-in's roll-over
  // Kafka metadata queries get a period each (0.1 s is tight while records
  // keep arriving on this 2-core machine).
  spec.mutable_io_config()->set_period("PT0.5S");
  v1::AutoScalerConfig* c = spec.mutable_io_config()->mutable_auto_scaler_config();
  c->set_enable_task_auto_scaler(true);
  c->set_task_count_min(1);
  c->set_task_count_max(2);
  c->set_lag_collection_interval_millis(100);
  c->set_lag_collection_range_millis(2000);
  c->set_scale_out_threshold(100);
  c->set_trigger_scale_out_fraction_threshold(0.5);
  c->set_scale_in_threshold(0);
  c->set_trigger_scale_in_fraction_threshold(0.9);
  c->set_scale_action_start_delay_millis(0);
  c->set_scale_action_period_millis(100);
  c->set_min_trigger_scale_action_frequency_millis(2000);
  // A slow consumer: each batch a task reads costs 300 ms more, while
  // records keep arriving at ~200/s per partition.
  ASSERT_TRUE(ConfigureFaultPoints("task.while_reading=delay:300@*").ok());
  Submit(spec);
  ASSERT_TRUE(testing::WaitFor([&] { return Status().active_groups_size() == 1; },
                               absl::Seconds(30)));
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (Status().auto_scaler().task_count() < 2 && absl::Now() < give_up) {
    Produce(20);
    absl::SleepFor(absl::Milliseconds(100));
  }
  ConfigureFaultPoints("").IgnoreError();
  v1::SupervisorStatus status = Status();
  ASSERT_EQ(status.auto_scaler().task_count(), 2) << status.DebugString();
  EXPECT_EQ(status.auto_scaler().last_decision().from_task_count(), 1);
  EXPECT_NE(status.auto_scaler().last_decision().reason().find("scale out"), std::string::npos);
  ASSERT_TRUE(testing::WaitFor([&] { return Status().active_groups_size() == 2; },
                               absl::Seconds(30)))
      << Status().DebugString();

  // Caught up (lag 0): a scale-in after the cooldown, at a roll-over.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        const v1::SupervisorStatus s = Status();
        return s.auto_scaler().task_count() == 1 && s.active_groups_size() == 1;
      },
      absl::Seconds(60)))
      << Status().DebugString();
  const v1::GetCommitLogResponse log = CommitLog();
  ASSERT_EQ(log.scaling_decisions_size(), 2) << log.DebugString();
  EXPECT_EQ(log.scaling_decisions(0).to_task_count(), 2);
  EXPECT_EQ(log.scaling_decisions(1).to_task_count(), 1);
  EXPECT_LE(log.scaling_decisions(1).decided_at_ms(), log.scaling_decisions(1).applied_at_ms());
  ASSERT_TRUE(testing::WaitFor([&] { return CommittedAt(produced_); }, absl::Seconds(60)))
      << CommitLog().DebugString();
  EXPECT_EQ(CommittedRows(), 2 * produced_) << "every record once";
  EXPECT_TRUE(Status().healthy());
}

}  // namespace
}  // namespace sluice
