#include "task/build_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/time/clock.h"

namespace sluice::task {
namespace {

TEST(BuildSlotsTest, AtMostTheSlotsRunAtOnce) {
  BuildSlots slots(2);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::vector<std::thread> builds;
  for (int i = 0; i < 6; ++i) {
    builds.emplace_back([&] {
      BuildSlot slot(&slots, [] { return false; });
      ASSERT_TRUE(slot.held());
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      absl::SleepFor(absl::Milliseconds(20));
      --running;
    });
  }
  for (std::thread& t : builds) t.join();
  EXPECT_EQ(most.load(), 2);
  EXPECT_EQ(slots.in_use(), 0);
}

TEST(BuildSlotsTest, AStoppingWaiterGivesUpWithoutASlot) {
  BuildSlots slots(1);
  BuildSlot first(&slots, [] { return false; });
  ASSERT_TRUE(first.held());
  std::atomic<bool> stop{false};
  std::thread waiter([&] {
    BuildSlot second(&slots, [&] { return stop.load(); });
    EXPECT_FALSE(second.held());
  });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(slots.in_use(), 1);
  stop = true;
  waiter.join();
  EXPECT_EQ(slots.in_use(), 1);
}

TEST(BuildSlotsTest, NoSlotsMeansNoLimit) {
  BuildSlot slot(nullptr, [] { return true; });
  EXPECT_TRUE(slot.held());
  EXPECT_EQ(BuildSlots(0).slots(), 1);
}

}  // namespace
}  // namespace sluice::task
