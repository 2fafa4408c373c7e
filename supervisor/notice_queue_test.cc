#include "supervisor/notice_queue.h"

#include <thread>

#include "gtest/gtest.h"

namespace sluice::supervisor {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

TEST(NoticeQueueTest, NoticesComeBeforeARunAndInOrder) {
  NoticeQueue queue;
  queue.SetNextRun(kT0);
  queue.Push({"a", [] {}});
  queue.Push({"b", [] {}});
  queue.RequestRun();
  EXPECT_EQ(queue.NextStepAt(), absl::InfinitePast());
  NoticeQueue::Step first = queue.Take(kT0);
  ASSERT_TRUE(first.notice.has_value());
  EXPECT_EQ(first.notice->kind, "a");
  EXPECT_FALSE(first.run);
  NoticeQueue::Step second = queue.Take(kT0);
  ASSERT_TRUE(second.notice.has_value());
  EXPECT_EQ(second.notice->kind, "b");
  NoticeQueue::Step third = queue.Take(kT0);
  EXPECT_FALSE(third.notice.has_value());
  EXPECT_TRUE(third.run);
  // The request was taken: nothing until the next run's time.
  EXPECT_FALSE(queue.Take(kT0 - absl::Seconds(1)).run);
  EXPECT_EQ(queue.NextStepAt(), kT0);
  EXPECT_TRUE(queue.Take(kT0).run);  // due
}

TEST(NoticeQueueTest, TheLoopLeavesOnceTheNoticesBeforeAreTaken) {
  NoticeQueue queue;
  queue.SetNextRun(absl::InfiniteFuture());
  queue.Push({"last", [] {}});
  queue.RequestExit();
  EXPECT_EQ(queue.Take(kT0).notice->kind, "last");
  NoticeQueue::Step leave = queue.Take(kT0);
  EXPECT_TRUE(leave.left);
  EXPECT_TRUE(leave.left_now);
  // Notices after it are never handed out.
  queue.Push({"late", [] {}});
  NoticeQueue::Step after = queue.Take(kT0);
  EXPECT_TRUE(after.left);
  EXPECT_FALSE(after.left_now);
  EXPECT_FALSE(after.notice.has_value());
}

TEST(NoticeQueueTest, AwaitLeftReturnsWhenTheLoopLeaves) {
  NoticeQueue queue;
  queue.RequestExit();
  std::thread loop([&] {
    absl::SleepFor(absl::Milliseconds(20));
    queue.Take(kT0);
  });
  queue.AwaitLeft();
  loop.join();
  EXPECT_TRUE(queue.Take(kT0).left);
}

}  // namespace
}  // namespace sluice::supervisor
