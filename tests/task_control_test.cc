// Pause / Resume / SetEndOffsets through the real TaskService of an
// in-process worker, rule by rule, and the RunTask / StopTask contract.
// The fake supervisor runs no rounds here: the test drives them.
#include <gtest/gtest.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/offsets.h"
#include "common/spec.h"
#include "tests/task_cluster.h"

namespace sluice::testing {
namespace {

using ::sluice::OffsetMap;

class TaskControlTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(c_.Start(/*auto_checkpoint=*/false, /*capacity=*/2).ok()); }

  std::string Run(const std::string& suffix, SpecOptions* spec_out = nullptr) {
    const std::string task_id = std::string(kTestBase) + "_" + suffix;
    SpecOptions spec = c_.Spec(task_id);
    if (spec_out != nullptr) {
      spec.max_rows_per_segment = spec_out->max_rows_per_segment;
      spec.intermediate_handoff_period = spec_out->intermediate_handoff_period;
      spec.checkpoint_retry_period = spec_out->checkpoint_retry_period;
      spec.poll_timeout_ms = spec_out->poll_timeout_ms;
    }
    c_.supervisor->AddTask(0, task_id);
    auto run = c_.client->RunTask(MakeSpec(spec));
    EXPECT_TRUE(run.ok()) << run.status();
    return task_id;
  }

  static absl::StatusCode Code(const absl::Status& s) { return s.code(); }

  TaskCluster c_;
};

TEST_F(TaskControlTest, SetEndOffsetsRulesOneByOne) {
  ASSERT_TRUE(c_.Produce(0, 30).ok());
  ASSERT_TRUE(c_.Produce(1, 20).ok());
  const std::string id = Run("00000001");
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 30}, {1, 20}}).ok());

  // Not paused: a final end needs a pause; a checkpoint's end behind what
  // was read is refused as already passed.
  auto running = c_.client->SetEndOffsets(id, {{0, 30}, {1, 20}}, true);
  EXPECT_EQ(running.status().code(), absl::StatusCode::kFailedPrecondition) << running.status();
  EXPECT_NE(running.status().message().find("paused"), std::string::npos);
  auto passed = c_.client->SetEndOffsets(id, {{0, 29}, {1, 20}}, false);
  EXPECT_EQ(passed.status().code(), absl::StatusCode::kAborted) << passed.status();

  auto paused = c_.client->Pause(id);
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_EQ(*paused, (OffsetMap{{0, 30}, {1, 20}}));
  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::TASK_STATE_PAUSED);

  // A partition the task does not read.
  auto foreign = c_.client->SetEndOffsets(id, {{0, 30}, {1, 20}, {5, 1}}, false);
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(foreign.status().message().find("partition 5"), std::string::npos);
  // A partition missing.
  auto partial = c_.client->SetEndOffsets(id, {{0, 30}}, false);
  EXPECT_EQ(partial.status().code(), absl::StatusCode::kInvalidArgument);
  // Behind what the task read.
  auto behind = c_.client->SetEndOffsets(id, {{0, 29}, {1, 20}}, false);
  EXPECT_EQ(behind.status().code(), absl::StatusCode::kAborted);
  EXPECT_NE(behind.status().message().find("current offset is 30"), std::string::npos);
  // No map at all.
  auto empty = c_.client->SetEndOffsets(id, {}, false);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  // Still paused after all the rejections, nothing changed.
  status = c_.client->Status(id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::TASK_STATE_PAUSED);
  EXPECT_EQ(status->checkpoints_size(), 1);

  // A checkpoint: closes sequence 0 at {30, 20}, opens 1, resumes.
  auto checkpoint = c_.client->SetEndOffsets(id, {{0, 30}, {1, 20}}, false);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_FALSE(checkpoint->duplicate());
  EXPECT_EQ(checkpoint->latest_sequence_id(), 1);
  // Sequence 0 is fully read: it gets published.
  ASSERT_TRUE(WaitFor([&] { return c_.supervisor->CommitLog().size() == 1; }, absl::Seconds(20)));
  EXPECT_EQ(c_.supervisor->CommitLog()[0].sequence_name(), std::string(kTestBase) + "_0");
  ASSERT_TRUE(WaitFor(
      [&] {
        auto s = c_.client->Status(id);
        return s.ok() && s->state() == v1::TASK_STATE_READING;
      },
      absl::Seconds(5)));

  // The exact repeat is recognised even though the task is not paused.
  auto repeat = c_.client->SetEndOffsets(id, {{0, 30}, {1, 20}}, false);
  ASSERT_TRUE(repeat.ok()) << repeat.status();
  EXPECT_TRUE(repeat->duplicate());
  EXPECT_EQ(repeat->latest_sequence_id(), 1);

  // finish=true beyond what exists: the task reads up to it, then publishes.
  ASSERT_TRUE(c_.client->Pause(id).ok());
  auto finish = c_.client->SetEndOffsets(id, {{0, 40}, {1, 25}}, true);
  ASSERT_TRUE(finish.ok()) << finish.status();
  EXPECT_FALSE(finish->duplicate());
  auto end = c_.client->Status(id);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(FromProto(end->end_offsets()), (OffsetMap{{0, 40}, {1, 25}}));
  // Its repeat is a duplicate; any other end is refused: the end is final.
  auto finish_again = c_.client->SetEndOffsets(id, {{0, 40}, {1, 25}}, true);
  ASSERT_TRUE(finish_again.ok());
  EXPECT_TRUE(finish_again->duplicate());
  ASSERT_TRUE(c_.client->Pause(id).ok());
  auto other_end = c_.client->SetEndOffsets(id, {{0, 45}, {1, 25}}, true);
  EXPECT_EQ(other_end.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(other_end.status().message().find("already has its end offsets"), std::string::npos);
  auto another_checkpoint = c_.client->SetEndOffsets(id, {{0, 35}, {1, 25}}, false);
  EXPECT_EQ(another_checkpoint.status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(c_.client->Resume(id).ok());

  // Records past the final end are never ingested.
  ASSERT_TRUE(c_.Produce(0, 20).ok());
  ASSERT_TRUE(c_.Produce(1, 10).ok());
  auto final_status = c_.WaitUntilFinal(id);
  ASSERT_TRUE(final_status.ok()) << final_status.status();
  ASSERT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
  EXPECT_EQ(final_status->row_stats().processed(), 40 + 25);
  EXPECT_EQ(FromProto(final_status->current_offsets()), (OffsetMap{{0, 40}, {1, 25}}));
  const absl::Status verified = VerifyExactlyOnce(
      *c_.supervisor, c_.deep.get(), kTestBase, c_.produced, {{0, 0}, {1, 0}}, {{0, 40}, {1, 25}});
  EXPECT_TRUE(verified.ok()) << verified;

  // A finished task can no longer be paused or steered.
  EXPECT_EQ(c_.client->Pause(id).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c_.client->SetEndOffsets(id, {{0, 40}, {1, 25}}, false).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(TaskControlTest, NothingIsIngestedWhilePaused) {
  ASSERT_TRUE(c_.Produce(0, 10).ok());
  ASSERT_TRUE(c_.Produce(1, 10).ok());
  const std::string id = Run("00000002");
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 10}, {1, 10}}).ok());
  auto paused = c_.client->Pause(id);
  ASSERT_TRUE(paused.ok()) << paused.status();
  auto before = c_.client->Status(id);
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(c_.Produce(0, 50).ok());
  ASSERT_TRUE(c_.Produce(1, 50).ok());
  absl::SleepFor(absl::Milliseconds(500));
  auto during = c_.client->Status(id);
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(during->state(), v1::TASK_STATE_PAUSED);
  EXPECT_EQ(FromProto(during->current_offsets()), *paused);
  EXPECT_EQ(during->row_stats().processed(), before->row_stats().processed());
  // Pause again: same answer at once.
  auto again = c_.client->Pause(id, 100);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *paused);
  auto resumed = c_.client->Resume(id);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(resumed->state(), v1::TASK_STATE_READING);
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 60}, {1, 60}}).ok());
  // Resuming a task that is not paused leaves it as it is.
  auto noop = c_.client->Resume(id);
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ(noop->state(), v1::TASK_STATE_READING);
}

// A task that has read everything waits in a Kafka poll for more; a Pause
// wakes the poll instead of waiting out its timeout.
TEST_F(TaskControlTest, AnIdleTaskPausesWithoutWaitingOutItsPoll) {
  ASSERT_TRUE(c_.Produce(0, 10).ok());
  SpecOptions spec;
  spec.poll_timeout_ms = 10000;
  const std::string id = Run("00000009", &spec);
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 10}, {1, 0}}).ok());
  absl::SleepFor(absl::Milliseconds(200));  // inside the next poll by now
  const absl::Time started = absl::Now();
  auto paused = c_.client->Pause(id, /*timeout_ms=*/8000);
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_LT(absl::Now() - started, absl::Seconds(2)) << "the pause waited for the poll timeout";
  ASSERT_TRUE(c_.client->Resume(id).ok());
}

TEST_F(TaskControlTest, APausedTaskAsksForItsCheckpointAgainUntilAnswered) {
  SpecOptions limits;
  limits.max_rows_per_segment = 10;
  limits.checkpoint_retry_period = "PT0.2S";
  ASSERT_TRUE(c_.Produce(0, 40).ok());
  ASSERT_TRUE(c_.Produce(1, 40).ok());
  const std::string id = Run("00000003", &limits);
  // The fake records the requests but runs no round: the task stays paused
  // and keeps asking.
  ASSERT_TRUE(
      WaitFor([&] { return c_.supervisor->CheckpointRequests().size() >= 3; }, absl::Seconds(20)));
  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::TASK_STATE_PAUSED);
  EXPECT_TRUE(status->awaiting_checkpoint());
  for (const auto& request : c_.supervisor->CheckpointRequests()) {
    EXPECT_EQ(request.task_id(), id);
    EXPECT_EQ(request.sequence_id(), 0);
    EXPECT_EQ(FromProto(request.start_offsets()), (OffsetMap{{0, 0}, {1, 0}}));
  }
  const OffsetMap at = FromProto(status->current_offsets());
  // The supervisor's answer: pause (already paused) and SetEndOffsets.
  auto paused = c_.client->Pause(id);
  ASSERT_TRUE(paused.ok());
  EXPECT_EQ(*paused, at);
  auto answer = c_.client->SetEndOffsets(id, at, false);
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_TRUE(WaitFor([&] { return c_.supervisor->CommitLog().size() == 1; }, absl::Seconds(20)));
  EXPECT_EQ(FromProto(c_.supervisor->CommitLog()[0].end_offsets()), at);
}

TEST_F(TaskControlTest, APauseWithoutFollowUpEndsByItself) {
  ASSERT_TRUE(c_.Produce(0, 10).ok());
  const std::string id = std::string(kTestBase) + "_00000008";
  SpecOptions spec = c_.Spec(id);
  spec.chat_timeout = "PT0.1S";  // 2 x 0.1 s x 2 retries = 0.4 s
  c_.supervisor->AddTask(0, id);
  ASSERT_TRUE(c_.client->RunTask(MakeSpec(spec)).ok());
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 10}, {1, 0}}).ok());
  ASSERT_TRUE(c_.client->Pause(id).ok());
  ASSERT_TRUE(c_.Produce(0, 10).ok());
  // No Resume, no SetEndOffsets: the task reads on after the bound.
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 20}, {1, 0}}).ok());
  auto status = c_.client->Status(id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::TASK_STATE_READING);
}

TEST_F(TaskControlTest, RunTaskIsIdempotentAndBoundedBySlots) {
  const std::string id = Run("00000004");
  SpecOptions spec = c_.Spec(id);
  auto again = c_.client->RunTask(MakeSpec(spec));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_running());
  EXPECT_EQ(again->status().task_id(), id);

  spec.max_rows_in_memory = 7;  // same id, another spec
  EXPECT_EQ(c_.client->RunTask(MakeSpec(spec)).status().code(), absl::StatusCode::kAlreadyExists);

  Run("00000005");  // the second slot
  SpecOptions third = c_.Spec(std::string(kTestBase) + "_00000006");
  EXPECT_EQ(c_.client->RunTask(MakeSpec(third)).status().code(),
            absl::StatusCode::kResourceExhausted);

  SpecOptions bad = c_.Spec("bad/id");
  EXPECT_EQ(c_.client->RunTask(MakeSpec(bad)).status().code(), absl::StatusCode::kInvalidArgument);
  SpecOptions no_bootstrap = c_.Spec(std::string(kTestBase) + "_00000007");
  no_bootstrap.bootstrap = "";
  EXPECT_EQ(c_.client->RunTask(MakeSpec(no_bootstrap)).status().code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(c_.client->Pause("unknown_task").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(c_.client->Status("unknown_task").status().code(), absl::StatusCode::kNotFound);

  // A stopped task frees its slot; it ends STOPPED only if it had read
  // something unpublished.
  ASSERT_TRUE(c_.Produce(0, 5).ok());
  ASSERT_TRUE(c_.WaitUntilRead(id, {{0, 5}, {1, 0}}).ok());
  auto stopped = c_.client->Stop(id, v1::STOP_MODE_GRACEFUL);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->status().state(), v1::TASK_STATE_STOPPED);
  EXPECT_TRUE(c_.supervisor->CommitLog().empty());
  auto stop_again = c_.client->Stop(id, v1::STOP_MODE_GRACEFUL);
  ASSERT_TRUE(stop_again.ok());
  EXPECT_EQ(stop_again->status().state(), v1::TASK_STATE_STOPPED);
  EXPECT_TRUE(c_.client->RunTask(MakeSpec(third)).ok());
  auto killed = c_.client->Stop(third.task_id, v1::STOP_MODE_KILL);
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->status().state(), v1::TASK_STATE_FAILED);
  EXPECT_NE(killed->status().error().find("killed"), std::string::npos);
  auto list = c_.client->List();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->tasks_size(), 3);
}

// Two replicas get a checkpoint's end while reading (the pauseless round
// as the supervisor runs it, driven by hand): neither pauses, both read
// through to the end in the old sequence and on into the next, and they
// build byte-identical segments for each sequence; exactly-once holds.
TEST_F(TaskControlTest, TwoReplicasTakeEndOffsetsWhileReadingAndBuildIdenticalSegments) {
  ASSERT_TRUE(c_.Produce(0, 40).ok());
  ASSERT_TRUE(c_.Produce(1, 30).ok());
  const std::string a = Run("00000011");
  const std::string b = Run("00000012");
  ASSERT_TRUE(c_.WaitUntilRead(a, {{0, 40}, {1, 30}}).ok());
  ASSERT_TRUE(c_.WaitUntilRead(b, {{0, 40}, {1, 30}}).ok());
  // The round: offsets without pausing, max + margin, SetEndOffsets.
  OffsetMap max;
  for (const std::string& id : {a, b}) {
    auto current = c_.client->CurrentOffsets(id);
    ASSERT_TRUE(current.ok()) << current.status();
    max = MaxOffsets(max, *current);
  }
  const OffsetMap end = {{0, max.at(0) + 15}, {1, max.at(1) + 15}};
  // An end behind what a replica read is refused as already passed.
  auto behind = c_.client->SetEndOffsets(a, {{0, 39}, {1, 30}}, false);
  EXPECT_EQ(behind.status().code(), absl::StatusCode::kAborted) << behind.status();
  EXPECT_NE(behind.status().message().find("already read past"), std::string::npos);
  for (const std::string& id : {a, b}) {
    auto set = c_.client->SetEndOffsets(id, end, false);
    ASSERT_TRUE(set.ok()) << id << ": " << set.status();
    EXPECT_EQ(set->latest_sequence_id(), 1);
    auto status = c_.client->Status(id);
    ASSERT_TRUE(status.ok());
    EXPECT_EQ(status->state(), v1::TASK_STATE_READING);
  }
  // More records: the replicas read through the end into sequence 1.
  ASSERT_TRUE(c_.Produce(0, 35).ok());
  ASSERT_TRUE(c_.Produce(1, 25).ok());
  ASSERT_TRUE(c_.WaitUntilRead(a, {{0, 75}, {1, 55}}).ok());
  ASSERT_TRUE(c_.WaitUntilRead(b, {{0, 75}, {1, 55}}).ok());
  auto finished = c_.supervisor->Finish(0, absl::Seconds(30));
  ASSERT_TRUE(finished.ok()) << finished.status();
  for (const std::string& id : {a, b}) {
    auto final_status = c_.WaitUntilFinal(id);
    ASSERT_TRUE(final_status.ok()) << final_status.status();
    EXPECT_EQ(final_status->state(), v1::TASK_STATE_SUCCESS) << final_status->error();
    EXPECT_EQ(final_status->row_stats().processed(), 75 + 55);
    EXPECT_EQ(final_status->row_stats().checkpoints(), 2);  // the end, then the final end
  }
  const absl::Status verified = VerifyExactlyOnce(
      *c_.supervisor, c_.deep.get(), kTestBase, c_.produced, {{0, 0}, {1, 0}}, {{0, 75}, {1, 55}});
  EXPECT_TRUE(verified.ok()) << verified;
  // Each replica published each sequence (one commit, the other told so):
  // the same segments, byte for byte (checksums and sizes).
  std::map<std::string, std::map<std::string, std::map<std::string, std::string>>> by_sequence;
  for (const v1::PublishSegmentsRequest& r : c_.supervisor->PublishRequests()) {
    for (const v1::SegmentDescriptor& d : r.segments()) {
      by_sequence[r.sequence_name()][r.task_id()][d.id()] =
          absl::StrCat(d.checksum(), "/", d.size_bytes(), "/", d.num_rows());
    }
  }
  ASSERT_EQ(by_sequence.size(), 2u);
  const std::string first = std::string(kTestBase) + "_0";
  ASSERT_EQ(by_sequence.count(first), 1u);
  for (const auto& [sequence, replicas] : by_sequence) {
    ASSERT_EQ(replicas.size(), 2u) << sequence;
    EXPECT_EQ(replicas.at(a), replicas.at(b)) << sequence;
  }
  // Sequence 0 ends exactly at the end set while reading.
  for (const v1::CommittedSequence& s : c_.supervisor->CommitLog()) {
    if (s.sequence_name() == first) {
      EXPECT_EQ(FromProto(s.end_offsets()), end);
    }
  }
}

}  // namespace
}  // namespace sluice::testing
