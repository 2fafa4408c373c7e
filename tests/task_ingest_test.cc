// In-process: a mock Kafka cluster, the scripted fake supervisor and a task
// worker on loopback. A single task with small limits checkpoints several
// times and publishes its sequences in order, with the right offsets, while
// it keeps reading.
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/spec.h"
#include "task/worker_server.h"
#include "tests/task_fake_supervisor.h"
#include "tests/task_mock_kafka.h"
#include "tests/task_test_util.h"

namespace sluice::testing {
namespace {

using task::OffsetMap;

constexpr char kBase[] = "wiki_00112233aabbccdd";

class TaskIngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("task_ingest");
    ASSERT_FALSE(dir_.empty());
    auto kafka = MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    ASSERT_TRUE(kafka_->CreateTopic("wiki", 2).ok());
    auto deep = OpenDeepStorage("file://" + dir_ + "/deep");
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = std::move(*deep);
  }

  void StartCluster(bool auto_checkpoint) {
    FakeSupervisorOptions fake;
    fake.datasource = "wiki";
    fake.deep_storage = deep_.get();
    fake.auto_checkpoint = auto_checkpoint;
    auto supervisor = FakeSupervisor::Start(fake);
    ASSERT_TRUE(supervisor.ok()) << supervisor.status();
    supervisor_ = std::move(*supervisor);
    supervisor_->SetStoredOffsets({{0, 0}, {1, 0}});
    supervisor_->AddGroup(0, kBase, {{0, 0}, {1, 0}});

    task::WorkerServerOptions options;
    options.data_dir = dir_ + "/worker";
    options.supervisor_address = supervisor_->address();
    options.deep_storage_uri = "file://" + dir_ + "/deep";
    options.worker_id = "worker-0";
    options.heartbeat_interval = absl::Milliseconds(100);
    options.knobs.handoff_poll_interval = absl::Milliseconds(50);
    options.knobs.min_backoff = absl::Milliseconds(20);
    options.knobs.max_backoff = absl::Milliseconds(200);
    options.knobs.offset_out_of_range_retry = absl::Milliseconds(100);
    auto worker = task::WorkerServer::Start(options);
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    client_ = std::make_unique<TaskClient>(worker_->address());
  }

  void TearDown() override {
    worker_.reset();
    supervisor_.reset();
    kafka_.reset();
    deep_.reset();
    ASSERT_TRUE(RemoveAll(dir_).ok());
  }

  void Produce(int32_t partition, int64_t count) {
    std::vector<std::string> values;
    std::vector<std::string>& all = produced_[partition];
    for (int64_t i = 0; i < count; ++i) {
      values.push_back(Record(partition, static_cast<int64_t>(all.size())));
      all.push_back(values.back());
    }
    auto first = kafka_->Produce("wiki", partition, values);
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_EQ(*first, static_cast<int64_t>(all.size()) - count);
  }

  SpecOptions Spec(const std::string& task_id) {
    SpecOptions spec;
    spec.task_id = task_id;
    spec.base_sequence_name = kBase;
    spec.bootstrap = kafka_->bootstrap();
    spec.start = {{0, 0}, {1, 0}};
    return spec;
  }

  // Waits until the task read `offsets` (everything produced).
  void WaitUntilRead(const std::string& task_id, const OffsetMap& offsets) {
    OffsetMap seen;
    ASSERT_TRUE(WaitFor(
        [&] {
          auto current = client_->CurrentOffsets(task_id);
          if (current.ok()) seen = *current;
          return current.ok() && *current == offsets;
        },
        absl::Seconds(30)))
        << "read " << task::OffsetsToString(seen) << ", want " << task::OffsetsToString(offsets);
  }

  v1::TaskStatus WaitUntilFinal(const std::string& task_id) {
    v1::TaskStatus last;
    EXPECT_TRUE(WaitFor(
        [&] {
          auto status = client_->Status(task_id);
          if (status.ok()) last = *status;
          return status.ok() && (last.state() == v1::SUCCESS || last.state() == v1::FAILED ||
                                 last.state() == v1::STOPPED);
        },
        absl::Seconds(30)))
        << last.DebugString();
    return last;
  }

  std::string dir_;
  std::unique_ptr<MockKafka> kafka_;
  std::unique_ptr<DeepStorage> deep_;
  std::unique_ptr<FakeSupervisor> supervisor_;
  std::unique_ptr<task::WorkerServer> worker_;
  std::unique_ptr<TaskClient> client_;
  Produced produced_;
};

TEST_F(TaskIngestTest, PublishesSeveralSequencesInOrderWhileStillReading) {
  StartCluster(/*auto_checkpoint=*/true);
  const std::string task_id = std::string(kBase) + "_0000aaaa";
  SpecOptions spec = Spec(task_id);
  spec.max_rows_per_segment = 40;  // two hourly segments per sequence: ~80 records
  spec.max_rows_in_memory = 15;
  supervisor_->AddTask(0, task_id);
  Produce(0, 120);
  Produce(1, 120);
  auto run = client_->RunTask(MakeSpec(spec));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->already_running());

  // Sequences get published while the task is still reading (no final end).
  ASSERT_TRUE(WaitFor([&] { return supervisor_->CommitLog().size() >= 2; }, absl::Seconds(30)))
      << supervisor_->CommitLog().size() << " sequence(s) committed";
  auto status = client_->Status(task_id);
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(status->state() == v1::READING || status->state() == v1::PAUSED)
      << v1::TaskState_Name(status->state());
  EXPECT_EQ(task::FromProtoMap(status->end_offsets()),
            (OffsetMap{{0, kEndOfPartition}, {1, kEndOfPartition}}));

  Produce(0, 80);
  Produce(1, 80);
  WaitUntilRead(task_id, {{0, 200}, {1, 200}});
  auto end = supervisor_->Finish(0, absl::Seconds(20));
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(*end, (OffsetMap{{0, 200}, {1, 200}}));
  const v1::TaskStatus final_status = WaitUntilFinal(task_id);
  ASSERT_EQ(final_status.state(), v1::SUCCESS) << final_status.error();

  EXPECT_TRUE(VerifyExactlyOnce(*supervisor_, deep_.get(), kBase, produced_, {{0, 0}, {1, 0}},
                                {{0, 200}, {1, 200}})
                  .ok())
      << VerifyExactlyOnce(*supervisor_, deep_.get(), kBase, produced_, {{0, 0}, {1, 0}},
                           {{0, 200}, {1, 200}});
  const auto log = supervisor_->CommitLog();
  EXPECT_GE(log.size(), 4u);
  // Sequence i was closed at checkpoint i+1 of the group.
  const auto checkpoints = supervisor_->Checkpoints(0);
  for (size_t i = 0; i + 1 < log.size() && i + 1 < checkpoints.size(); ++i) {
    EXPECT_EQ(log[i].sequence_name(), std::string(kBase) + "_" + std::to_string(i));
    EXPECT_EQ(task::FromProtoMap(log[i].end_offsets()), checkpoints[i + 1].second);
  }
  // Every sequence but possibly the last got a segment in both hours.
  for (size_t i = 0; i + 1 < log.size(); ++i) EXPECT_EQ(log[i].segment_ids_size(), 2) << i;
  EXPECT_EQ(final_status.row_stats().processed(), 400);
  EXPECT_EQ(final_status.row_stats().sequences_published(), static_cast<int64_t>(log.size()));
  EXPECT_EQ(final_status.row_stats().segments_published(),
            static_cast<int64_t>(supervisor_->Segments().size()));
  EXPECT_GE(final_status.row_stats().persists(), 400 / 15);
  EXPECT_EQ(final_status.row_stats().checkpoints(), static_cast<int64_t>(log.size()));
  // Local files are dropped after handoff.
  EXPECT_FALSE(PathExists(dir_ + "/worker/tasks/" + task_id + "/spills"));
  // The worker reported the final state.
  EXPECT_TRUE(WaitFor(
      [&] {
        auto reported = supervisor_->LastStatus(task_id);
        return reported.ok() && reported->state() == v1::SUCCESS;
      },
      absl::Seconds(5)));
}

TEST_F(TaskIngestTest, LostPublishAnswerIsRecognisedAndThePublishedCopyIsKept) {
  StartCluster(/*auto_checkpoint=*/true);
  const std::string task_id = std::string(kBase) + "_0000bbbb";
  SpecOptions spec = Spec(task_id);
  spec.max_rows_per_segment = 30;
  supervisor_->AddTask(0, task_id);
  supervisor_->LosePublishAnswers(1);
  Produce(0, 50);
  Produce(1, 50);
  ASSERT_TRUE(client_->RunTask(MakeSpec(spec)).ok());
  WaitUntilRead(task_id, {{0, 50}, {1, 50}});
  ASSERT_TRUE(supervisor_->Finish(0, absl::Seconds(20)).ok());
  const v1::TaskStatus final_status = WaitUntilFinal(task_id);
  ASSERT_EQ(final_status.state(), v1::SUCCESS) << final_status.error();
  // The retried publish was rejected (the offsets had moved), and the task
  // found its own segments committed.
  EXPECT_GE(supervisor_->publish_aborted(), 1);
  const absl::Status verified = VerifyExactlyOnce(*supervisor_, deep_.get(), kBase, produced_,
                                                  {{0, 0}, {1, 0}}, {{0, 50}, {1, 50}});
  EXPECT_TRUE(verified.ok()) << verified;
  for (const v1::SegmentDescriptor& d : supervisor_->Segments()) {
    EXPECT_TRUE(deep_->Stat(d.path()).ok()) << d.path() << " was deleted";
  }
}

TEST_F(TaskIngestTest, OffsetOutOfRangeIsReportedAndReadingResumesWhenTheDataArrives) {
  StartCluster(/*auto_checkpoint=*/true);
  const std::string task_id = std::string(kBase) + "_0000cccc";
  SpecOptions spec = Spec(task_id);
  spec.start = {{0, 30}, {1, 0}};
  supervisor_->SetStoredOffsets({{0, 30}, {1, 0}});
  supervisor_->AddGroup(0, kBase, {{0, 30}, {1, 0}});
  supervisor_->AddTask(0, task_id);
  Produce(0, 10);  // offset 30 is past the end of partition 0
  Produce(1, 10);
  ASSERT_TRUE(client_->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(WaitFor([&] { return !supervisor_->OffsetOutOfRangeReports().empty(); },
                      absl::Seconds(20)));
  const auto report = supervisor_->OffsetOutOfRangeReports().front();
  EXPECT_EQ(report.task_id(), task_id);
  EXPECT_EQ(report.offsets().at(0), 30);
  EXPECT_EQ(report.earliest_offsets().at(0), 0);
  auto status = client_->Status(task_id);
  ASSERT_TRUE(status.ok());
  EXPECT_NE(status->error().find("out of range"), std::string::npos) << status->error();
  // Partition 1 was read meanwhile; partition 0 waits.
  WaitUntilRead(task_id, {{0, 30}, {1, 10}});
  Produce(0, 25);  // offsets 10..34: 30 becomes readable
  WaitUntilRead(task_id, {{0, 35}, {1, 10}});
  ASSERT_TRUE(supervisor_->Finish(0, absl::Seconds(20)).ok());
  const v1::TaskStatus final_status = WaitUntilFinal(task_id);
  ASSERT_EQ(final_status.state(), v1::SUCCESS) << final_status.error();
  const absl::Status verified = VerifyExactlyOnce(*supervisor_, deep_.get(), kBase, produced_,
                                                  {{0, 30}, {1, 0}}, {{0, 35}, {1, 10}});
  EXPECT_TRUE(verified.ok()) << verified;
}

}  // namespace
}  // namespace sluice::testing
