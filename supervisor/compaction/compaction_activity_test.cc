// The record of a supervisor's compactions: totals, the newest 20, the last
// error cleared by a success, per datasource, safe from several threads.
#include "supervisor/compaction/compaction_activity.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace sluice::supervisor {
namespace {

v1::CompactionRecord Record(int64_t start_ms, int64_t rows) {
  v1::CompactionRecord r;
  r.mutable_interval()->set_start_ms(start_ms);
  r.mutable_interval()->set_end_ms(start_ms + 1);
  r.set_input_segments(3);
  r.set_output_segments(1);
  r.set_rows(rows);
  return r;
}

TEST(CompactionActivity, RecordsPerDatasource) {
  CompactionActivity activity;
  v1::CompactionStatus status;
  activity.Fill("wiki", &status);
  EXPECT_EQ(status.compactions(), 0);
  EXPECT_FALSE(status.has_running());

  v1::Interval interval;
  interval.set_start_ms(7);
  interval.set_end_ms(8);
  activity.Started("wiki", interval);
  activity.Failed("wiki", absl::DataLossError("segment x is damaged"), absl::FromUnixMillis(42));
  activity.Conflict("wiki");
  v1::PendingCompaction pending;
  pending.set_reason("queued");
  activity.SetPending("wiki", {pending, pending});
  activity.SnapshotsExpired("wiki", 4);
  activity.Fill("wiki", &status);
  EXPECT_EQ(status.running().start_ms(), 7);
  EXPECT_EQ(status.last_error(), "DATA_LOSS: segment x is damaged");
  EXPECT_EQ(status.last_error_ms(), 42);
  EXPECT_EQ(status.conflicts(), 1);
  EXPECT_EQ(status.pending_size(), 2);
  EXPECT_EQ(status.snapshots_expired(), 4);

  activity.Committed("wiki", Record(7, 100), 3);
  activity.Finished("wiki");
  activity.SetPending("wiki", {});
  activity.Fill("wiki", &status);
  EXPECT_FALSE(status.has_running());
  EXPECT_EQ(status.last_error(), "");  // cleared by the success
  EXPECT_EQ(status.last_error_ms(), 0);
  EXPECT_EQ(status.compactions(), 1);
  EXPECT_EQ(status.segments_replaced(), 3);
  EXPECT_EQ(status.rows_compacted(), 100);
  EXPECT_EQ(status.pending_size(), 0);
  ASSERT_EQ(status.recent_size(), 1);

  // Another datasource is apart.
  v1::CompactionStatus other;
  activity.Fill("other", &other);
  EXPECT_EQ(other.compactions(), 0);
  EXPECT_EQ(other.conflicts(), 0);
}

TEST(CompactionActivity, KeepsTheNewestTwentyNewestFirst) {
  CompactionActivity activity;
  for (int i = 0; i < 25; ++i) activity.Committed("wiki", Record(i, 10), 2);
  v1::CompactionStatus status;
  activity.Fill("wiki", &status);
  EXPECT_EQ(status.compactions(), 25);
  EXPECT_EQ(status.segments_replaced(), 50);
  EXPECT_EQ(status.rows_compacted(), 250);
  ASSERT_EQ(status.recent_size(), kRecentCompactions);
  EXPECT_EQ(status.recent(0).interval().start_ms(), 24);
  EXPECT_EQ(status.recent(kRecentCompactions - 1).interval().start_ms(), 5);
}

TEST(CompactionActivity, BoundsTheLastError) {
  CompactionActivity activity;
  activity.Failed("wiki", absl::InternalError(std::string(10000, 'x')), absl::Now());
  v1::CompactionStatus status;
  activity.Fill("wiki", &status);
  EXPECT_EQ(status.last_error().size(), kMaxCompactionErrorBytes);
}

TEST(CompactionActivity, IsSafeFromSeveralThreads) {
  CompactionActivity activity;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&activity, t] {
      for (int i = 0; i < 500; ++i) {
        activity.Committed("wiki", Record(i, 1), 1);
        activity.Conflict("wiki");
        v1::CompactionStatus status;
        activity.Fill("wiki", &status);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  v1::CompactionStatus status;
  activity.Fill("wiki", &status);
  EXPECT_EQ(status.compactions(), 2000);
  EXPECT_EQ(status.conflicts(), 2000);
}

}  // namespace
}  // namespace sluice::supervisor
