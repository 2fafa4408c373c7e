// In-process: a mock Kafka cluster, the scripted fake supervisor and a task
// worker on loopback. A single task with small limits checkpoints several
// times and publishes its sequences in order, with the right offsets, while
// it keeps reading.
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/spec.h"
#include "tests/task_cluster.h"

namespace sluice::testing {
namespace {

using ::sluice::OffsetMap;

class TaskIngestTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(c_.Start(/*auto_checkpoint=*/true).ok()); }
  TaskCluster c_;
};

TEST_F(TaskIngestTest, PublishesSeveralSequencesInOrderWhileStillReading) {
  const std::string task_id = std::string(kTestBase) + "_0000aaaa";
  SpecOptions spec = c_.Spec(task_id);
  spec.max_rows_per_segment = 40;  // two hourly segments per sequence: ~80 records
  spec.max_rows_in_memory = 15;
  c_.supervisor->AddTask(0, task_id);
  ASSERT_TRUE(c_.Produce(0, 120).ok());
  ASSERT_TRUE(c_.Produce(1, 120).ok());
  auto run = c_.client->RunTask(MakeSpec(spec));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->already_running());

  // Sequences get published while the task is still reading (no final end).
  ASSERT_TRUE(WaitFor([&] { return c_.supervisor->CommitLog().size() >= 2; }, absl::Seconds(30)))
      << c_.supervisor->CommitLog().size() << " sequence(s) committed";
  auto status = c_.client->Status(task_id);
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(status->state() == v1::TASK_STATE_READING || status->state() == v1::TASK_STATE_PAUSED)
      << v1::TaskState_Name(status->state());
  EXPECT_EQ(FromProto(status->end_offsets()),
            (OffsetMap{{0, kEndOfPartition}, {1, kEndOfPartition}}));

  ASSERT_TRUE(c_.Produce(0, 80).ok());
  ASSERT_TRUE(c_.Produce(1, 80).ok());
  ASSERT_TRUE(c_.WaitUntilRead(task_id, {{0, 200}, {1, 200}}).ok());
  auto end = c_.supervisor->Finish(0, absl::Seconds(20));
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(*end, (OffsetMap{{0, 200}, {1, 200}}));
  auto final_status = c_.WaitUntilFinal(task_id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  ASSERT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();

  const absl::Status verified =
      VerifyExactlyOnce(*c_.supervisor, c_.deep.get(), kTestBase, c_.produced, {{0, 0}, {1, 0}},
                        {{0, 200}, {1, 200}});
  EXPECT_TRUE(verified.ok()) << verified;
  const auto log = c_.supervisor->CommitLog();
  EXPECT_GE(log.size(), 4u);
  // Sequence i was closed at checkpoint i+1 of the group.
  const auto checkpoints = c_.supervisor->Checkpoints(0);
  for (size_t i = 0; i + 1 < log.size() && i + 1 < checkpoints.size(); ++i) {
    EXPECT_EQ(log[i].sequence_name(), std::string(kTestBase) + "_" + std::to_string(i));
    EXPECT_EQ(FromProto(log[i].end_offsets()), checkpoints[i + 1].second);
  }
  // Every sequence but possibly the last got a segment in both hours.
  for (size_t i = 0; i + 1 < log.size(); ++i) EXPECT_EQ(log[i].segment_ids_size(), 2) << i;
  const v1::RowStats& stats = final_status->row_stats();
  EXPECT_EQ(stats.processed(), 400);
  EXPECT_EQ(stats.sequences_published(), static_cast<int64_t>(log.size()));
  EXPECT_EQ(stats.segments_published(), static_cast<int64_t>(c_.supervisor->Segments().size()));
  EXPECT_GE(stats.persists(), 400 / 15);
  EXPECT_EQ(stats.checkpoints(), static_cast<int64_t>(log.size()));
  // Local files are dropped after handoff.
  EXPECT_FALSE(PathExists(c_.dir + "/worker/tasks/" + task_id + "/spills"));
  // The worker reported the final state.
  EXPECT_TRUE(WaitFor(
      [&] {
        auto reported = c_.supervisor->LastStatus(task_id);
        return reported.ok() && reported->state() == v1::TASK_STATE_SUCCESS;
      },
      absl::Seconds(5)));
}

TEST_F(TaskIngestTest, LostPublishAnswerIsRecognisedAndThePublishedCopyIsKept) {
  const std::string task_id = std::string(kTestBase) + "_0000bbbb";
  SpecOptions spec = c_.Spec(task_id);
  spec.max_rows_per_segment = 30;
  c_.supervisor->AddTask(0, task_id);
  c_.supervisor->LosePublishAnswers(1);
  ASSERT_TRUE(c_.Produce(0, 50).ok());
  ASSERT_TRUE(c_.Produce(1, 50).ok());
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(c_.WaitUntilRead(task_id, {{0, 50}, {1, 50}}).ok());
  ASSERT_TRUE(c_.supervisor->Finish(0, absl::Seconds(20)).ok());
  auto final_status = c_.WaitUntilFinal(task_id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  ASSERT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
  // The retried publish was rejected (the offsets had moved), and the task
  // found its own segments committed.
  EXPECT_GE(c_.supervisor->publish_aborted(), 1);
  const absl::Status verified = VerifyExactlyOnce(
      *c_.supervisor, c_.deep.get(), kTestBase, c_.produced, {{0, 0}, {1, 0}}, {{0, 50}, {1, 50}});
  EXPECT_TRUE(verified.ok()) << verified;
  for (const v1::SegmentDescriptor& d : c_.supervisor->Segments()) {
    EXPECT_TRUE(c_.deep->Stat(d.path()).ok()) << d.path() << " was deleted";
  }
}

TEST_F(TaskIngestTest, OffsetOutOfRangeIsReportedAndReadingResumesWhenTheDataArrives) {
  const std::string task_id = std::string(kTestBase) + "_0000cccc";
  SpecOptions spec = c_.Spec(task_id);
  spec.start = {{0, 30}, {1, 0}};
  c_.supervisor->SetStoredOffsets({{0, 30}, {1, 0}});
  c_.supervisor->AddGroup(0, kTestBase, {{0, 30}, {1, 0}});
  c_.supervisor->AddTask(0, task_id);
  ASSERT_TRUE(c_.Produce(0, 10).ok());  // offset 30 is past the end of partition 0
  ASSERT_TRUE(c_.Produce(1, 10).ok());
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(WaitFor([&] { return !c_.supervisor->OffsetOutOfRangeReports().empty(); },
                      absl::Seconds(20)));
  const auto report = c_.supervisor->OffsetOutOfRangeReports().front();
  EXPECT_EQ(report.task_id(), task_id);
  EXPECT_EQ(report.offsets().at(0), 30);
  EXPECT_EQ(report.earliest_offsets().at(0), 0);
  auto status = c_.client->Status(task_id);
  ASSERT_TRUE(status.ok());
  EXPECT_NE(status->error().find("out of range"), std::string::npos) << status->error();
  // Partition 1 is read meanwhile; partition 0 waits.
  ASSERT_TRUE(c_.WaitUntilRead(task_id, {{0, 30}, {1, 10}}).ok());
  ASSERT_TRUE(c_.Produce(0, 25).ok());  // offsets 10..34: 30 becomes readable
  ASSERT_TRUE(c_.WaitUntilRead(task_id, {{0, 35}, {1, 10}}).ok());
  ASSERT_TRUE(c_.supervisor->Finish(0, absl::Seconds(20)).ok());
  auto final_status = c_.WaitUntilFinal(task_id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  ASSERT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
  const absl::Status verified = VerifyExactlyOnce(
      *c_.supervisor, c_.deep.get(), kTestBase, c_.produced, {{0, 30}, {1, 0}}, {{0, 35}, {1, 10}});
  EXPECT_TRUE(verified.ok()) << verified;
}

class TaskHandoffTimeoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(c_.Start(/*auto_checkpoint=*/true, /*capacity=*/4, /*hand_off=*/false).ok());
  }
  TaskCluster c_;
};

TEST_F(TaskHandoffTimeoutTest, AHandoffThatNeverCompletesIsAnAlertNotAFailure) {
  const std::string task_id = std::string(kTestBase) + "_0000dddd";
  SpecOptions spec = c_.Spec(task_id);
  spec.handoff_condition_timeout = "PT0.5S";
  c_.supervisor->AddTask(0, task_id);
  ASSERT_TRUE(c_.Produce(0, 20).ok());
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(c_.WaitUntilRead(task_id, {{0, 20}, {1, 0}}).ok());
  ASSERT_TRUE(c_.supervisor->Finish(0, absl::Seconds(20)).ok());
  auto final_status = c_.WaitUntilFinal(task_id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  EXPECT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
  EXPECT_EQ(c_.supervisor->CommitLog().size(), 1u);
}

}  // namespace
}  // namespace sluice::testing
