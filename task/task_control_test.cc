#include "task/task_control.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/metrics/registry.h"

namespace sluice::task {
namespace {

class TaskControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = absl::StrCat(
        ::testing::TempDir(), "/task_control_test_",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir).ok());
    ASSERT_TRUE(MakeDirs(dir).ok());
    store_ = std::make_unique<SequenceStore>(dir + "/sequences.json", "wiki",
                                             std::vector<int32_t>{0});
  }

  std::unique_ptr<TaskControl> MakeControl(absl::Duration self_resume_after,
                                           absl::Duration retry = absl::Milliseconds(10)) {
    TaskControlOptions options;
    options.paused_per_checkpoint = &paused_;
    options.task_id = "t1";
    options.log_prefix = "[task t1]";
    options.self_resume_after = self_resume_after;
    options.checkpoint_retry_period = retry;
    options.sequences = store_.get();
    return std::make_unique<TaskControl>(std::move(options));
  }

  void Load() { ASSERT_TRUE(store_->Load({{0, {{0, 100}}}}).ok()); }

  // Parks `control` on a thread, as the read loop does.
  std::thread ParkInBackground(TaskControl* control, TaskControl::CheckpointAsker ask = nullptr) {
    return std::thread([this, control, ask] {
      bool asked = false;
      auto asker = ask ? ask : [](const Sequence&) {
        return absl::StatusOr<v1::CheckpointDataSourceMetadataResponse>(
            absl::InternalError("unexpected"));
      };
      while (!control->interrupted()) absl::SleepFor(absl::Milliseconds(1));
      parked_ = control->Park(asker, [this] { ++notifications_; }, &asked);
      asked_ = asked;
    });
  }

  static v1::CheckpointDataSourceMetadataResponse Accepted() {
    v1::CheckpointDataSourceMetadataResponse response;
    response.set_accepted(true);
    return response;
  }

  metrics::Histogram paused_{std::vector<double>{0.000001, 1}};
  std::unique_ptr<SequenceStore> store_;
  std::atomic<bool> parked_{false};
  std::atomic<bool> asked_{false};
  std::atomic<int> notifications_{0};
};

TEST_F(TaskControlTest, PauseAnswersWithTheParkedOffsetsAndResumeReads) {
  auto control = MakeControl(absl::InfiniteDuration());
  Load();
  control->SetState(v1::TASK_STATE_READING);
  control->PublishProgress({{0, 123}}, v1::RowStats());
  EXPECT_FALSE(control->interrupted());
  std::thread loop = ParkInBackground(control.get());
  absl::StatusOr<OffsetMap> paused = control->Pause(absl::Seconds(10));
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_EQ(*paused, (OffsetMap{{0, 123}}));
  EXPECT_EQ(control->state(), v1::TASK_STATE_PAUSED);
  EXPECT_EQ(control->Resume(), v1::TASK_STATE_READING);
  loop.join();
  EXPECT_TRUE(parked_);
  EXPECT_FALSE(asked_);
  EXPECT_EQ(notifications_, 2);  // PAUSED, then READING
  EXPECT_FALSE(control->interrupted());
}

TEST_F(TaskControlTest, PauseIsUnavailableWhenTheLoopDoesNotPark) {
  auto control = MakeControl(absl::InfiniteDuration());
  control->SetState(v1::TASK_STATE_READING);
  absl::StatusOr<OffsetMap> paused = control->Pause(absl::Milliseconds(20));
  EXPECT_EQ(paused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(control->interrupted());  // the pause stays requested
  control->Resume();
  EXPECT_FALSE(control->interrupted());
}

TEST_F(TaskControlTest, SetEndOffsetsNeedsTheListAndAPauseThenResumes) {
  auto control = MakeControl(absl::InfiniteDuration());
  control->SetState(v1::TASK_STATE_STARTING);
  absl::StatusOr<v1::SetEndOffsetsResponse> early = control->SetEndOffsets({{0, 150}}, false);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(early.status().message().find("is starting"), std::string::npos);
  Load();
  control->SetState(v1::TASK_STATE_READING);
  control->PublishProgress({{0, 140}}, v1::RowStats());
  // Not paused: an end behind what was read is refused as already passed;
  // a final end wants a pause.
  EXPECT_EQ(control->SetEndOffsets({{0, 130}}, false).status().code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(control->SetEndOffsets({{0, 150}}, true).status().code(),
            absl::StatusCode::kFailedPrecondition);

  std::thread loop = ParkInBackground(control.get());
  ASSERT_TRUE(control->Pause(absl::Seconds(10)).ok());
  int64_t seen = 0;
  EXPECT_FALSE(control->TakeResume(&seen));
  absl::StatusOr<v1::SetEndOffsetsResponse> set = control->SetEndOffsets({{0, 150}}, false);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_FALSE(set->duplicate());
  EXPECT_EQ(set->latest_sequence_id(), 1);
  loop.join();
  EXPECT_TRUE(control->TakeResume(&seen));
  EXPECT_FALSE(control->TakeResume(&seen));
  v1::TaskStatus status;
  control->FillStatus({}, &status);
  EXPECT_EQ(status.row_stats().checkpoints(), 1);
  EXPECT_EQ(status.checkpoints_size(), 2);
  EXPECT_EQ(status.state(), v1::TASK_STATE_READING);
}

TEST_F(TaskControlTest, ACheckpointTheTaskAskedForIsAskedAgainUntilAnswered) {
  auto control = MakeControl(absl::Milliseconds(1));  // must not self-resume
  Load();
  control->SetState(v1::TASK_STATE_READING);
  control->PublishProgress({{0, 110}}, v1::RowStats());
  ASSERT_TRUE(control->RequestCheckpoint("maxRowsPerSegment", 0, true));
  EXPECT_TRUE(control->interrupted());
  // One at a time.
  EXPECT_FALSE(control->RequestCheckpoint("maxTotalRows", 0, true));
  std::atomic<int> asks{0};
  std::thread loop = ParkInBackground(control.get(), [&asks](const Sequence& latest) {
    EXPECT_EQ(latest.id, 0);
    EXPECT_EQ(latest.start, (OffsetMap{{0, 100}}));
    ++asks;
    v1::CheckpointDataSourceMetadataResponse response;
    response.set_accepted(true);
    return absl::StatusOr<v1::CheckpointDataSourceMetadataResponse>(response);
  });
  while (asks < 3) absl::SleepFor(absl::Milliseconds(1));
  v1::TaskStatus status;
  control->FillStatus({}, &status);
  EXPECT_TRUE(status.awaiting_checkpoint());
  EXPECT_EQ(status.state(), v1::TASK_STATE_PAUSED);
  EXPECT_EQ(status.error(), "waiting for the supervisor's end offsets");
  // The supervisor pauses (already parked) and sets the end offsets.
  ASSERT_TRUE(control->Pause(absl::Seconds(10)).ok());
  ASSERT_TRUE(control->SetEndOffsets({{0, 110}}, false).ok());
  loop.join();
  EXPECT_TRUE(asked_);
  status.Clear();
  control->FillStatus({}, &status);
  EXPECT_FALSE(status.awaiting_checkpoint());
  EXPECT_EQ(status.error(), "");
  EXPECT_EQ(status.state(), v1::TASK_STATE_READING);
}

TEST_F(TaskControlTest, AFailedCheckpointRequestShowsInTheError) {
  auto control = MakeControl(absl::InfiniteDuration());
  Load();
  control->SetState(v1::TASK_STATE_READING);
  ASSERT_TRUE(control->RequestCheckpoint("intermediateHandoffPeriod", 0, true));
  std::atomic<int> asks{0};
  std::thread loop = ParkInBackground(control.get(), [&asks](const Sequence&) {
    ++asks;
    return absl::StatusOr<v1::CheckpointDataSourceMetadataResponse>(
        absl::UnavailableError("no supervisor"));
  });
  while (asks < 2) absl::SleepFor(absl::Milliseconds(1));
  v1::TaskStatus status;
  control->FillStatus({}, &status);
  EXPECT_EQ(status.error().rfind("checkpoint request failed (", 0), 0u) << status.error();
  control->Resume();
  loop.join();
  status.Clear();
  control->FillStatus({}, &status);
  EXPECT_EQ(status.error(), "");
}

TEST_F(TaskControlTest, ASupervisorPauseEndsByItselfAtTheDeadline) {
  auto control = MakeControl(absl::Milliseconds(50));
  Load();
  control->SetState(v1::TASK_STATE_READING);
  std::thread loop = ParkInBackground(control.get());
  const absl::Time start = absl::Now();
  ASSERT_TRUE(control->Pause(absl::Seconds(10)).ok());
  loop.join();  // no Resume: the deadline ends the pause
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(50));
  EXPECT_TRUE(parked_);
  EXPECT_EQ(control->state(), v1::TASK_STATE_READING);
  EXPECT_FALSE(control->interrupted());
}

TEST_F(TaskControlTest, StopsAndTheirOrder) {
  auto control = MakeControl(absl::InfiniteDuration());
  Load();
  control->SetState(v1::TASK_STATE_READING);
  std::atomic<int> wakes{0};
  control->SetWaker([&wakes] { ++wakes; });
  EXPECT_FALSE(control->stop_requested());
  control->Stop(v1::STOP_MODE_GRACEFUL, "suspend");
  EXPECT_TRUE(control->interrupted());
  EXPECT_EQ(wakes, 1);
  std::string reason;
  EXPECT_EQ(control->stop_kind(&reason), StopKind::kGraceful);
  EXPECT_EQ(reason, "suspend");
  control->Stop(v1::STOP_MODE_KILL, "replaced");
  EXPECT_EQ(control->stop_kind(&reason), StopKind::kKill);
  EXPECT_EQ(reason, "replaced");
  control->Stop(v1::STOP_MODE_GRACEFUL, "again");  // a kill is not downgraded
  EXPECT_EQ(control->stop_kind(&reason), StopKind::kKill);
  control->RequestShutdown();  // a stop is already requested
  EXPECT_EQ(control->stop_kind(nullptr), StopKind::kKill);

  absl::StatusOr<OffsetMap> paused = control->Pause(absl::Seconds(1));
  EXPECT_EQ(paused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(paused.status().message().find("stopping"), std::string::npos);
  EXPECT_EQ(control->SetEndOffsets({{0, 100}}, true).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(control->Wait(absl::Seconds(10)));  // returns at once: stopped
  bool asked = true;
  EXPECT_FALSE(control->Park(nullptr, [] {}, &asked));  // a stop does not park

  EXPECT_FALSE(control->WaitFinished(absl::Milliseconds(1)));
  control->MarkEnded({{0, 105}});
  control->Finish(v1::TASK_STATE_FAILED, "killed by the supervisor: replaced");
  EXPECT_TRUE(control->finished());
  EXPECT_TRUE(control->WaitFinished(absl::Milliseconds(1)));
  v1::TaskStatus status;
  control->FillStatus({}, &status);
  EXPECT_EQ(status.state(), v1::TASK_STATE_FAILED);
  EXPECT_EQ(status.current_offsets().at(0), 105);
  EXPECT_GT(status.end_time_ms(), 0);
  control->SetWaker(nullptr);
}

TEST_F(TaskControlTest, ShutdownIsAStopOfItsOwnKind) {
  auto control = MakeControl(absl::InfiniteDuration());
  control->RequestShutdown();
  EXPECT_TRUE(control->stop_requested());
  EXPECT_EQ(control->stop_kind(nullptr), StopKind::kShutdown);
}

TEST_F(TaskControlTest, ProgressAndParseErrorsShowInTheStatus) {
  auto control = MakeControl(absl::InfiniteDuration());
  Load();
  v1::RowStats counters;
  counters.set_processed(10);
  counters.set_unparseable(1);
  counters.set_persists(2);
  counters.set_checkpoints(99);  // not the loop's to say
  control->PublishProgress({{0, 111}}, counters);
  for (int i = 0; i < 5; ++i) {
    v1::ParseErrorSample sample;
    sample.set_offset(i);
    control->AddParseError(sample, 3, 2 + i);
  }
  v1::TaskStatus status;
  control->FillStatus({}, &status);
  EXPECT_EQ(status.current_offsets().at(0), 111);
  EXPECT_EQ(status.row_stats().processed(), 10);
  EXPECT_EQ(status.row_stats().unparseable(), 6);
  EXPECT_EQ(status.row_stats().persists(), 2);
  EXPECT_EQ(status.row_stats().checkpoints(), 0);
  ASSERT_EQ(status.recent_parse_errors_size(), 3);
  EXPECT_EQ(status.recent_parse_errors(0).offset(), 2);
  EXPECT_TRUE(control->AllReadIsPublished() == false);  // read past the start of wiki_0
}

TEST_F(TaskControlTest, EndOffsetsWhileReadingAreCheckedAgainstTheClaims) {
  auto control = MakeControl(absl::InfiniteDuration());
  Load();
  control->SetState(v1::TASK_STATE_READING);
  control->PublishProgress({{0, 140}}, v1::RowStats());
  // The loop claimed records up to 160 (routing them now), published 140.
  const int64_t generation = control->Claim({{0, 160}});
  absl::StatusOr<v1::SetEndOffsetsResponse> inside = control->SetEndOffsets({{0, 150}}, false);
  EXPECT_EQ(inside.status().code(), absl::StatusCode::kAborted) << inside.status();
  EXPECT_NE(inside.status().message().find("already read past"), std::string::npos);
  EXPECT_EQ(control->sequences_generation(), generation);
  EXPECT_FALSE(store_->Latest()->checkpointed);
  // At the claims: no claimed record is at or past it. Accepted, no pause.
  absl::StatusOr<v1::SetEndOffsetsResponse> set = control->SetEndOffsets({{0, 160}}, false);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->latest_sequence_id(), 1);
  EXPECT_FALSE(control->interrupted());
  EXPECT_EQ(control->state(), v1::TASK_STATE_READING);
  // The next claim tells the loop to refresh its routes.
  EXPECT_NE(control->Claim({{0, 170}}), generation);
  // Observed once, with no time paused.
  const metrics::Histogram::Snapshot observed = paused_.Read();
  EXPECT_EQ(observed.count, 1u);
  EXPECT_EQ(observed.cumulative[0], 1u);
  // The next sequence's end must be at or past the claims too.
  EXPECT_EQ(control->SetEndOffsets({{0, 165}}, false).status().code(),
            absl::StatusCode::kAborted);
}

TEST_F(TaskControlTest, EndOffsetsRacingTheClaimsNeverCutAClaimedRecord) {
  // A loop claims offsets one at a time while the supervisor sets end
  // offsets without pausing. A claim answered with generation g was made
  // before the (g+1)-th end was accepted, so that end must not be below it.
  auto control = MakeControl(absl::InfiniteDuration());
  Load();
  control->SetState(v1::TASK_STATE_READING);
  std::atomic<int64_t> claimed{100};
  std::atomic<bool> stop{false};
  std::map<int64_t, int64_t> max_claim_by_generation;  // the loop thread's
  std::thread loop([&] {
    // Claims until told to stop, so the race lasts however the threads are
    // scheduled (a loop of fixed length could finish before the first end).
    for (int64_t o = 101; !stop; ++o) {
      const int64_t generation = control->Claim({{0, o}});
      int64_t& max_claim = max_claim_by_generation[generation];
      max_claim = std::max(max_claim, o);
      claimed = o;
    }
  });
  int refused = 0;
  int set_ok = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  for (int attempts = 0; (set_ok < 20 || refused < 20) && absl::Now() < deadline; ++attempts) {
    // Sometimes behind the claims (refused), sometimes ahead (accepted).
    const int64_t end = claimed + (attempts % 2 == 0 ? 2 : -1);
    absl::StatusOr<v1::SetEndOffsetsResponse> set = control->SetEndOffsets({{0, end}}, false);
    if (set.ok()) {
      ++set_ok;
    } else {
      ASSERT_TRUE(set.status().code() == absl::StatusCode::kAborted ||
                  set.status().code() == absl::StatusCode::kInvalidArgument)
          << set.status();
      ++refused;
    }
  }
  stop = true;
  loop.join();
  const SequenceList list = store_->Snapshot();
  const int64_t accepted = static_cast<int64_t>(list.sequences().size()) - 1;
  EXPECT_EQ(control->sequences_generation(), accepted);
  for (const auto& [generation, max_claim] : max_claim_by_generation) {
    if (generation >= accepted) continue;  // no end accepted after it
    EXPECT_GE(list.sequences()[generation].end.at(0), max_claim)
        << "end " << generation + 1 << " cut a record claimed before it";
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

TEST_F(TaskControlTest, AnEarlyRequestReadsOnAndParksOnlyWhenFull) {
  auto control = MakeControl(absl::InfiniteDuration(), absl::Hours(1));
  Load();
  control->SetState(v1::TASK_STATE_READING);
  control->PublishProgress({{0, 190}}, v1::RowStats());
  // Not the latest sequence: nothing.
  EXPECT_FALSE(control->RequestCheckpoint("maxRowsPerSegment (early)", 7, false));
  ASSERT_TRUE(control->RequestCheckpoint("maxRowsPerSegment (early)", 0, false));
  EXPECT_FALSE(control->interrupted());
  EXPECT_FALSE(control->RequestCheckpoint("maxRowsPerSegment (early)", 0, false));
  std::atomic<int> asks{0};
  TaskControl::CheckpointAsker ask = [&asks](const Sequence& latest) {
    EXPECT_EQ(latest.id, 0);
    ++asks;
    return absl::StatusOr<v1::CheckpointDataSourceMetadataResponse>(Accepted());
  };
  EXPECT_TRUE(control->AskIfDue(ask));
  EXPECT_FALSE(control->AskIfDue(ask));  // next one in an hour
  EXPECT_EQ(asks, 1);
  v1::TaskStatus status;
  control->FillStatus({}, &status);
  EXPECT_TRUE(status.awaiting_checkpoint());
  EXPECT_EQ(status.state(), v1::TASK_STATE_READING);
  // Full before the end offsets came: it parks, without asking again.
  EXPECT_FALSE(control->RequestCheckpoint("maxRowsPerSegment", 0, true));
  EXPECT_TRUE(control->interrupted());
  std::thread loop = ParkInBackground(control.get(), ask);
  absl::StatusOr<OffsetMap> paused = control->Pause(absl::Seconds(10));
  ASSERT_TRUE(paused.ok()) << paused.status();
  absl::SleepFor(absl::Milliseconds(5));
  ASSERT_TRUE(control->SetEndOffsets(*paused, false).ok());
  loop.join();
  EXPECT_TRUE(asked_);
  EXPECT_EQ(asks, 1);
  // Observed when the park ended, with the time parked.
  const metrics::Histogram::Snapshot observed = paused_.Read();
  EXPECT_EQ(observed.count, 1u);
  EXPECT_EQ(observed.cumulative[0], 0u);
  EXPECT_GE(observed.sum, 0.005);
}

}  // namespace
}  // namespace sluice::task
