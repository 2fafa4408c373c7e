#include "task/fetch_refill.h"

#include <gtest/gtest.h>

namespace sluice::task {
namespace {

TEST(RefillTriggerTest, FiresOnceWhenAFullQueueDrainsToHalf) {
  RefillTrigger trigger(/*max_messages=*/1000, /*max_bytes=*/1 << 30);
  EXPECT_FALSE(trigger.Observe(0, 200));    // never full: nothing to do
  EXPECT_FALSE(trigger.Observe(999, 200));
  EXPECT_FALSE(trigger.Observe(1000, 200));  // at the limit: fetching stopped
  EXPECT_TRUE(trigger.was_full());
  EXPECT_FALSE(trigger.Observe(700, 200));  // draining, still above half
  EXPECT_TRUE(trigger.Observe(500, 200));   // half: wake the fetcher
  EXPECT_FALSE(trigger.was_full());
  EXPECT_FALSE(trigger.Observe(100, 200));  // once per fill
  EXPECT_FALSE(trigger.Observe(0, 200));
}

TEST(RefillTriggerTest, ABigJumpFromFullToEmptyStillFires) {
  RefillTrigger trigger(1000, 1 << 30);
  EXPECT_FALSE(trigger.Observe(5000, 200));  // a fetch can overshoot the limit
  EXPECT_TRUE(trigger.Observe(0, 200));
}

TEST(RefillTriggerTest, TheByteLimitCountsForBigRecords) {
  // 10 KB records: 1 MB is reached at ~100 records, long before 100,000.
  RefillTrigger trigger(100000, 1 << 20);
  EXPECT_FALSE(trigger.Observe(50, 10000));
  EXPECT_FALSE(trigger.was_full());
  EXPECT_FALSE(trigger.Observe(95, 10000));  // 950 KB >= 90% of 1 MiB
  EXPECT_TRUE(trigger.was_full());
  EXPECT_FALSE(trigger.Observe(60, 10000));  // 600 KB: above half
  EXPECT_TRUE(trigger.Observe(50, 10000));   // 500 KB: below half
}

TEST(RefillTriggerTest, NonPositiveLimitsAreUnlimited) {
  RefillTrigger trigger(0, 0);
  EXPECT_FALSE(trigger.Observe(1 << 30, 1e6));
  EXPECT_FALSE(trigger.was_full());
}

}  // namespace
}  // namespace sluice::task
