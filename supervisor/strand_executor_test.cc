// The shared pool of the stream supervisors' loops: steps of one strand never
// overlap, a Wake is never lost, timers follow the pool's clock (a FakeClock
// here), many strands share few threads, and a removed strand never steps
// again.
#include "supervisor/strand_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace sluice::supervisor {
namespace {

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

TEST(StrandExecutor, StepsOfOneStrandNeverOverlapAndNoWakeIsLost) {
  StrandExecutorOptions options;
  options.threads = 4;
  StrandExecutor pool(options);
  constexpr int kStrands = 20;
  std::vector<std::atomic<int>> inside(kStrands);
  // Wakes asked for, and the count a step saw when it started: a Wake is
  // lost if no step starts after it.
  std::vector<std::atomic<int>> wakes(kStrands);
  std::vector<std::atomic<int>> seen(kStrands);
  std::atomic<bool> overlapped{false};
  std::vector<std::unique_ptr<StrandExecutor::Strand>> strands;
  for (int i = 0; i < kStrands; ++i) {
    strands.push_back(pool.AddStrand(
        [&, i] {
          if (inside[i].fetch_add(1) != 0) overlapped = true;
          seen[i] = wakes[i].load();
          absl::SleepFor(absl::Microseconds(200));
          inside[i].fetch_sub(1);
          return absl::InfiniteFuture();
        },
        absl::InfiniteFuture()));
  }
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < kStrands; ++i) {
      ++wakes[i];
      strands[i]->Wake();
    }
  }
  EXPECT_TRUE(WaitFor([&] {
    for (int i = 0; i < kStrands; ++i) {
      if (seen[i] != wakes[i]) return false;
    }
    return true;
  }));
  EXPECT_FALSE(overlapped);
  strands.clear();
  EXPECT_EQ(pool.strands(), 0);
}

TEST(StrandExecutor, TimersFollowTheFakeClock) {
  FakeClock clock;
  StrandExecutorOptions options;
  options.threads = 2;
  options.clock = &clock;
  StrandExecutor pool(options);
  std::atomic<int> steps{0};
  auto strand = pool.AddStrand(
      [&] {
        ++steps;
        return clock.Now() + absl::Hours(1);
      },
      clock.Now() + absl::Minutes(5));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(steps, 0) << "stepped before its first time";
  clock.Advance(absl::Minutes(5));
  ASSERT_TRUE(WaitFor([&] { return steps == 1; }));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(steps, 1) << "stepped before the hour it asked for";
  clock.Advance(absl::Hours(1));
  ASSERT_TRUE(WaitFor([&] { return steps == 2; }));
  // A Wake runs it at once, whatever its timer says.
  strand->Wake();
  ASSERT_TRUE(WaitFor([&] { return steps == 3; }));
}

TEST(StrandExecutor, AnEarlierTimerIsNotHeldUpByALaterOne) {
  StrandExecutorOptions options;
  options.threads = 1;
  StrandExecutor pool(options);
  std::atomic<int> late{0};
  std::atomic<int> soon{0};
  auto a = pool.AddStrand([&] { ++late; return absl::InfiniteFuture(); },
                          absl::Now() + absl::Hours(1));
  absl::SleepFor(absl::Milliseconds(20));  // the thread now waits for the hour
  auto b = pool.AddStrand([&] { ++soon; return absl::InfiniteFuture(); },
                          absl::Now() + absl::Milliseconds(30));
  EXPECT_TRUE(WaitFor([&] { return soon == 1; }, absl::Seconds(5)));
  EXPECT_EQ(late, 0);
}

TEST(StrandExecutor, ManyStrandsShareTheThreadsFairly) {
  StrandExecutorOptions options;
  options.threads = 2;
  StrandExecutor pool(options);
  // A strand that always wants to run again does not starve the others.
  std::atomic<int64_t> busy{0};
  auto hog = pool.AddStrand([&] {
    ++busy;
    return absl::InfinitePast();
  });
  auto hog2 = pool.AddStrand([&] {
    ++busy;
    return absl::InfinitePast();
  });
  std::atomic<int> others{0};
  std::vector<std::unique_ptr<StrandExecutor::Strand>> strands;
  for (int i = 0; i < 500; ++i) {
    strands.push_back(pool.AddStrand([&] {
      ++others;
      return absl::InfiniteFuture();
    }));
  }
  EXPECT_TRUE(WaitFor([&] { return others == 500; }));
  EXPECT_EQ(pool.threads(), 2);
}

TEST(StrandExecutor, ARemovedStrandWaitsForItsStepAndNeverStepsAgain) {
  StrandExecutorOptions options;
  options.threads = 2;
  StrandExecutor pool(options);
  absl::Notification in_step;
  absl::Notification release;
  std::atomic<int> steps{0};
  std::atomic<bool> finished{false};
  auto strand = pool.AddStrand([&] {
    if (++steps == 1) {
      in_step.Notify();
      release.WaitForNotification();
      finished = true;
    }
    return absl::InfinitePast();
  });
  in_step.WaitForNotification();
  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(50));
    release.Notify();
  });
  strand.reset();
  EXPECT_TRUE(finished) << "the strand was removed while its step ran";
  const int after = steps;
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(steps, after);
  releaser.join();
}

TEST(StrandExecutor, OneShotJobsRunBesideTheStrands) {
  StrandExecutorOptions options;
  options.threads = 2;
  StrandExecutor pool(options);
  std::atomic<int> jobs{0};
  for (int i = 0; i < 100; ++i) pool.Run([&] { ++jobs; });
  EXPECT_TRUE(WaitFor([&] { return jobs == 100; }));
}

}  // namespace
}  // namespace sluice::supervisor
