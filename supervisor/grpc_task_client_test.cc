// The real gRPC TaskClient against a scripted task worker on loopback.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/spec.h"
#include "supervisor/grpc_task_client.h"
#include "supervisor/testing/fake_task_worker.h"

namespace sluice::supervisor {
namespace {

using testing::FakeTaskWorker;
using testing::PauseBehavior;

class GrpcTaskClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto worker = FakeTaskWorker::Start({});
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    ChatOptions options;
    options.timeout = absl::Milliseconds(300);
    options.attempts = 3;
    options.initial_backoff = absl::Milliseconds(10);
    client_ = NewGrpcTaskClient(options);
    spec_.set_task_id("wiki_0123456789abcdef_00000001");
    spec_.set_datasource("wiki");
    spec_.set_base_sequence_name("wiki_0123456789abcdef");
    (*spec_.mutable_start_offsets())[0] = 10;
    v1::Checkpoint* checkpoint = spec_.add_checkpoints();
    checkpoint->set_sequence_id(0);
    (*checkpoint->mutable_offsets())[0] = 10;
  }

  std::unique_ptr<FakeTaskWorker> worker_;
  std::unique_ptr<TaskClient> client_;
  v1::TaskSpec spec_;
};

TEST_F(GrpcTaskClientTest, RunPauseSetEndOffsetsResume) {
  auto run = client_->RunTask(worker_->address(), spec_);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->already_running());
  run = client_->RunTask(worker_->address(), spec_);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->already_running());

  worker_->Read(spec_.task_id(), {{0, 25}});
  auto paused = client_->Pause(worker_->address(), spec_.task_id());
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_EQ(FromProto(paused->current_offsets()), (OffsetMap{{0, 25}}));

  auto set = client_->SetEndOffsets(worker_->address(), spec_.task_id(), {{0, 30}}, false);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_FALSE(set->duplicate());
  EXPECT_EQ(set->latest_sequence_id(), 1);
  // An exact repeat only resumes.
  set = client_->SetEndOffsets(worker_->address(), spec_.task_id(), {{0, 30}}, false);
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->duplicate());

  auto checkpoints = client_->GetCheckpoints(worker_->address(), spec_.task_id());
  ASSERT_TRUE(checkpoints.ok());
  EXPECT_EQ(checkpoints->size(), 2u);
  auto status = client_->GetTaskStatus(worker_->address(), spec_.task_id());
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::TASK_STATE_READING);
  EXPECT_TRUE(client_->Resume(worker_->address(), spec_.task_id()).ok());
  EXPECT_EQ(client_->ListTasks(worker_->address(), "wiki")->size(), 1u);
}

TEST_F(GrpcTaskClientTest, NonRetryableErrorsComeBackAtOnceWithTheirCode) {
  auto missing = client_->Pause(worker_->address(), "no-such-task");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "Pause no-such-task on "))
      << missing.status();
  EXPECT_EQ(worker_->Calls("Pause"), 1);

  ASSERT_TRUE(client_->RunTask(worker_->address(), spec_).ok());
  // Not paused: the task refuses new end offsets.
  auto refused = client_->SetEndOffsets(worker_->address(), spec_.task_id(), {{0, 30}}, false);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(GrpcTaskClientTest, ATaskThatNeverPausesIsRetriedThenGivenUpOn) {
  ASSERT_TRUE(client_->RunTask(worker_->address(), spec_).ok());
  worker_->SetScript(spec_.task_id(), {PauseBehavior::kNeverPause, false});
  auto paused = client_->Pause(worker_->address(), spec_.task_id());
  EXPECT_EQ(paused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(worker_->Calls("Pause"), 3);  // every attempt
}

TEST_F(GrpcTaskClientTest, AnUnreachableWorkerIsUnavailableWithinTheChatBudget) {
  const std::string address = worker_->address();
  worker_->Shutdown();
  const absl::Time start = absl::Now();
  auto status = client_->GetTaskStatus(address, spec_.task_id());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable) << status.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

}  // namespace
}  // namespace sluice::supervisor
