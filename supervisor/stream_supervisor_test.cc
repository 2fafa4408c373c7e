// The stream supervisor's protocol with scripted task workers over real gRPC:
// group creation and placement, checkpoint rounds (latest vs earlier
// sequence, a replica that never pauses, one that rejects SetEndOffsets,
// duplicate requests), roll-over and the completion timeout on a fake clock.
#include "supervisor/stream_supervisor.h"

#include <gtest/gtest.h>

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/metrics/catalog.h"
#include "supervisor/naming.h"
#include "supervisor/testing/manager_harness.h"

namespace sluice::supervisor {
namespace {

using testing::FakeTaskWorker;
using testing::PauseBehavior;

class StreamSupervisorTest : public testing::ManagerHarness {
 protected:
  // Two workers, one group of two replicas over partitions 0 and 1.
  void StartReplicatedGroup() {
    w1_ = AddWorker("w1");
    w2_ = AddWorker("w2");
    Submit(Spec(/*task_count=*/1, /*replicas=*/2));
    Run();
    tasks_ = GroupTasks(0);
    ASSERT_EQ(tasks_.size(), 2u);
    a_ = tasks_[0];
    b_ = tasks_[1];
  }

  v1::TaskGroupStatus ActiveGroup(int id = 0) {
    const v1::SupervisorStatus status = Status();
    for (const auto& g : status.active_groups()) {
      if (g.group_id() == id) return g;
    }
    ADD_FAILURE() << "no active group " << id;
    return {};
  }

  std::string SetEndOffsetsLine(const std::string& task, const std::string& offsets,
                                bool finish = false) {
    return absl::StrCat("SetEndOffsets ", task, " ", offsets, finish ? " finish" : "");
  }

  // One group at first; the autoscaler runs 1 to 4 of them on samples a
  // second over 5 s, deciding every second (out: half the samples >= 1000;
  // in: 90% <= 10).
  v1::SupervisorSpec AutoscaledSpec() {
    v1::SupervisorSpec spec = Spec(/*task_count=*/1);
    spec.mutable_io_config()->set_stop_task_count(4);  // Spec() normalized it to taskCount
    v1::AutoScalerConfig* c = spec.mutable_io_config()->mutable_auto_scaler_config();
    c->set_enable_task_auto_scaler(true);
    c->set_task_count_min(1);
    c->set_task_count_max(4);
    c->set_lag_collection_interval_millis(1000);
    c->set_lag_collection_range_millis(5000);
    c->set_scale_out_threshold(1000);
    c->set_trigger_scale_out_fraction_threshold(0.5);
    c->set_scale_in_threshold(10);
    c->set_scale_action_start_delay_millis(0);
    c->set_scale_action_period_millis(1000);
    return spec;
  }

  static bool Contains(const std::vector<std::string>& log, const std::string& line) {
    return std::find(log.begin(), log.end(), line) != log.end();
  }

  FakeTaskWorker* w1_ = nullptr;
  FakeTaskWorker* w2_ = nullptr;
  std::vector<std::string> tasks_;
  std::string a_, b_;
};

TEST_F(StreamSupervisorTest, KafkaMetadataIsQueriedOffTheLoopOnceThePartitionsAreKnown) {
  background_stream_queries_ = true;
  StartManager();
  AddWorker("w1");
  v1::SupervisorSpec spec = Spec();
  spec.mutable_io_config()->set_period("PT0.1S");  // the query thread's period
  Submit(spec);
  // Without any run driven, the background queries' answers reach the
  // status; the first is asked at once.
  auto wait_for_latest = [this](int64_t want) {
    auto latest = [this] {
      const v1::SupervisorStatus status = Status();
      auto it = status.latest_offsets().find(0);
      return it == status.latest_offsets().end() ? int64_t{-1} : it->second;
    };
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (latest() != want && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(50));
    return latest();
  };
  ASSERT_EQ(wait_for_latest(100), 100);
  Run();  // the partitions come from that answer: the loop never asks Kafka
  ASSERT_EQ(Status().partitions(), 2);
  stream_.SetWatermarks(0, 0, 150);
  ASSERT_EQ(wait_for_latest(150), 150);

  // A slow cluster: a run on the loop must not wait for it.
  stream_.SetWatermarks(0, 0, 250);
  stream_.SetDelay(absl::Milliseconds(1500));
  const absl::Time started = absl::Now();
  Run();
  EXPECT_LT(absl::Now() - started, absl::Seconds(1))
      << "the run waited for the Kafka queries (partitions + watermarks: 3 s)";
  EXPECT_EQ(wait_for_latest(250), 250);
  stream_.SetDelay(absl::ZeroDuration());
}

// "Hostile peers and producers", item 2: the deadline of each Kafka query
// was at most a period, so at ioConfig.period PT0.5S a broker answering in a
// second never answered in time and the datasource showed
// UNABLE_TO_CONNECT_TO_STREAM. The deadline is kafka_timeout (10 s here),
// whatever the period.
TEST_F(StreamSupervisorTest, AShortPeriodDoesNotShortenTheKafkaQueryDeadline) {
  background_stream_queries_ = true;
  StartManager();
  stream_.SetAnswerTime(absl::Seconds(1));
  v1::SupervisorSpec spec = Spec();
  spec.mutable_io_config()->set_period("PT0.5S");
  Submit(spec);
  // The first query is asked at once: wait for its answer in the status, or
  // for the status saying Kafka cannot be reached.
  v1::SupervisorStatus status;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    status = Status();
    if (status.latest_offsets().count(0) > 0 ||
        status.state() == v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_NE(status.state(), v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM)
      << status.DebugString();
  ASSERT_EQ(status.latest_offsets().count(0), 1u) << status.DebugString();
  EXPECT_EQ(status.latest_offsets().at(0), 100);
}

// A suspended datasource reads nothing: Kafka's answers (here: none at
// all) leave it SUSPENDED. Resumed, the same answers show at once.
TEST_F(StreamSupervisorTest, ASuspendedSupervisorStaysSuspendedWhateverKafkaAnswers) {
  background_stream_queries_ = true;
  StartManager();
  stream_.SetError(absl::UnavailableError("no broker answers"));
  v1::SupervisorSpec spec = Spec();
  spec.mutable_io_config()->set_period("PT0.1S");
  spec.set_suspended(true);
  Submit(spec);
  // Each query hands its answer to the loop before the next one starts.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (stream_.listings() < 3 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  ASSERT_GE(stream_.listings(), 3);
  Sync();
  v1::SupervisorStatus status = Status();
  EXPECT_EQ(status.state(), v1::SUPERVISOR_STATE_SUSPENDED) << status.DebugString();

  ASSERT_TRUE(manager_->specs()->Resume("wiki").ok());
  const absl::Time resumed_deadline = absl::Now() + absl::Seconds(20);
  while (Status().state() != v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM &&
         absl::Now() < resumed_deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(Status().state(), v1::SUPERVISOR_STATE_UNABLE_TO_CONNECT_TO_STREAM);
}

// Issue 12, point 8: RunTask runs off the datasource's loop. A worker that
// does not answer (frozen) costs its task the RunTask deadline, but the loop
// goes on handling notices meanwhile (checkpoints, status, stops), and the
// next run places the task elsewhere. Before, the run waited on the loop for
// every attempt of RunTask (2 x 3 s here).
TEST_F(StreamSupervisorTest, AFrozenWorkersRunTaskDoesNotHoldUpTheLoop) {
  FakeTaskWorker* frozen = AddWorker("w1", /*capacity=*/8);  // most free slots: picked first
  FakeTaskWorker* w2 = AddWorker("w2");
  frozen->SetRunTaskDelay(absl::Seconds(10));
  v1::SupervisorSpec spec = Spec();
  spec.mutable_tuning_config()->set_chat_timeout("PT3S");
  Submit(spec);
  std::thread run([this] { Run(); });  // returns once RunTask was answered
  absl::SleepFor(absl::Milliseconds(300));
  const absl::Time synced = absl::Now();
  StreamSupervisor* supervisor = manager_->stream_supervisor("wiki");
  ASSERT_NE(supervisor, nullptr);
  EXPECT_TRUE(supervisor->Sync(absl::Seconds(1)).ok())
      << "the loop was held up by RunTask to a frozen worker";
  EXPECT_LT(absl::Now() - synced, absl::Seconds(1));
  // The task is in its group while RunTask is under way.
  EXPECT_EQ(GroupTasks(0).size(), 1u);
  run.join();
  // The RunTask deadline passed (one attempt, at most 2 s): the task failed
  // and the next run places its replacement on the other worker.
  Run();
  const std::vector<std::string> tasks = GroupTasks(0);
  ASSERT_EQ(tasks.size(), 1u) << Status().DebugString();
  EXPECT_EQ(WorkerOf(tasks[0]), w2);
  frozen->SetRunTaskDelay(absl::ZeroDuration());
}

TEST_F(StreamSupervisorTest, CreatesGroupsWithReplicasOnDistinctWorkersAndRecordsInitialOffsets) {
  stream_.SetPartitions(4, /*earliest=*/10, /*latest=*/500);
  AddWorker("w1");
  AddWorker("w2");
  Submit(Spec(/*task_count=*/2, /*replicas=*/2));
  Run();
  const v1::SupervisorStatus status = Status();
  EXPECT_EQ(status.state(), v1::SUPERVISOR_STATE_RUNNING) << status.DebugString();
  ASSERT_EQ(status.active_groups_size(), 2);
  for (const auto& group : status.active_groups()) {
    ASSERT_EQ(group.tasks_size(), 2);
    EXPECT_NE(group.tasks(0).worker_id(), group.tasks(1).worker_id());
    // Partitions p % 2 == group id, from earliest (useEarliestOffset).
    EXPECT_EQ(group.partitions_size(), 2);
    for (int p : group.partitions()) EXPECT_EQ(p % 2, group.group_id());
    for (const auto& task : group.tasks()) {
      auto spec = WorkerOf(task.task_id())->Task(task.task_id())->spec;
      EXPECT_EQ(spec.base_sequence_name(), group.base_sequence_name());
      EXPECT_TRUE(absl::StartsWith(task.task_id(), group.base_sequence_name() + "_"));
      EXPECT_EQ(spec.checkpoints_size(), 1);
      EXPECT_EQ(FromProto(spec.start_offsets()), FromProto(group.start_offsets()));
      EXPECT_EQ(spec.topic(), "events");
    }
  }
  EXPECT_EQ(Committed(), (OffsetMap{{0, 10}, {1, 10}, {2, 10}, {3, 10}}));
  auto log = manager_->reads()->CommitLog("wiki");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(FromProto(log->initial_offsets()), Committed());
  // Lag: latest 500 - current 10 on four partitions.
  EXPECT_EQ(status.aggregate_lag(), 4 * 490);

  // A second run changes nothing.
  Run();
  EXPECT_EQ(LiveTasks().size(), 4u);
}

TEST_F(StreamSupervisorTest, CheckpointOfTheLatestSequencePausesAllTakesTheMaxAndSetsIt) {
  StartReplicatedGroup();
  WorkerOf(a_)->Read(a_, {{0, 50}, {1, 40}});
  WorkerOf(b_)->Read(b_, {{0, 45}, {1, 60}});
  auto request = WorkerOf(a_)->RequestCheckpoint(a_);
  auto answer = manager_->protocol()->Checkpoint(request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->accepted());
  Sync();

  for (const std::string& task : {a_, b_}) {
    auto state = WorkerOf(task)->Task(task);
    EXPECT_EQ(state->sequences.size(), 2u) << task;
    EXPECT_EQ(state->sequences[0].end, (OffsetMap{{0, 50}, {1, 60}})) << task;
    EXPECT_EQ(state->state, v1::TASK_STATE_READING) << task;
    EXPECT_FALSE(state->paused) << task;
    EXPECT_TRUE(Contains(WorkerOf(task)->CallLog(), SetEndOffsetsLine(task, "{0:50, 1:60}")));
  }
  const auto group = ActiveGroup();
  ASSERT_EQ(group.checkpoints_size(), 2);
  EXPECT_EQ(StoredGroup(group.base_sequence_name()).checkpoints.at(1),
            (OffsetMap{{0, 50}, {1, 60}}));

  // B asks for the same (now earlier) sequence: not accepted, nothing to send
  // (it already has sequence 1).
  auto late = WorkerOf(b_)->RequestCheckpoint(b_);
  late.set_sequence_id(0);
  *late.mutable_start_offsets() = request.start_offsets();
  answer = manager_->protocol()->Checkpoint(late);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->accepted());
  Sync();
  EXPECT_EQ(WorkerOf(b_)->Calls("SetEndOffsets"), 1);
  EXPECT_EQ(StoredGroup(group.base_sequence_name()).checkpoints.size(), 2u);
}

// Pauseless rounds: replicas that take end offsets while reading, a fixed
// margin of 10 offsets per partition.
class PauselessCheckpointTest : public StreamSupervisorTest {
 protected:
  void SetUp() override {
    pauseless_checkpoints_ = true;
    pauseless_margin_.min_margin = 10;
    pauseless_margin_.max_margin = 10;
    StartManager();
  }
  void StartPauselessGroup(int64_t a_reads_after_offsets, int64_t b_reads_after_offsets) {
    StartReplicatedGroup();
    testing::FakeTaskScript script;
    script.pauseless = true;
    script.read_after_offsets = a_reads_after_offsets;
    WorkerOf(a_)->SetScript(a_, script);
    script.read_after_offsets = b_reads_after_offsets;
    WorkerOf(b_)->SetScript(b_, script);
    WorkerOf(a_)->Read(a_, {{0, 50}, {1, 40}});
    WorkerOf(b_)->Read(b_, {{0, 45}, {1, 60}});
  }
};

TEST_F(PauselessCheckpointTest, TheRoundSetsTheMaxPlusTheMarginWithoutPausingAnyReplica) {
  StartPauselessGroup(0, 0);
  auto answer = manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->accepted());
  Sync();
  for (const std::string& task : {a_, b_}) {
    auto state = WorkerOf(task)->Task(task);
    ASSERT_EQ(state->sequences.size(), 2u) << task;
    EXPECT_EQ(state->sequences[0].end, (OffsetMap{{0, 60}, {1, 70}})) << task;
    EXPECT_EQ(state->state, v1::TASK_STATE_READING) << task;
    EXPECT_EQ(WorkerOf(task)->Calls("Pause"), 0) << task;
    EXPECT_EQ(WorkerOf(task)->Calls("SetEndOffsets"), 1) << task;
  }
  const auto group = ActiveGroup();
  EXPECT_EQ(StoredGroup(group.base_sequence_name()).checkpoints.at(1),
            (OffsetMap{{0, 60}, {1, 70}}));
}

TEST_F(PauselessCheckpointTest, AFirstReplicaPastTheEndMakesTheRoundPauseAndTakeTheMax) {
  // Both read 100 more right after their offsets are read: past max + 10.
  StartPauselessGroup(100, 100);
  ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_)).ok());
  Sync();
  // B, furthest ahead, was asked first and refused; the refused end was
  // removed and nobody else was told it; then the classic round.
  EXPECT_TRUE(Contains(WorkerOf(b_)->CallLog(), SetEndOffsetsLine(b_, "{0:60, 1:70}")));
  EXPECT_FALSE(Contains(WorkerOf(a_)->CallLog(), SetEndOffsetsLine(a_, "{0:60, 1:70}")));
  for (const std::string& task : {a_, b_}) {
    auto state = WorkerOf(task)->Task(task);
    ASSERT_EQ(state->sequences.size(), 2u) << task;
    EXPECT_EQ(state->sequences[0].end, (OffsetMap{{0, 150}, {1, 160}})) << task;
    EXPECT_EQ(state->state, v1::TASK_STATE_READING) << task;
    EXPECT_EQ(WorkerOf(task)->Calls("Pause"), 1) << task;
  }
  const TaskGroupRecord stored = StoredGroup(ActiveGroup().base_sequence_name());
  ASSERT_EQ(stored.checkpoints.size(), 2u);
  EXPECT_EQ(stored.checkpoints.at(1), (OffsetMap{{0, 150}, {1, 160}}));
}

TEST_F(PauselessCheckpointTest, AnotherReplicaPastTheRecordedEndIsReplaced) {
  // A (behind B when read) reads on past the end; B takes it first.
  StartPauselessGroup(100, 0);
  ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_)).ok());
  Sync();
  EXPECT_EQ(WorkerOf(b_)->Task(b_)->sequences[0].end, (OffsetMap{{0, 60}, {1, 70}}));
  EXPECT_EQ(WorkerOf(b_)->Task(b_)->state, v1::TASK_STATE_READING);
  EXPECT_EQ(WorkerOf(a_)->Task(a_)->state, v1::TASK_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(WorkerOf(a_)->Task(a_)->error, "already read past"));
  EXPECT_EQ(StoredGroup(ActiveGroup().base_sequence_name()).checkpoints.at(1),
            (OffsetMap{{0, 60}, {1, 70}}));
  EXPECT_EQ(WorkerOf(b_)->Calls("Pause"), 0);
}

TEST_F(PauselessCheckpointTest, NothingReadSinceTheLastCheckpointRecordsNothingAndPausesNobody) {
  StartReplicatedGroup();
  testing::FakeTaskScript script;
  script.pauseless = true;
  WorkerOf(a_)->SetScript(a_, script);
  WorkerOf(b_)->SetScript(b_, script);
  ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_)).ok());
  Sync();
  EXPECT_EQ(WorkerOf(a_)->Calls("Pause") + WorkerOf(b_)->Calls("Pause"), 0);
  EXPECT_EQ(WorkerOf(a_)->Calls("SetEndOffsets") + WorkerOf(b_)->Calls("SetEndOffsets"), 0);
  EXPECT_EQ(StoredGroup(ActiveGroup().base_sequence_name()).checkpoints.size(), 1u);
}

// Replicas caught up with a live stream: the end lies past the records
// known by what the stream is expected to add during the round (here the
// 10-offset margin: 10 records/s x a 10 s window x 4, capped at 10). The
// records do not come; 5 s on, a run moves the checkpoint back to what the
// replicas read, recorded first, and tells both.
class MoveBackTest : public PauselessCheckpointTest {
 protected:
  void SetUp() override {
    pauseless_checkpoints_ = true;
    pauseless_margin_.min_margin = 10;
    pauseless_margin_.max_margin = 10;
    pauseless_margin_.min_window = absl::Seconds(10);
    pauseless_margin_.stalled_checkpoint_after = StalledAfter();
    StartManager();
  }
  virtual absl::Duration StalledAfter() const { return absl::Seconds(5); }
  // A group whose replicas read {0:50, 1:40} and {0:45, 1:60}, the stream's
  // end, growing 10 records/s; a pauseless checkpoint at {0:60, 1:70}.
  void CheckpointPastTheStream() {
    stream_.SetWatermarks(0, 0, 40);
    stream_.SetWatermarks(1, 0, 50);
    StartPauselessGroup(0, 0);
    clock_.Advance(absl::Seconds(1));
    stream_.SetWatermarks(0, 0, 50);
    stream_.SetWatermarks(1, 0, 60);
    Run();
    base_ = ActiveGroup().base_sequence_name();
    ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_)).ok());
    Sync();
    ASSERT_EQ(StoredGroup(base_).checkpoints.at(1), (OffsetMap{{0, 60}, {1, 70}}));
    for (const std::string& task : {a_, b_}) {
      EXPECT_EQ(WorkerOf(task)->Calls("Pause"), 0) << task;
    }
  }
  uint64_t MovedBack() {
    return metrics_.GetCounter(metrics::kSupervisorCheckpointsMovedBack, {{"datasource", "wiki"}})
        ->Value();
  }
  std::string base_;
};

TEST_F(MoveBackTest, AStalledCheckpointPastTheStreamMovesBackToWhatWasRead) {
  CheckpointPastTheStream();
  clock_.Advance(absl::Seconds(2));
  Run();
  EXPECT_EQ(StoredGroup(base_).checkpoints.at(1), (OffsetMap{{0, 60}, {1, 70}}));  // not yet
  clock_.Advance(absl::Seconds(4));
  Run();
  EXPECT_EQ(StoredGroup(base_).checkpoints.at(1), (OffsetMap{{0, 50}, {1, 60}}));
  EXPECT_EQ(MovedBack(), 1u);
  for (const std::string& task : {a_, b_}) {
    auto state = WorkerOf(task)->Task(task);
    ASSERT_EQ(state->sequences.size(), 2u) << task;
    EXPECT_EQ(state->sequences[0].end, (OffsetMap{{0, 50}, {1, 60}})) << task;
    EXPECT_EQ(state->sequences[1].start, (OffsetMap{{0, 50}, {1, 60}})) << task;
    EXPECT_EQ(state->state, v1::TASK_STATE_READING) << task;
    EXPECT_FALSE(state->paused) << task;
    EXPECT_TRUE(Contains(WorkerOf(task)->CallLog(), SetEndOffsetsLine(task, "{0:50, 1:60}")));
  }
  // A replica asking with the old start is not replaced.
  auto old = WorkerOf(b_)->RequestCheckpoint(b_);
  old.set_sequence_id(1);
  ToProto(OffsetMap{{0, 60}, {1, 70}}, old.mutable_start_offsets());
  manager_->protocol()->Checkpoint(old).IgnoreError();
  Sync();
  EXPECT_EQ(WorkerOf(b_)->Task(b_)->state, v1::TASK_STATE_READING);
  // Moved once: later runs leave it.
  clock_.Advance(absl::Seconds(10));
  Run();
  EXPECT_EQ(MovedBack(), 1u);
}

// The next checkpoint request while partition 0 still waits: the round
// pauses (a pauseless one cannot move a checkpoint), moves checkpoint 1
// back on partition 0 and records checkpoint 2 at the maximum read, and one
// SetEndOffsets tells each replica both.
TEST_F(MoveBackTest, ACheckpointRoundMovesTheWaitingOneBackAndSetsTheNextInOneCall) {
  CheckpointPastTheStream();
  WorkerOf(b_)->Read(b_, {{0, 45}, {1, 75}});
  stream_.SetWatermarks(1, 0, 75);
  Run();
  ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(b_)->RequestCheckpoint(b_)).ok());
  Sync();
  const TaskGroupRecord stored = StoredGroup(base_);
  ASSERT_EQ(stored.checkpoints.size(), 3u);
  EXPECT_EQ(stored.checkpoints.at(1), (OffsetMap{{0, 50}, {1, 70}}));
  EXPECT_EQ(stored.checkpoints.at(2), (OffsetMap{{0, 50}, {1, 75}}));
  for (const std::string& task : {a_, b_}) {
    auto state = WorkerOf(task)->Task(task);
    ASSERT_EQ(state->sequences.size(), 3u) << task;
    EXPECT_EQ(state->sequences[0].end, (OffsetMap{{0, 50}, {1, 70}})) << task;
    EXPECT_EQ(state->sequences[1].start, (OffsetMap{{0, 50}, {1, 70}})) << task;
    EXPECT_EQ(state->sequences[1].end, (OffsetMap{{0, 50}, {1, 75}})) << task;
    EXPECT_EQ(state->sequences[2].start, (OffsetMap{{0, 50}, {1, 75}})) << task;
    EXPECT_EQ(WorkerOf(task)->Calls("Pause"), 1) << task;
    EXPECT_EQ(state->state, v1::TASK_STATE_READING) << task;
  }
  EXPECT_EQ(MovedBack(), 1u);
}

// The same at a roll-over, before any run finds the checkpoint stalled: the
// finalize round moves it back.
class FinalizeMoveBackTest : public MoveBackTest {
 protected:
  absl::Duration StalledAfter() const override { return absl::Hours(10); }
};

TEST_F(FinalizeMoveBackTest, TheFinalEndOfARollOverMovesACheckpointPastTheStreamBack) {
  CheckpointPastTheStream();
  // Partition 1 was read on past the checkpoint by one replica; partition 0
  // never reached it.
  WorkerOf(b_)->Read(b_, {{0, 45}, {1, 75}});
  stream_.SetWatermarks(1, 0, 75);
  Run();
  clock_.Advance(absl::Minutes(61));
  Run();
  EXPECT_EQ(StoredGroup(base_).checkpoints.at(1), (OffsetMap{{0, 50}, {1, 70}}));
  EXPECT_EQ(StoredGroup(base_).state, GroupState::kPublishing);
  EXPECT_EQ(StoredGroup(base_).end_offsets, (OffsetMap{{0, 50}, {1, 75}}));
  for (const std::string& task : {a_, b_}) {
    auto state = WorkerOf(task)->Task(task);
    ASSERT_EQ(state->sequences.size(), 2u) << task;
    EXPECT_EQ(state->sequences[0].end, (OffsetMap{{0, 50}, {1, 70}})) << task;
    EXPECT_EQ(state->sequences[1].start, (OffsetMap{{0, 50}, {1, 70}})) << task;
    EXPECT_TRUE(Contains(WorkerOf(task)->CallLog(), SetEndOffsetsLine(task, "{0:50, 1:75}", true)))
        << task;
  }
  // The next group starts at what was read, not past the stream.
  const v1::SupervisorStatus status = Status();
  ASSERT_EQ(status.active_groups_size(), 1);
  EXPECT_EQ(FromProto(status.active_groups(0).start_offsets()), (OffsetMap{{0, 50}, {1, 75}}));
}

TEST_F(StreamSupervisorTest, ARequestForAnEarlierSequenceGetsTheAgreedEndOffsets) {
  StartReplicatedGroup();
  WorkerOf(a_)->Read(a_, {{0, 30}, {1, 30}});
  // The supervisor records the checkpoint but the replicas never hear of it.
  ASSERT_TRUE(ConfigureFaultPoints("supervisor.checkpoint.before_set_end_offsets=error").ok());
  auto request = WorkerOf(a_)->RequestCheckpoint(a_);
  ASSERT_TRUE(manager_->protocol()->Checkpoint(request).ok());
  Sync();
  ASSERT_TRUE(ConfigureFaultPoints("").ok());
  EXPECT_EQ(WorkerOf(a_)->Task(a_)->sequences.size(), 1u);
  EXPECT_FALSE(WorkerOf(a_)->Task(a_)->paused);  // resumed, not left paused
  EXPECT_EQ(ActiveGroup().checkpoints_size(), 2);

  // A asks again (checkpointRetryPeriod): its sequence is now an earlier one.
  request = WorkerOf(a_)->RequestCheckpoint(a_);
  auto answer = manager_->protocol()->Checkpoint(request);
  ASSERT_TRUE(answer.ok());
  EXPECT_FALSE(answer->accepted());
  Sync();
  auto state = WorkerOf(a_)->Task(a_);
  ASSERT_EQ(state->sequences.size(), 2u);
  EXPECT_EQ(state->sequences[1].start, (OffsetMap{{0, 30}, {1, 30}}));
  EXPECT_EQ(state->state, v1::TASK_STATE_READING);
}

TEST_F(StreamSupervisorTest, AReplicaThatNeverPausesIsReplacedAndTheOthersResume) {
  StartReplicatedGroup();
  WorkerOf(b_)->SetScript(b_, {PauseBehavior::kNeverPause, false});
  WorkerOf(a_)->Read(a_, {{0, 20}, {1, 25}});
  ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_)).ok());
  Sync();

  EXPECT_EQ(WorkerOf(b_)->Task(b_)->state, v1::TASK_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(WorkerOf(b_)->Task(b_)->error, "did not pause"))
      << WorkerOf(b_)->Task(b_)->error;
  auto a = WorkerOf(a_)->Task(a_);
  EXPECT_EQ(a->state, v1::TASK_STATE_READING);
  ASSERT_EQ(a->sequences.size(), 2u);
  EXPECT_EQ(a->sequences[0].end, (OffsetMap{{0, 20}, {1, 25}}));

  // The next run replaces B: same base name, the group's checkpoints.
  const std::string base = ActiveGroup().base_sequence_name();
  Run();
  auto tasks = GroupTasks(0);
  ASSERT_EQ(tasks.size(), 2u);
  std::string replacement = tasks[0] == a_ ? tasks[1] : tasks[0];
  EXPECT_NE(replacement, b_);
  auto spec = WorkerOf(replacement)->Task(replacement)->spec;
  EXPECT_EQ(spec.base_sequence_name(), base);
  ASSERT_EQ(spec.checkpoints_size(), 2);
  EXPECT_EQ(FromProto(spec.checkpoints(1).offsets()), (OffsetMap{{0, 20}, {1, 25}}));
  // Anti-affinity: not on A's worker while B's worker has room.
  EXPECT_NE(WorkerOf(replacement), WorkerOf(a_));
}

TEST_F(StreamSupervisorTest, AReplicaThatRejectsSetEndOffsetsIsKilled) {
  StartReplicatedGroup();
  WorkerOf(b_)->SetScript(b_, {PauseBehavior::kPause, /*reject_set_end_offsets=*/true});
  WorkerOf(a_)->Read(a_, {{0, 7}});
  ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_)).ok());
  Sync();
  EXPECT_EQ(WorkerOf(b_)->Task(b_)->state, v1::TASK_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(WorkerOf(b_)->Task(b_)->error, "refused the end offsets"));
  EXPECT_EQ(WorkerOf(a_)->Task(a_)->sequences.size(), 2u);
  EXPECT_EQ(WorkerOf(a_)->Task(a_)->state, v1::TASK_STATE_READING);
}

TEST_F(StreamSupervisorTest, DuplicateRequestsMakeOneRound) {
  StartReplicatedGroup();
  WorkerOf(a_)->Read(a_, {{0, 11}, {1, 12}});
  auto request = WorkerOf(a_)->RequestCheckpoint(a_);
  // Both arrive before the loop handles the first.
  ASSERT_TRUE(manager_->protocol()->Checkpoint(request).ok());
  ASSERT_TRUE(manager_->protocol()->Checkpoint(request).ok());
  Sync();
  // And once more after.
  auto again = manager_->protocol()->Checkpoint(request);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->accepted());
  Sync();
  EXPECT_EQ(WorkerOf(a_)->Calls("SetEndOffsets"), 1);
  EXPECT_EQ(WorkerOf(b_)->Calls("SetEndOffsets"), 1);
  EXPECT_EQ(StoredGroup(ActiveGroup().base_sequence_name()).checkpoints.size(), 2u);
}

// A task may fill its first sequence before the supervisor has started the
// other tasks of the run that created its group (found by the fault suite:
// such a request was refused as "not a reading group" and the task waited a
// whole checkpointRetryPeriod).
TEST_F(StreamSupervisorTest, ACheckpointRequestRightAfterRunTaskIsAccepted) {
  FakeTaskWorker* w1 = AddWorker("w1");
  std::optional<absl::StatusOr<v1::CheckpointDataSourceMetadataResponse>> answer;
  w1->SetAfterCallHook([&](const std::string& method, const std::string& task_id) {
    if (method != "RunTask" || answer.has_value()) return;
    answer = manager_->protocol()->Checkpoint(w1->RequestCheckpoint(task_id));
  });
  Submit(Spec(/*task_count=*/2, /*replicas=*/1));
  Run();
  w1->SetAfterCallHook(nullptr);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->ok()) << answer->status();
  EXPECT_TRUE((*answer)->accepted());
}

// Replicas that get their end offsets fill the next sequence at once and ask
// again while the round is still answering the other replicas: the new
// checkpoint must already be known.
TEST_F(StreamSupervisorTest, ACheckpointRequestForTheNextSequenceDuringTheRoundIsAccepted) {
  StartReplicatedGroup();
  WorkerOf(a_)->Read(a_, {{0, 20}, {1, 20}});
  std::optional<absl::StatusOr<v1::CheckpointDataSourceMetadataResponse>> answer;
  FakeTaskWorker* w = WorkerOf(a_);
  w->SetAfterCallHook([&](const std::string& method, const std::string& task_id) {
    if (method != "SetEndOffsets" || task_id != a_ || answer.has_value()) return;
    answer = manager_->protocol()->Checkpoint(w->RequestCheckpoint(task_id));
  });
  ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_)).ok());
  Sync();
  w->SetAfterCallHook(nullptr);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->ok()) << answer->status();
  EXPECT_TRUE((*answer)->accepted());
  Sync();
  EXPECT_EQ(WorkerOf(a_)->Task(a_)->state, v1::TASK_STATE_READING);
}

TEST_F(StreamSupervisorTest, ARoundWithoutProgressResumesWithoutACheckpoint) {
  StartReplicatedGroup();
  ASSERT_TRUE(manager_->protocol()->Checkpoint(WorkerOf(a_)->RequestCheckpoint(a_)).ok());
  Sync();
  EXPECT_EQ(WorkerOf(a_)->Calls("SetEndOffsets"), 0);
  EXPECT_EQ(WorkerOf(a_)->Calls("Resume"), 1);
  EXPECT_EQ(WorkerOf(a_)->Task(a_)->state, v1::TASK_STATE_READING);
  EXPECT_EQ(ActiveGroup().checkpoints_size(), 1);
}

TEST_F(StreamSupervisorTest, ARequestMatchingNoCheckpointIsRefusedAndTheTaskReplaced) {
  StartReplicatedGroup();
  auto request = WorkerOf(a_)->RequestCheckpoint(a_);
  (*request.mutable_start_offsets())[0] = 999;
  auto answer = manager_->protocol()->Checkpoint(request);
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(answer.status().message(), "match no checkpoint"));
  Sync();
  EXPECT_EQ(WorkerOf(a_)->Task(a_)->state, v1::TASK_STATE_FAILED);

  // A task claiming another group is refused before anything else (the claim check).
  request.set_group_id(7);
  EXPECT_EQ(manager_->protocol()->Checkpoint(request).status().code(),
            absl::StatusCode::kPermissionDenied);
  request.set_datasource("nobody");
  EXPECT_EQ(manager_->protocol()->Checkpoint(request).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StreamSupervisorTest, RollOverAfterTaskDurationThenTheFirstSuccessEndsTheGroup) {
  StartReplicatedGroup();
  const std::string first_base = ActiveGroup().base_sequence_name();
  WorkerOf(a_)->Read(a_, {{0, 70}, {1, 10}});
  WorkerOf(b_)->Read(b_, {{0, 65}, {1, 15}});
  clock_.Advance(absl::Minutes(59));
  Run();
  EXPECT_TRUE(Status().publishing_groups().empty());

  clock_.Advance(absl::Minutes(2));
  Run();
  v1::SupervisorStatus status = Status();
  ASSERT_EQ(status.publishing_groups_size(), 1);
  const auto& publishing = status.publishing_groups(0);
  EXPECT_EQ(publishing.base_sequence_name(), first_base);
  EXPECT_EQ(FromProto(publishing.end_offsets()), (OffsetMap{{0, 70}, {1, 15}}));
  EXPECT_EQ(publishing.remaining_ms(), 30 * 60 * 1000);
  for (const std::string& task : {a_, b_}) {
    EXPECT_TRUE(Contains(WorkerOf(task)->CallLog(), SetEndOffsetsLine(task, "{0:70, 1:15}", true)));
    EXPECT_EQ(WorkerOf(task)->Task(task)->state, v1::TASK_STATE_PUBLISHING);
  }
  // The next group started at once from those end offsets.
  ASSERT_EQ(status.active_groups_size(), 1);
  EXPECT_EQ(FromProto(status.active_groups(0).start_offsets()), (OffsetMap{{0, 70}, {1, 15}}));
  EXPECT_NE(status.active_groups(0).base_sequence_name(), first_base);
  EXPECT_EQ(status.active_groups(0).tasks_size(), 2);
  EXPECT_EQ(StoredGroup(first_base).state, GroupState::kPublishing);

  WorkerOf(a_)->SetState(a_, v1::TASK_STATE_SUCCESS);
  Run();
  status = Status();
  EXPECT_TRUE(status.publishing_groups().empty());
  EXPECT_EQ(WorkerOf(b_)->Task(b_)->state, v1::TASK_STATE_STOPPED);  // the other replica is stopped
  EXPECT_EQ(StoredGroup(first_base).state, GroupState::kDone);
  EXPECT_EQ(status.active_groups_size(), 1);
}

// ioConfig.stopTaskCount (Druid #14396): at most that many groups publish at
// once, so a roll-over needs taskCount + stopTaskCount slots rather than
// twice taskCount. Two groups due together with stopTaskCount 1: the older
// rolls over, the other keeps reading until the first one's publish ends.
TEST_F(StreamSupervisorTest, StopTaskCountLimitsHowManyGroupsRollOverAtOnce) {
  AddWorker("w1");
  v1::SupervisorSpec spec = Spec(/*task_count=*/2, /*replicas=*/1);
  spec.mutable_io_config()->set_stop_task_count(1);
  Submit(spec);
  Run();
  ASSERT_EQ(Status().active_groups_size(), 2);
  const std::string task0 = GroupTasks(0).at(0);
  const std::string task1 = GroupTasks(1).at(0);
  const std::string base1 = ActiveGroup(1).base_sequence_name();
  WorkerOf(task0)->Read(task0, {{0, 30}});
  WorkerOf(task1)->Read(task1, {{1, 40}});

  clock_.Advance(absl::Minutes(61));
  Run();
  v1::SupervisorStatus status = Status();
  ASSERT_EQ(status.publishing_groups_size(), 1) << status.DebugString();
  // Both were due (created together: the lower id goes first); group 1
  // still reads in the same generation.
  const std::string first_publishing = status.publishing_groups(0).base_sequence_name();
  const int first_id = status.publishing_groups(0).group_id();
  EXPECT_EQ(first_id, 0);
  const int other_id = 1 - first_id;
  EXPECT_EQ(ActiveGroup(other_id).base_sequence_name(), base1);
  const std::string other_base = ActiveGroup(other_id).base_sequence_name();
  Run();
  EXPECT_EQ(Status().publishing_groups_size(), 1) << "still one at a time";
  EXPECT_EQ(ActiveGroup(other_id).base_sequence_name(), other_base);

  // The first publish ends: the other group rolls over now.
  const std::string first_task = first_id == 0 ? task0 : task1;
  WorkerOf(first_task)->SetState(first_task, v1::TASK_STATE_SUCCESS);
  Run();
  Run();
  status = Status();
  ASSERT_EQ(status.publishing_groups_size(), 1) << status.DebugString();
  EXPECT_EQ(status.publishing_groups(0).base_sequence_name(), other_base);
  EXPECT_NE(status.publishing_groups(0).base_sequence_name(), first_publishing);
  EXPECT_EQ(status.active_groups_size(), 2);
}

// Partitions added to the topic (Kafka's CreatePartitions): the group they
// belong to (p % taskCount) rolls over at once, and its next generation reads
// them from the earliest offset, the others from where the last one ended.
TEST_F(StreamSupervisorTest, PartitionsAddedToTheTopicRollTheirGroupOverAtOnce) {
  StartReplicatedGroup();
  const std::string first_base = ActiveGroup().base_sequence_name();
  WorkerOf(a_)->Read(a_, {{0, 70}, {1, 10}});
  WorkerOf(b_)->Read(b_, {{0, 65}, {1, 15}});
  Run();
  EXPECT_TRUE(Status().publishing_groups().empty()) << "nothing changed yet";
  stream_.SetWatermarks(2, /*earliest=*/5, /*latest=*/40);
  Run();
  v1::SupervisorStatus status = Status();
  EXPECT_EQ(status.partitions(), 3);
  ASSERT_EQ(status.publishing_groups_size(), 1) << status.DebugString();
  EXPECT_EQ(status.publishing_groups(0).base_sequence_name(), first_base);
  EXPECT_EQ(FromProto(status.publishing_groups(0).end_offsets()), (OffsetMap{{0, 70}, {1, 15}}));
  ASSERT_EQ(status.active_groups_size(), 1);
  EXPECT_EQ(FromProto(status.active_groups(0).start_offsets()),
            (OffsetMap{{0, 70}, {1, 15}, {2, 5}}));
  // Once the new generation covers the partition, nothing rolls over again.
  const std::string second_base = status.active_groups(0).base_sequence_name();
  Run();
  EXPECT_EQ(ActiveGroup().base_sequence_name(), second_base);
}

TEST_F(StreamSupervisorTest, CompletionTimeoutKillsThePublishingGroupAndTheOneAfterIt) {
  StartReplicatedGroup();
  const std::string first_base = ActiveGroup().base_sequence_name();
  WorkerOf(a_)->Read(a_, {{0, 40}, {1, 40}});
  clock_.Advance(absl::Minutes(61));
  Run();
  const std::string second_base = ActiveGroup().base_sequence_name();
  ASSERT_NE(second_base, first_base);
  const std::vector<std::string> second_tasks = GroupTasks(0);

  clock_.Advance(absl::Minutes(29));
  Run();
  EXPECT_EQ(Status().publishing_groups_size(), 1);

  clock_.Advance(absl::Minutes(2));
  Run();
  const v1::SupervisorStatus status = Status();
  EXPECT_TRUE(status.publishing_groups().empty());
  EXPECT_EQ(StoredGroup(second_base).state, GroupState::kAbandoned);
  for (const std::string& task : {a_, b_}) EXPECT_EQ(WorkerOf(task)->Task(task)->state, v1::TASK_STATE_FAILED);
  for (const std::string& task : second_tasks) {
    EXPECT_EQ(WorkerOf(task)->Task(task)->state, v1::TASK_STATE_FAILED);
  }
  // A new group restarts from the stored offsets (nothing was published):
  // same start, same spec, so the same base name as the first group, whose
  // row it takes over; new tasks.
  ASSERT_EQ(status.active_groups_size(), 1);
  EXPECT_EQ(FromProto(status.active_groups(0).start_offsets()), Committed());
  EXPECT_EQ(Committed(), (OffsetMap{{0, 0}, {1, 0}}));
  EXPECT_EQ(status.active_groups(0).base_sequence_name(), first_base);
  EXPECT_EQ(StoredGroup(first_base).state, GroupState::kReading);
  EXPECT_EQ(StoredGroup(first_base).checkpoints.size(), 1u);
  ASSERT_EQ(status.active_groups(0).tasks_size(), 2);
  for (const auto& task : status.active_groups(0).tasks()) {
    EXPECT_TRUE(task.task_id() != a_ && task.task_id() != b_);
  }
}

TEST_F(StreamSupervisorTest, AllReplicasFailingAPauseAbandonsTheRoundAndTheGroupIsReplaced) {
  StartReplicatedGroup();
  for (const std::string& task : {a_, b_}) {
    WorkerOf(task)->SetScript(task, {PauseBehavior::kRefuse, false});
  }
  clock_.Advance(absl::Minutes(61));
  Run();
  // Finalize failed: the group is abandoned and a new one starts from the
  // stored offsets with fresh tasks.
  EXPECT_TRUE(Status().publishing_groups().empty());
  EXPECT_EQ(WorkerOf(a_)->Task(a_)->state, v1::TASK_STATE_FAILED);
  auto tasks = GroupTasks(0);
  EXPECT_EQ(tasks.size(), 2u);
  for (const auto& t : tasks) EXPECT_TRUE(t != a_ && t != b_);
}

}  // namespace
}  // namespace sluice::supervisor

namespace sluice::supervisor {
namespace {

// Early handoff (Druid's POST .../taskGroups/handoff): an operator's
// HandoffTaskGroups runs a checkpoint round now; the closed sequence is the
// replicas' to publish while they read on.
TEST_F(StreamSupervisorTest, HandoffCheckpointsTheGroupNowAndItReadsOn) {
  StartReplicatedGroup();
  WorkerOf(a_)->Read(a_, {{0, 30}, {1, 20}});
  WorkerOf(b_)->Read(b_, {{0, 25}, {1, 35}});
  v1::HandoffTaskGroupsRequest request;
  request.set_datasource("wiki");
  auto answer = manager_->specs()->Handoff(request);  // no ids: every reading group
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(std::vector<int32_t>(answer->group_ids().begin(), answer->group_ids().end()),
            std::vector<int32_t>{0});
  EXPECT_TRUE(answer->skipped().empty());
  for (const std::string& task : {a_, b_}) {
    auto state = WorkerOf(task)->Task(task);
    ASSERT_EQ(state->sequences.size(), 2u) << task;
    EXPECT_EQ(state->sequences[0].end, (OffsetMap{{0, 30}, {1, 35}})) << task;
    EXPECT_EQ(state->state, v1::TASK_STATE_READING) << task;
  }
  EXPECT_EQ(StoredGroup(ActiveGroup().base_sequence_name()).checkpoints.at(1),
            (OffsetMap{{0, 30}, {1, 35}}));
  EXPECT_EQ(metrics_.GetCounter(metrics::kSupervisorEarlyHandoffs, {{"datasource", "wiki"}})
                ->Value(),
            1u);

  // Nothing read since: skipped, saying so; nothing recorded.
  request.add_group_ids(0);
  answer = manager_->specs()->Handoff(request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->group_ids().empty());
  ASSERT_EQ(answer->skipped_size(), 1);
  EXPECT_TRUE(absl::StrContains(answer->skipped(0), "nothing read since its last checkpoint"))
      << answer->skipped(0);
  EXPECT_EQ(ActiveGroup().checkpoints_size(), 2);

  // A group that is not reading: refused, naming the reading ones.
  request.add_group_ids(7);
  absl::Status refused = manager_->specs()->Handoff(request).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(), "group 7 is not a reading group of wiki (reading: 0)");
  request.set_datasource("nobody");
  EXPECT_EQ(manager_->specs()->Handoff(request).status().code(), absl::StatusCode::kNotFound);
}

// ioConfig.idleConfig (Druid #13144, #13936): a stream that stopped moving,
// read to its end, for inactiveAfterMillis: the groups finish and publish,
// none start, the state is IDLE, also after a restart; new records wake it.
TEST_F(StreamSupervisorTest, IdleWhenTheStreamStopsSurvivesARestartAndWakesOnNewRecords) {
  AddWorker("w1");
  v1::SupervisorSpec spec = Spec();
  spec.mutable_io_config()->mutable_idle_config()->set_enabled(true);
  spec.mutable_io_config()->mutable_idle_config()->set_inactive_after_millis(60'000);
  Submit(spec);
  Run();
  const std::string task = GroupTasks(0).at(0);
  WorkerOf(task)->Read(task, {{0, 80}, {1, 100}});
  Run();
  clock_.Advance(absl::Minutes(5));
  Run();
  EXPECT_EQ(Status().state(), v1::SUPERVISOR_STATE_RUNNING) << "partition 0 is not read to 100";

  WorkerOf(task)->Read(task, {{0, 100}, {1, 100}});
  Run();  // caught up: still from now
  clock_.Advance(absl::Seconds(59));
  Run();
  EXPECT_EQ(Status().active_groups_size(), 1);
  clock_.Advance(absl::Seconds(1));
  Run();
  v1::SupervisorStatus status = Status();
  EXPECT_EQ(status.state(), v1::SUPERVISOR_STATE_IDLE) << status.DebugString();
  EXPECT_EQ(status.detailed_state(), "IDLE");
  EXPECT_TRUE(status.healthy());
  EXPECT_TRUE(status.active_groups().empty());
  ASSERT_EQ(status.publishing_groups_size(), 1);  // it publishes what it read
  EXPECT_TRUE(Contains(WorkerOf(task)->CallLog(), SetEndOffsetsLine(task, "{0:100, 1:100}", true)));
  WorkerOf(task)->SetState(task, v1::TASK_STATE_SUCCESS);
  Run();
  Run();
  EXPECT_TRUE(Status().active_groups().empty()) << "an idle supervisor starts no group";
  EXPECT_EQ(LiveTasks().size(), 0u);

  StartManager();  // a supervisor restart
  Run();
  status = Status();
  EXPECT_EQ(status.state(), v1::SUPERVISOR_STATE_IDLE) << status.DebugString();
  EXPECT_TRUE(status.active_groups().empty());

  stream_.SetWatermarks(1, 0, 130);  // new records
  Run();  // a run judges the watermarks the run before it fetched
  Run();
  status = Status();
  EXPECT_EQ(status.state(), v1::SUPERVISOR_STATE_RUNNING) << status.DebugString();
  EXPECT_EQ(status.active_groups_size(), 1);
  StartManager();
  Run();
  EXPECT_EQ(Status().state(), v1::SUPERVISOR_STATE_RUNNING) << "the wake-up was stored";
}

// ioConfig.autoScalerConfig: a backlog scales the groups out at once (the
// reading group rolls over, the new groups start where it ended); a caught
// up stream scales them in at the next roll-over; the count survives a
// restart; decisions are stored, shown and counted.
TEST_F(StreamSupervisorTest, TheAutoscalerScalesOutNowAndInAtTheNextRollOver) {
  stream_.SetPartitions(4, /*earliest=*/0, /*latest=*/10000);
  AddWorker("w1", /*capacity=*/8);
  v1::SupervisorSpec spec = AutoscaledSpec();
  spec.mutable_io_config()->mutable_auto_scaler_config()->set_min_trigger_scale_action_frequency_millis(
      10000);
  Submit(spec);
  Run();
  ASSERT_EQ(Status().active_groups_size(), 1);
  EXPECT_EQ(Status().auto_scaler().task_count(), 1);
  const std::string first = GroupTasks(0).at(0);
  WorkerOf(first)->Read(first, {{0, 10}, {1, 20}, {2, 30}, {3, 40}});

  // A backlog of ~40000 records: once 5 s of samples are in, scale out by 2.
  int runs = 0;
  while (Status().auto_scaler().task_count() == 1 && runs < 20) {
    clock_.Advance(absl::Seconds(1));
    Run();
    ++runs;
  }
  v1::SupervisorStatus status = Status();
  ASSERT_EQ(status.auto_scaler().task_count(), 3) << status.DebugString();
  EXPECT_GE(runs, 5) << "decided before the samples covered the range";
  EXPECT_TRUE(Contains(WorkerOf(first)->CallLog(),
                       SetEndOffsetsLine(first, "{0:10, 1:20, 2:30, 3:40}", true)))
      << "the reading group rolled over (finish), it was not killed";
  ASSERT_EQ(status.publishing_groups_size(), 1);
  ASSERT_EQ(status.active_groups_size(), 3) << status.DebugString();
  EXPECT_EQ(FromProto(ActiveGroup(0).start_offsets()), (OffsetMap{{0, 10}, {3, 40}}));
  EXPECT_EQ(FromProto(ActiveGroup(1).start_offsets()), (OffsetMap{{1, 20}}));
  EXPECT_EQ(FromProto(ActiveGroup(2).start_offsets()), (OffsetMap{{2, 30}}));
  ASSERT_TRUE(status.auto_scaler().has_last_decision());
  EXPECT_EQ(status.auto_scaler().last_decision().from_task_count(), 1);
  EXPECT_NE(status.auto_scaler().last_decision().reason().find("scale out"), std::string::npos);
  EXPECT_EQ(metrics_.GetCounter(metrics::kSupervisorScalingActions,
                                {{"datasource", "wiki"}, {"direction", "out"}})
                ->Value(),
            1);
  WorkerOf(first)->SetState(first, v1::TASK_STATE_SUCCESS);

  // Caught up: after the cooldown a scale-in is decided, and waits.
  for (int g = 0; g < 3; ++g) {
    const std::string task = GroupTasks(g).at(0);
    OffsetMap read;
    for (int p = g; p < 4; p += 3) read[p] = 10000;
    WorkerOf(task)->Read(task, read);
  }
  runs = 0;
  while (Status().auto_scaler().pending_task_count() == 0 && runs < 30) {
    clock_.Advance(absl::Seconds(1));
    Run();
    ++runs;
  }
  status = Status();
  ASSERT_EQ(status.auto_scaler().pending_task_count(), 2) << status.DebugString();
  EXPECT_GE(runs, 10) << "the cooldown (minTriggerScaleActionFrequencyMillis) was not kept";
  EXPECT_EQ(status.auto_scaler().task_count(), 3);
  EXPECT_EQ(status.active_groups_size(), 3) << "a scale-in waits for the roll-over";

  // The task duration passes: the three groups roll over into two.
  clock_.Advance(absl::Minutes(61));
  Run();
  status = Status();
  EXPECT_EQ(status.auto_scaler().task_count(), 2) << status.DebugString();
  EXPECT_EQ(status.auto_scaler().pending_task_count(), 0);
  ASSERT_EQ(status.active_groups_size(), 2) << status.DebugString();
  EXPECT_EQ(FromProto(ActiveGroup(0).start_offsets()), (OffsetMap{{0, 10000}, {2, 10000}}));
  EXPECT_EQ(FromProto(ActiveGroup(1).start_offsets()), (OffsetMap{{1, 10000}, {3, 10000}}));
  EXPECT_EQ(metrics_.GetCounter(metrics::kSupervisorScalingActions,
                                {{"datasource", "wiki"}, {"direction", "in"}})
                ->Value(),
            1);
  auto log = manager_->reads()->CommitLog("wiki");
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->scaling_decisions_size(), 2);
  EXPECT_EQ(log->scaling_decisions(1).from_task_count(), 3);
  EXPECT_EQ(log->scaling_decisions(1).to_task_count(), 2);
  EXPECT_LT(log->scaling_decisions(1).decided_at_ms(), log->scaling_decisions(1).applied_at_ms());

  StartManager();  // a supervisor restart keeps the count
  Run();
  status = Status();
  EXPECT_EQ(status.auto_scaler().task_count(), 2) << status.DebugString();
  EXPECT_EQ(status.active_groups_size(), 2);
  EXPECT_EQ(status.auto_scaler().last_decision().to_task_count(), 2);
}

TEST_F(StreamSupervisorTest, AScaleOutReplacesAPendingScaleIn) {
  stream_.SetPartitions(4, /*earliest=*/0, /*latest=*/100);
  AddWorker("w1", /*capacity=*/8);
  v1::SupervisorSpec spec = AutoscaledSpec();
  spec.mutable_io_config()->mutable_auto_scaler_config()->set_task_count_start(2);
  Submit(spec);
  Run();
  ASSERT_EQ(Status().active_groups_size(), 2) << "taskCountStart";
  for (int g = 0; g < 2; ++g) {
    const std::string task = GroupTasks(g).at(0);
    WorkerOf(task)->Read(task, {{g, 100}, {g + 2, 100}});
  }
  int runs = 0;
  while (Status().auto_scaler().pending_task_count() == 0 && runs < 20) {
    clock_.Advance(absl::Seconds(1));
    Run();
    ++runs;
  }
  ASSERT_EQ(Status().auto_scaler().pending_task_count(), 1) << Status().DebugString();

  for (int p = 0; p < 4; ++p) stream_.SetWatermarks(p, 0, 10000);  // a burst
  runs = 0;
  while (Status().auto_scaler().task_count() == 2 && runs < 20) {
    clock_.Advance(absl::Seconds(1));
    Run();
    ++runs;
  }
  const v1::SupervisorStatus status = Status();
  EXPECT_EQ(status.auto_scaler().task_count(), 4) << status.DebugString();
  EXPECT_EQ(status.auto_scaler().pending_task_count(), 0);
  EXPECT_EQ(status.active_groups_size(), 4);
  auto log = manager_->reads()->CommitLog("wiki");
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->scaling_decisions_size(), 1) << "the scale-in was never applied";
  EXPECT_EQ(log->scaling_decisions(0).from_task_count(), 2);
}

// ioConfig.topicPattern: each (topic, partition) gets a stream partition id
// that is stored before a group uses it and named in the task's spec; after
// a restart the stored ids stand (a topic that sorts first but comes later
// gets the next id, not 0), and the status names every id.
TEST_F(StreamSupervisorTest, TopicPatternIdsAreStoredBeforeUseAndKeptAcrossARestart) {
  AddWorker("w1");
  stream_.SetTopicPartition("clicks-us", 0, 0, 10);
  stream_.SetTopicPartition("clicks-eu", 0, 0, 20);
  v1::SupervisorSpec spec = Spec(/*task_count=*/2);
  spec.mutable_io_config()->clear_topic();
  spec.mutable_io_config()->set_topic_pattern("clicks-.*");
  Submit(spec);
  Run();
  auto stored = [&] {
    std::vector<std::string> out;
    EXPECT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto partitions = txn.StreamPartitions("wiki");
                      if (!partitions.ok()) return partitions.status();
                      for (const auto& p : *partitions) {
                        out.push_back(absl::StrCat(p.id(), "=", p.topic(), "[", p.partition(), "]"));
                      }
                      return absl::OkStatus();
                    })
                    .ok());
    return out;
  };
  EXPECT_EQ(stored(), (std::vector<std::string>{"0=clicks-eu[0]", "1=clicks-us[0]"}));
  const std::vector<std::string> group1 = GroupTasks(1);
  ASSERT_EQ(group1.size(), 1u);
  std::optional<testing::FakeTask> task = WorkerOf(group1[0])->Task(group1[0]);
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->spec.topic_pattern(), "clicks-.*");
  EXPECT_TRUE(task->spec.topic().empty());
  ASSERT_EQ(task->spec.stream_partitions_size(), 1);
  EXPECT_EQ(task->spec.stream_partitions(0).id(), 1);
  EXPECT_EQ(task->spec.stream_partitions(0).topic(), "clicks-us");
  EXPECT_EQ(task->spec.start_offsets().count(1), 1u);

  StartManager();  // a supervisor restart, with two more partitions
  stream_.SetTopicPartition("clicks-ap", 0, 0, 5);  // sorts first
  stream_.SetTopicPartition("clicks-eu", 1, 0, 5);
  Run();
  Run();
  EXPECT_EQ(stored(), (std::vector<std::string>{"0=clicks-eu[0]", "1=clicks-us[0]",
                                                "2=clicks-ap[0]", "3=clicks-eu[1]"}));
  const v1::SupervisorStatus status = Status();
  EXPECT_EQ(status.topic_pattern(), "clicks-.*");
  EXPECT_EQ(status.partitions(), 4);
  ASSERT_EQ(status.stream_partitions_size(), 4);
  EXPECT_EQ(status.stream_partitions(2).topic(), "clicks-ap");
  EXPECT_EQ(status.latest_offsets().at(0), 20) << "id 0 is still clicks-eu[0]";
}

TEST_F(StreamSupervisorTest, WithoutIdleConfigAStillStreamKeepsItsGroups) {
  AddWorker("w1");
  Submit(Spec());
  Run();
  const std::string task = GroupTasks(0).at(0);
  WorkerOf(task)->Read(task, {{0, 100}, {1, 100}});
  Run();
  clock_.Advance(absl::Minutes(30));
  Run();
  EXPECT_EQ(Status().state(), v1::SUPERVISOR_STATE_RUNNING);
  EXPECT_EQ(Status().active_groups_size(), 1);
}

// Hostile peers, point 6: an OffsetOutOfRange report is checked against
// Kafka's watermarks and the committed offset. One for an offset Kafka still
// holds never moves the committed offset (back), and says so; the reporting
// task is replaced. A true one (retention deleted committed-to-be records)
// resets forward and counts the loss; a committed offset past the latest
// (topic recreated) is never reset automatically and loses nothing.
TEST_F(StreamSupervisorTest, AnOutOfRangeReportIsCheckedAgainstKafkaBeforeAnyReset) {
  AddWorker("w1");
  v1::SupervisorSpec spec = Spec();
  spec.mutable_tuning_config()->set_reset_offset_automatically(true);
  Submit(spec);
  Run();
  v1::ResetOffsetsRequest to60;
  to60.set_datasource("wiki");
  (*to60.mutable_offsets())[0] = 60;
  ASSERT_TRUE(manager_->specs()->ResetOffsets(to60).ok());
  Run();
  ASSERT_EQ(Committed(), (OffsetMap{{0, 60}, {1, 0}}));
  stream_.SetWatermarks(0, 50, 100);
  auto report = [&](const std::string& task, int64_t offset) {
    v1::ReportOffsetOutOfRangeRequest request;
    request.set_datasource("wiki");
    request.set_task_id(task);
    (*request.mutable_offsets())[0] = offset;
    (*request.mutable_earliest_offsets())[0] = 90;
    return manager_->protocol()->OffsetOutOfRange(request);
  };
  // The group's live task, after runs that replace a killed one.
  auto live_task = [&]() -> std::string {
    for (int i = 0; i < 3; ++i) {
      Run();
      for (const std::string& t : GroupTasks(0)) {
        FakeTaskWorker* w = WorkerOf(t);
        if (w != nullptr && w->Task(t)->state == v1::TASK_STATE_READING) return t;
      }
    }
    ADD_FAILURE() << "no live task";
    return "none";
  };
  auto has_error = [&](const std::string& text) {
    const v1::SupervisorStatus status = Status();
    for (const v1::ErrorEvent& e : status.recent_errors()) {
      if (absl::StrContains(e.message(), text)) return true;
    }
    return false;
  };

  // False: Kafka holds [50, 100], committed 60. Before the check, the
  // offset went back to 50 (10 records ingested twice, "lost" in the log).
  std::string task = live_task();
  auto answer = report(task, 10);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->reset()) << answer->message();
  const std::string said = absl::StrCat("task ", task,
                                        " reported offset 10 of partition 0 out of range");
  EXPECT_TRUE(absl::StrContains(answer->message(), said)) << answer->message();
  EXPECT_TRUE(absl::StrContains(answer->message(), "Kafka holds [50, 100]")) << answer->message();
  EXPECT_TRUE(absl::StrContains(answer->message(), "not reset")) << answer->message();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 60}, {1, 0}}));
  EXPECT_TRUE(has_error(said)) << Status().DebugString();
  ASSERT_NE(WorkerOf(task), nullptr);
  EXPECT_EQ(WorkerOf(task)->Task(task)->state, v1::TASK_STATE_FAILED);
  // Its own offset, held by Kafka: false too.
  task = live_task();
  answer = report(task, 60);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->reset());
  EXPECT_EQ(Committed(), (OffsetMap{{0, 60}, {1, 0}}));

  // True: retention deleted up to 80; forward, 20 records lost.
  task = live_task();
  stream_.SetWatermarks(0, 80, 100);
  answer = report(task, 60);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->reset()) << answer->message();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 80}, {1, 0}}));
  EXPECT_TRUE(absl::StrContains(answer->message(), "20 records lost")) << answer->message();
  EXPECT_TRUE(has_error("ALERT: 20 records lost")) << Status().DebugString();

  // Committed past the latest (topic recreated): nothing lost, never back.
  task = live_task();
  stream_.SetWatermarks(0, 0, 30);
  answer = report(task, 80);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->reset()) << answer->message();
  EXPECT_TRUE(absl::StrContains(answer->message(), "no committed record was lost"))
      << answer->message();
  EXPECT_EQ(Committed(), (OffsetMap{{0, 80}, {1, 0}}));
}

}  // namespace
}  // namespace sluice::supervisor
