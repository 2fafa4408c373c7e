#include "supervisor/iceberg_table_locks.h"

#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
}  // namespace sluice::supervisor
