#include "supervisor/iceberg/iceberg_table_locks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

#include "absl/time/clock.h"

namespace sluice::supervisor {
namespace {

TEST(IcebergTableLocksTest, TheSweeperSkipsATableAPublishHolds) {
  IcebergTableLocks locks;
  {
    IcebergTableLocks::Shared a = locks.Publishing("iceberg/sluice/wiki");
    IcebergTableLocks::Shared b = locks.Publishing("iceberg/sluice/wiki");
    EXPECT_EQ(locks.Publishes("iceberg/sluice/wiki"), 2);
    EXPECT_FALSE(locks.TryExclusive("iceberg/sluice/wiki"));
    // Another table is free.
    EXPECT_TRUE(locks.TryExclusive("iceberg/sluice/other"));
    locks.ReleaseExclusive("iceberg/sluice/other");
    IcebergTableLocks::Shared moved = std::move(a);
    EXPECT_EQ(locks.Publishes("iceberg/sluice/wiki"), 2);
  }
  EXPECT_EQ(locks.Publishes("iceberg/sluice/wiki"), 0);
  EXPECT_TRUE(locks.TryExclusive("iceberg/sluice/wiki"));
  EXPECT_FALSE(locks.TryExclusive("iceberg/sluice/wiki"));  // one sweeper at a time
  locks.ReleaseExclusive("iceberg/sluice/wiki");
}

TEST(IcebergTableLocksTest, APublishWaitsForTheRemovalsToEnd) {
  IcebergTableLocks locks;
  ASSERT_TRUE(locks.TryExclusive("iceberg/sluice/wiki"));
  std::atomic<bool> started{false};
  std::thread publish([&] {
    IcebergTableLocks::Shared held = locks.Publishing("iceberg/sluice/wiki");
    started = true;
  });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(started.load());
  locks.ReleaseExclusive("iceberg/sluice/wiki");
  publish.join();
  EXPECT_TRUE(started.load());
  EXPECT_EQ(locks.Publishes("iceberg/sluice/wiki"), 0);
}

// A compaction's Committing waits for the publishes holding the table, and
// a publish that starts while it waits or holds the table waits behind it.
TEST(IcebergTableLocksTest, ACommittingCompactionWaitsForPublishesAndNewOnesWaitForIt) {
  IcebergTableLocks locks;
  std::optional<IcebergTableLocks::Shared> first = locks.Publishing("iceberg/sluice/wiki");
  std::atomic<bool> holding{false};
  std::atomic<bool> released{false};
  std::thread compaction([&] {
    IcebergTableLocks::Exclusive held = locks.Committing("iceberg/sluice/wiki");
    holding = true;
    absl::SleepFor(absl::Milliseconds(100));
    released = true;
  });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(holding.load());  // the first publish still holds the table
  std::atomic<bool> second_started{false};
  std::thread second([&] {
    IcebergTableLocks::Shared held = locks.Publishing("iceberg/sluice/wiki");
    second_started = true;
    EXPECT_TRUE(released.load());  // behind the compaction, not beside it
  });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(second_started.load());
  EXPECT_FALSE(locks.TryExclusive("iceberg/sluice/wiki"));  // no sweep either
  first.reset();
  compaction.join();
  second.join();
  EXPECT_TRUE(holding.load());
  EXPECT_TRUE(second_started.load());
  EXPECT_EQ(locks.Publishes("iceberg/sluice/wiki"), 0);
  EXPECT_TRUE(locks.TryExclusive("iceberg/sluice/wiki"));
  locks.ReleaseExclusive("iceberg/sluice/wiki");
}

}  // namespace
}  // namespace sluice::supervisor
