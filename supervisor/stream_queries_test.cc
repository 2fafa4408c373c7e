#include "supervisor/stream_queries.h"

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "supervisor/testing/fake_stream_metadata.h"

namespace sluice::supervisor {
namespace {

TEST(StreamSnapshotTest, OutcomeJudgesTheListingThenTheWatermarks) {
  StreamSnapshot s;
  s.partitions = absl::UnavailableError("down");
  EXPECT_EQ(s.Outcome().code(), absl::StatusCode::kUnavailable);
  s.partitions = std::vector<int32_t>{};
  EXPECT_TRUE(s.Outcome().ok());  // an empty topic answered
  s.partitions = std::vector<int32_t>{0};
  s.marks = absl::DeadlineExceededError("slow");
  EXPECT_EQ(s.Outcome().code(), absl::StatusCode::kDeadlineExceeded);
  s.marks = std::map<int32_t, PartitionWatermarks>{{0, {1, 2}}};
  EXPECT_TRUE(s.Outcome().ok());
}

TEST(QueryStreamTest, PartitionsThenWatermarks) {
  testing::FakeStream fake;
  fake.SetPartitions(2, 3, 9);
  auto stream = *fake.Factory()(v1::SupervisorSpec());
  StreamSnapshot s = QueryStream(*stream, {{0, 5}}, absl::Seconds(1));
  ASSERT_TRUE(s.partitions.ok());
  EXPECT_EQ(*s.partitions, (std::vector<int32_t>{0, 1}));
  ASSERT_TRUE(s.marks.ok());
  EXPECT_EQ(s.marks->size(), 2u);
  EXPECT_EQ(s.marks->at(1).earliest, 3);
  EXPECT_EQ(s.marks->at(1).latest, 9);
  EXPECT_EQ(s.stored, (OffsetMap{{0, 5}}));
}

TEST(QueryStreamTest, NoWatermarksWithoutPartitions) {
  testing::FakeStream fake;
  auto stream = *fake.Factory()(v1::SupervisorSpec());
  StreamSnapshot empty = QueryStream(*stream, {}, absl::Seconds(1));
  ASSERT_TRUE(empty.partitions.ok());
  EXPECT_TRUE(empty.partitions->empty());
  EXPECT_EQ(empty.marks.status().code(), absl::StatusCode::kFailedPrecondition);

  fake.SetError(absl::UnavailableError("broker down"));
  StreamSnapshot down = QueryStream(*stream, {}, absl::Seconds(1));
  EXPECT_EQ(down.partitions.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(down.marks.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(down.Outcome().code(), absl::StatusCode::kUnavailable);
}

class StreamQueriesTest : public ::testing::Test {
 protected:
  StreamQueriesOptions Options(StreamMetadata* stream) {
    StreamQueriesOptions options;
    options.pool = &pool_;
    options.period = absl::Milliseconds(5);
    options.timeout = absl::Seconds(1);
    options.read_stored = [this] {
      absl::MutexLock lock(&mu_);
      ++stored_reads_;
      return OffsetMap{{0, 7}};
    };
    options.deliver = [this](StreamSnapshot s) {
      absl::MutexLock lock(&mu_);
      snapshots_.push_back(std::move(s));
    };
    options.stream = stream;
    return options;
  }
  // Waits until at least n snapshots arrived.
  bool AwaitSnapshots(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return snapshots_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
  }
  size_t Count() {
    absl::MutexLock lock(&mu_);
    return snapshots_.size();
  }

  StrandExecutor pool_{{.threads = 1, .name = "test queries"}};
  testing::FakeStream fake_;
  absl::Mutex mu_;
  std::vector<StreamSnapshot> snapshots_ ABSL_GUARDED_BY(mu_);
  int stored_reads_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_F(StreamQueriesTest, QueriesEveryPeriodAndStops) {
  fake_.SetPartitions(3, 0, 100);
  auto stream = *fake_.Factory()(v1::SupervisorSpec());
  StreamQueries queries(Options(stream.get()));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(Count(), 0u);  // not started
  queries.Start();
  ASSERT_TRUE(AwaitSnapshots(3));
  queries.Stop();
  const size_t after_stop = Count();
  absl::SleepFor(absl::Milliseconds(30));
  EXPECT_EQ(Count(), after_stop);
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(static_cast<size_t>(stored_reads_), snapshots_.size());
  const StreamSnapshot& s = snapshots_.front();
  ASSERT_TRUE(s.partitions.ok());
  EXPECT_EQ(s.partitions->size(), 3u);
  ASSERT_TRUE(s.marks.ok());
  EXPECT_EQ(s.marks->at(2).latest, 100);
  EXPECT_EQ(s.stored, (OffsetMap{{0, 7}}));
}

TEST_F(StreamQueriesTest, NothingUntilAStreamIsSet) {
  fake_.SetPartitions(1);
  auto stream = *fake_.Factory()(v1::SupervisorSpec());
  StreamQueries queries(Options(nullptr));
  queries.Start();
  absl::SleepFor(absl::Milliseconds(30));
  EXPECT_EQ(Count(), 0u);
  {
    absl::MutexLock lock(&mu_);
    EXPECT_EQ(stored_reads_, 0);
  }
  queries.SetStream(stream.get());
  ASSERT_TRUE(AwaitSnapshots(1));
  queries.SetStream(nullptr);
  queries.Stop();
}

TEST_F(StreamQueriesTest, StopTwiceIsHarmless) {
  StreamQueries queries(Options(nullptr));
  queries.Start();
  queries.Stop();
  queries.Stop();
  EXPECT_EQ(Count(), 0u);
}

}  // namespace
}  // namespace sluice::supervisor
