// CheckpointTriggers with the real TaskControl, SequenceStore and
// RecordRouter; a supervisor that records the checkpoint requests. Each
// trigger fires at its threshold and not one row (or second) before.
#include "task/checkpoint_triggers.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"
#include "common/metrics/registry.h"
#include "task/testing/unimplemented_supervisor_client.h"

namespace sluice::task {
namespace {

class RecordingSupervisor : public testing::UnimplementedSupervisorClient {
 public:
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> CheckpointDataSourceMetadata(
      const v1::CheckpointDataSourceMetadataRequest& request) override {
    absl::MutexLock lock(&mu_);
    requests_.push_back(request);
    v1::CheckpointDataSourceMetadataResponse response;
    response.set_accepted(true);
    return response;
  }
  std::vector<v1::CheckpointDataSourceMetadataRequest> requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<v1::CheckpointDataSourceMetadataRequest> requests_ ABSL_GUARDED_BY(mu_);
};

class CheckpointTriggersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir =
        absl::StrCat(::testing::TempDir(), "/checkpoint_triggers_test_",
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir).ok());
    ASSERT_TRUE(MakeDirs(dir).ok());
    store_ = std::make_unique<SequenceStore>(dir + "/sequences.json", "wiki",
                                             std::vector<int32_t>{0});
    spec_.set_datasource("wiki");
    spec_.set_task_id("t1");
    spec_.set_group_id(3);
    spec_.set_base_sequence_name("wiki");
    settings_.partitions = {0};
    settings_.tuning.set_max_rows_per_segment(10);
    settings_.tuning.set_max_total_rows(20);
    settings_.timings.intermediate_handoff_period = absl::InfiniteDuration();
  }

  // Sequence 0 from offset 100 (open); with `closed_at`, sequence 0 ends
  // there and sequence 1, the open latest one, starts.
  void Load(int64_t closed_at = -1) {
    std::vector<std::pair<int32_t, OffsetMap>> checkpoints = {{0, {{0, 100}}}};
    if (closed_at >= 0) checkpoints.push_back({1, {{0, closed_at}}});
    ASSERT_TRUE(store_->Load(checkpoints).ok());
    TaskControlOptions options;
    options.task_id = "t1";
    options.log_prefix = "[task t1]";
    options.self_resume_after = absl::InfiniteDuration();
    options.checkpoint_retry_period = absl::Hours(1);  // asks once
    options.sequences = store_.get();
    control_ = std::make_unique<TaskControl>(std::move(options));
    control_->SetState(v1::TASK_STATE_READING);
    router_.Refresh(store_->Snapshot());
  }

  std::unique_ptr<CheckpointTriggers> Make(double early_fraction) {
    CheckpointTriggersOptions options;
    options.spec = &spec_;
    options.settings = &settings_;
    options.router = &router_;
    options.control = control_.get();
    options.supervisor = &supervisor_;
    options.metrics = metrics_;
    options.early_checkpoint_fraction = early_fraction;
    options.notify = [] {};
    auto triggers = std::make_unique<CheckpointTriggers>(std::move(options));
    triggers->RestartPeriod();
    return triggers;
  }

  // A checkpoint is asked for (reading on, or parking).
  bool Asked() const {
    v1::TaskStatus status;
    control_->FillStatus({}, &status);
    return status.awaiting_checkpoint();
  }
  // The loop is to park (a full trigger).
  bool Parks() const { return control_->interrupted(); }
  uint64_t Checkpoints() const { return metrics_.checkpoints->Value(); }

  v1::TaskSpec spec_;
  TaskSettings settings_;
  std::unique_ptr<SequenceStore> store_;
  std::unique_ptr<TaskControl> control_;
  RecordRouter router_{std::vector<int32_t>{0}};
  RecordingSupervisor supervisor_;
  metrics::Registry registry_;  // this test's own series
  const TaskMetrics metrics_ = TaskMetrics::For(&registry_, "wiki");
};

TEST_F(CheckpointTriggersTest, ASegmentAtMaxRowsPerSegmentParks) {
  Load();
  auto triggers = Make(/*early_fraction=*/1.0);  // no early trigger
  triggers->OnRow(0, 9, 9);
  EXPECT_FALSE(Asked());
  EXPECT_FALSE(Parks());
  triggers->OnRow(0, 10, 10);
  EXPECT_TRUE(Asked());
  EXPECT_TRUE(Parks());
  EXPECT_EQ(Checkpoints(), 1u);
}

TEST_F(CheckpointTriggersTest, ASequenceAtMaxTotalRowsParks) {
  Load();
  auto triggers = Make(/*early_fraction=*/1.0);
  // Many segments of few rows each: the sequence's total counts.
  triggers->OnRow(0, 1, 19);
  EXPECT_FALSE(Asked());
  EXPECT_FALSE(Parks());
  triggers->OnRow(0, 1, 20);
  EXPECT_TRUE(Asked());
  EXPECT_TRUE(Parks());
  EXPECT_EQ(Checkpoints(), 1u);
}

// At --early_checkpoint_fraction of a limit the checkpoint is asked for
// while reading on (the supervisor is asked by AskIfDue, once); the loop
// parks only once the limit itself is reached.
TEST_F(CheckpointTriggersTest, EarlyAtTheFractionReadsOnAndParksAtTheLimit) {
  Load();
  auto triggers = Make(/*early_fraction=*/0.9);
  triggers->OnRow(0, 8, 8);
  triggers->AskIfDue();
  EXPECT_FALSE(Asked());
  EXPECT_TRUE(supervisor_.requests().empty());
  triggers->OnRow(0, 9, 9);  // 0.9 * maxRowsPerSegment
  EXPECT_TRUE(Asked());
  EXPECT_FALSE(Parks());
  triggers->AskIfDue();
  const std::vector<v1::CheckpointDataSourceMetadataRequest> asked = supervisor_.requests();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].datasource(), "wiki");
  EXPECT_EQ(asked[0].task_id(), "t1");
  EXPECT_EQ(asked[0].group_id(), 3);
  EXPECT_EQ(asked[0].base_sequence_name(), "wiki");
  EXPECT_EQ(asked[0].sequence_id(), 0);
  EXPECT_EQ(asked[0].start_offsets().at(0), 100);
  triggers->OnRow(0, 9, 9);
  EXPECT_FALSE(Parks());
  triggers->OnRow(0, 10, 10);  // full: parks, still the one checkpoint
  EXPECT_TRUE(Parks());
  EXPECT_EQ(Checkpoints(), 1u);
}

TEST_F(CheckpointTriggersTest, EarlyAtTheFractionOfMaxTotalRows) {
  Load();
  auto triggers = Make(/*early_fraction=*/0.9);
  triggers->OnRow(0, 1, 17);
  EXPECT_FALSE(Asked());
  triggers->OnRow(0, 1, 18);  // 0.9 * maxTotalRows
  EXPECT_TRUE(Asked());
  EXPECT_FALSE(Parks());
  triggers->OnRow(0, 1, 20);
  EXPECT_TRUE(Parks());
}

// The triggers concern the open latest sequence only: rows of a sequence
// whose end offsets are set never ask.
TEST_F(CheckpointTriggersTest, OnlyTheOpenLatestSequenceTriggers) {
  Load(/*closed_at=*/150);
  ASSERT_EQ(router_.route_count(), 2);
  auto triggers = Make(/*early_fraction=*/0.9);
  triggers->OnRow(0, 100, 100);
  EXPECT_FALSE(Asked());
  EXPECT_FALSE(Parks());
  triggers->OnRow(1, 10, 10);
  EXPECT_TRUE(Asked());
  EXPECT_TRUE(Parks());
}

TEST_F(CheckpointTriggersTest, IntermediateHandoffPeriodAsksOncePerPeriod) {
  settings_.timings.intermediate_handoff_period = absl::Hours(1);
  Load();
  const absl::Time start = absl::Now();
  auto triggers = Make(/*early_fraction=*/1.0);  // the period parks
  triggers->OnTime(start + absl::Hours(1) - absl::Seconds(1));
  EXPECT_FALSE(Asked());
  triggers->OnTime(absl::Now() + absl::Hours(1));
  EXPECT_TRUE(Asked());
  EXPECT_TRUE(Parks());
  EXPECT_EQ(Checkpoints(), 1u);
}

TEST_F(CheckpointTriggersTest, WithEarlyCheckpointsThePeriodDoesNotPark) {
  settings_.timings.intermediate_handoff_period = absl::Hours(1);
  Load();
  const absl::Time start = absl::Now();
  auto triggers = Make(/*early_fraction=*/0.9);
  triggers->OnTime(start + absl::Hours(1) - absl::Seconds(1));
  EXPECT_FALSE(Asked());
  triggers->OnTime(absl::Now() + absl::Hours(1));
  EXPECT_TRUE(Asked());
  EXPECT_FALSE(Parks());
}

// A full trigger parks the loop until the end offsets come; the park asks
// the supervisor and records how long the checkpoint took.
TEST_F(CheckpointTriggersTest, ParkWaitsForTheEndOffsetsAndTimesTheCheckpoint) {
  Load();
  auto triggers = Make(/*early_fraction=*/1.0);
  EXPECT_FALSE(triggers->Park());  // nothing requested: no park
  control_->PublishProgress({{0, 110}}, v1::RowStats());
  triggers->OnRow(0, 10, 10);
  ASSERT_TRUE(Parks());
  bool parked = false;
  std::thread loop([&] { parked = triggers->Park(); });
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (control_->state() != v1::TASK_STATE_PAUSED && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(control_->state(), v1::TASK_STATE_PAUSED);
  ASSERT_TRUE(control_->SetEndOffsets({{0, 110}}, false).ok());
  loop.join();
  EXPECT_TRUE(parked);
  ASSERT_EQ(supervisor_.requests().size(), 1u);
  EXPECT_EQ(supervisor_.requests()[0].sequence_id(), 0);
  EXPECT_EQ(metrics_.checkpoint_seconds->Read().count, 1u);
  EXPECT_FALSE(Asked());
  EXPECT_FALSE(Parks());
}

}  // namespace
}  // namespace sluice::task
