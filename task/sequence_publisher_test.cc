// The publisher's outcome rules over a scripted supervisor, with sequences
// that produced no segment files (a range of records that all failed to
// parse): what is tested is the PublishSegments answer handling, the retry
// codes and the PublishListener notification.
#include "task/sequence_publisher.h"
#include "task/testing/unimplemented_supervisor_client.h"

#include <gtest/gtest.h>

#include <deque>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"

namespace sluice::task {
namespace {

class ScriptedSupervisor : public testing::UnimplementedSupervisorClient {
 public:
  // Answers of the next PublishSegments calls (OK once the script ends).
  void ScriptPublish(std::vector<absl::Status> answers) {
    absl::MutexLock lock(&mu_);
    publish_answers_.assign(answers.begin(), answers.end());
  }
  void SetCommitted(v1::GetPublishedSegmentsResponse response) {
    absl::MutexLock lock(&mu_);
    committed_ = std::move(response);
  }
  int publish_calls() const {
    absl::MutexLock lock(&mu_);
    return publish_calls_;
  }

  absl::StatusOr<v1::PublishSegmentsResponse> PublishSegments(
      const v1::PublishSegmentsRequest& request) override {
    absl::MutexLock lock(&mu_);
    ++publish_calls_;
    EXPECT_EQ(request.sequence_name(), "b_0");
    if (!publish_answers_.empty()) {
      const absl::Status answer = publish_answers_.front();
      publish_answers_.pop_front();
      if (!answer.ok()) return answer;
    }
    return v1::PublishSegmentsResponse();
  }
  absl::StatusOr<v1::GetPublishedSegmentsResponse> GetPublishedSegments(
      const v1::GetPublishedSegmentsRequest&) override {
    absl::MutexLock lock(&mu_);
    return committed_;
  }
  absl::StatusOr<v1::ListSegmentsResponse> ListSegments(const v1::ListSegmentsRequest&) override {
    return v1::ListSegmentsResponse();
  }
  absl::StatusOr<v1::GetHandoffStatusResponse> GetHandoffStatus(
      const v1::GetHandoffStatusRequest&) override {
    return v1::GetHandoffStatusResponse();
  }
  absl::Status ReportTaskStatus(const v1::ReportTaskStatusRequest&) override {
    return absl::OkStatus();
  }

 private:
  mutable absl::Mutex mu_;
  std::deque<absl::Status> publish_answers_ ABSL_GUARDED_BY(mu_);
  int publish_calls_ ABSL_GUARDED_BY(mu_) = 0;
  v1::GetPublishedSegmentsResponse committed_ ABSL_GUARDED_BY(mu_);
};

class RecordingListener : public PublishListener {
 public:
  absl::Status OnPublished(int32_t sequence_id) override {
    absl::MutexLock lock(&mu_);
    published_.push_back(sequence_id);
    return absl::OkStatus();
  }
  std::vector<int32_t> published() const {
    absl::MutexLock lock(&mu_);
    return published_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<int32_t> published_ ABSL_GUARDED_BY(mu_);
};

// Sequence 0 covers [10, 20) of partition 0 and produced no segments.
ClosedSequence Closed() {
  ClosedSequence closed;
  closed.sequence.id = 0;
  closed.sequence.name = "b_0";
  closed.sequence.start = {{0, 10}};
  closed.sequence.end = {{0, 20}};
  closed.sequence.checkpointed = true;
  closed.counts[0].set_unparseable(10);
  closed.closed_at = absl::Now();
  return closed;
}

class SequencePublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/sequence_publisher_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir_).ok());
    ASSERT_TRUE(MakeDirs(dir_).ok());
    SequencePublisherOptions options = BaseOptions();
    options.min_backoff = absl::Milliseconds(1);
    options.max_backoff = absl::Milliseconds(5);
    publisher_ = std::make_unique<SequencePublisher>(std::move(options));
  }
  // Task t1 of datasource "wiki", with this test's directories, supervisor
  // and listener.
  SequencePublisherOptions BaseOptions() {
    SequencePublisherOptions options;
    options.task_id = "t1";
    options.datasource = "wiki";
    options.topic = "wiki";
    options.task_dir = dir_;
    options.supervisor = &supervisor_;
    options.listener = &listener_;
    options.log_prefix = "[task t1]";
    options.metrics = TaskMetrics::For(nullptr, "wiki");
    return options;
  }
  // Publishes Closed() and waits until the publisher is idle or failed.
  void Publish() {
    publisher_->Start();
    publisher_->Enqueue(Closed());
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!publisher_->WaitIdle(absl::Milliseconds(50)) && publisher_->failure().ok() &&
           absl::Now() < deadline) {
    }
  }

  std::string dir_;
  ScriptedSupervisor supervisor_;
  RecordingListener listener_;
  std::unique_ptr<SequencePublisher> publisher_;
};

// An engine that only counts the builds asked of it (and fails them: the
// test is about when a build starts, not what it makes).
class CountingEngine : public SegmentEngine {
 public:
  std::unique_ptr<RowParser> NewParser() override { return nullptr; }
  std::unique_ptr<SegmentIndex> NewIndex(const v1::Interval&) override { return nullptr; }
  absl::StatusOr<BuiltSegment> BuildSegment(const std::vector<std::string>&,
                                            const SegmentBuildInfo&, const std::string&) override {
    ++builds;
    return absl::InternalError("counting engine");
  }
  std::atomic<int> builds{0};
};

// The worker's build slots: a segment build waits while every slot is
// taken (by another task's build), and starts once one is free.
TEST_F(SequencePublisherTest, ASegmentBuildWaitsForAFreeBuildSlot) {
  CountingEngine engine;
  BuildSlots slots(1);
  SequencePublisherOptions options = BaseOptions();
  options.engine = &engine;
  options.build_slots = &slots;
  SequencePublisher publisher(std::move(options));
  ClosedSequence closed = Closed();
  state::SegmentState segment;
  segment.set_segment_id("wiki_s0");
  segment.set_interval_start_ms(0);
  segment.set_interval_end_ms(3600000);
  closed.segments.push_back(segment);

  auto other_build = std::make_unique<BuildSlot>(&slots, [] { return false; });
  ASSERT_TRUE(other_build->held());
  publisher.Start();
  publisher.Enqueue(closed);
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(engine.builds.load(), 0);
  other_build.reset();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (engine.builds.load() == 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(engine.builds.load(), 1);
  publisher.Stop();
}

TEST_F(SequencePublisherTest, UnknownOutcomesAreRetriedThenTheListenerIsTold) {
  supervisor_.ScriptPublish({absl::UnavailableError("earlier group"),
                             absl::DeadlineExceededError("slow"), absl::InternalError("lost"),
                             absl::UnknownError("?"), absl::CancelledError("transport")});
  Publish();
  EXPECT_TRUE(publisher_->failure().ok()) << publisher_->failure();
  EXPECT_EQ(supervisor_.publish_calls(), 6);
  EXPECT_EQ(listener_.published(), std::vector<int32_t>{0});
  EXPECT_EQ(publisher_->sequences_published(), 1);
  EXPECT_EQ(publisher_->pending(), 0);
}

TEST_F(SequencePublisherTest, AbortedButCommittedAsOursIsASuccess) {
  supervisor_.ScriptPublish({absl::AbortedError("stored offsets are past the start")});
  v1::GetPublishedSegmentsResponse committed;
  committed.set_sequence_committed(true);
  (*committed.mutable_sequence_start_offsets())[0] = 10;
  (*committed.mutable_sequence_end_offsets())[0] = 20;
  supervisor_.SetCommitted(committed);
  Publish();
  EXPECT_TRUE(publisher_->failure().ok()) << publisher_->failure();
  EXPECT_EQ(supervisor_.publish_calls(), 1);  // ABORTED is not retried
  EXPECT_EQ(listener_.published(), std::vector<int32_t>{0});
}

TEST_F(SequencePublisherTest, AbortedAndNotCommittedFailsTheTask) {
  supervisor_.ScriptPublish({absl::AbortedError("stored offsets are past the start")});
  Publish();
  EXPECT_EQ(publisher_->failure().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(publisher_->failure().message().find("was rejected"), std::string::npos);
  EXPECT_EQ(supervisor_.publish_calls(), 1);
  EXPECT_TRUE(listener_.published().empty());
}

TEST_F(SequencePublisherTest, OtherErrorsAreNotRetried) {
  supervisor_.ScriptPublish({absl::InvalidArgumentError("bad request")});
  Publish();
  EXPECT_EQ(publisher_->failure().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(publisher_->failure().message().find("publishing b_0"), std::string::npos);
  EXPECT_EQ(supervisor_.publish_calls(), 1);
  EXPECT_TRUE(listener_.published().empty());
}

}  // namespace
}  // namespace sluice::task
