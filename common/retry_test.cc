#include "common/retry.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(RetryCodesTest, FollowTheDesignMeaningOfEachCode) {
  EXPECT_TRUE(IsRetryable(absl::UnavailableError("")));
  EXPECT_TRUE(IsRetryable(absl::DeadlineExceededError("")));
  EXPECT_TRUE(IsRetryable(absl::ResourceExhaustedError("")));
  EXPECT_FALSE(IsRetryable(absl::AbortedError("")));
  EXPECT_FALSE(IsRetryable(absl::FailedPreconditionError("")));
  EXPECT_FALSE(IsRetryable(absl::InvalidArgumentError("")));
  EXPECT_FALSE(IsRetryable(absl::InternalError("")));
  EXPECT_FALSE(IsRetryable(absl::OkStatus()));

  EXPECT_TRUE(IsOutcomeUnknown(absl::UnavailableError("")));
  EXPECT_TRUE(IsOutcomeUnknown(absl::InternalError("")));
  EXPECT_TRUE(IsOutcomeUnknown(absl::UnknownError("")));
  EXPECT_TRUE(IsOutcomeUnknown(absl::CancelledError("")));
  EXPECT_FALSE(IsOutcomeUnknown(absl::AbortedError("")));
  EXPECT_FALSE(IsOutcomeUnknown(absl::NotFoundError("")));
  EXPECT_FALSE(IsOutcomeUnknown(absl::DataLossError("")));
}

TEST(BackoffTest, GrowsToTheCapWithoutJitter) {
  RetryOptions options;
  options.initial_backoff = absl::Milliseconds(100);
  options.max_backoff = absl::Milliseconds(500);
  options.jitter = 0;
  Backoff backoff(options, 1);
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(100));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(200));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(400));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(500));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(500));
  backoff.Reset();
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(100));
}

TEST(BackoffTest, JitterStaysInRangeAndVaries) {
  RetryOptions options;
  options.initial_backoff = absl::Seconds(1);
  options.max_backoff = absl::Seconds(1);
  options.jitter = 0.5;
  Backoff backoff(options, 42);
  absl::Duration low = absl::InfiniteDuration(), high = absl::ZeroDuration();
  for (int i = 0; i < 1000; ++i) {
    const absl::Duration wait = backoff.Next();
    ASSERT_GE(wait, absl::Milliseconds(500));
    ASSERT_LE(wait, absl::Seconds(1));
    low = std::min(low, wait);
    high = std::max(high, wait);
  }
  EXPECT_LT(low, absl::Milliseconds(550));
  EXPECT_GT(high, absl::Milliseconds(950));
}

TEST(BackoffTest, TwoUnseededBackoffsDoNotRetryInLockstep) {
  RetryOptions options;
  options.initial_backoff = absl::Seconds(1);
  Backoff a(options), b(options);
  bool differ = false;
  for (int i = 0; i < 5; ++i) differ |= a.Next() != b.Next();
  EXPECT_TRUE(differ);
}

struct Recorder {
  std::vector<absl::Duration> waits;
  bool keep_going = true;
  RetrySleep Sleep() {
    return [this](absl::Duration d) {
      waits.push_back(d);
      return keep_going;
    };
  }
};

TEST(RetryCallTest, RetriesUntilSuccess) {
  Recorder recorder;
  RetryOptions options;
  options.jitter = 0;
  int calls = 0;
  const absl::Status status = RetryCall(options, recorder.Sleep(), [&] {
    return ++calls < 3 ? absl::UnavailableError("down") : absl::OkStatus();
  });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(recorder.waits,
            (std::vector<absl::Duration>{absl::Milliseconds(100), absl::Milliseconds(200)}));
}

TEST(RetryCallTest, StopsAtACodeThatIsNotRetried) {
  Recorder recorder;
  int calls = 0;
  const absl::Status status = RetryCall(RetryOptions{}, recorder.Sleep(), [&] {
    ++calls;
    return absl::AbortedError("already committed");
  });
  EXPECT_EQ(status, absl::AbortedError("already committed"));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(recorder.waits.empty());
}

TEST(RetryCallTest, TheCallersPredicateDecides) {
  Recorder recorder;
  int calls = 0;
  const absl::Status status = RetryCall(
      RetryOptions{}, recorder.Sleep(),
      [&] { return ++calls < 2 ? absl::InternalError("lost reply") : absl::OkStatus(); },
      IsOutcomeUnknown);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(calls, 2);
}

TEST(RetryCallTest, GivesUpAfterMaxAttemptsWithTheLastStatus) {
  Recorder recorder;
  RetryOptions options;
  options.max_attempts = 3;
  int calls = 0;
  const absl::Status status = RetryCall(options, recorder.Sleep(), [&] {
    return absl::UnavailableError(absl::StrCat("attempt ", ++calls));
  });
  EXPECT_EQ(status, absl::UnavailableError("attempt 3"));
  EXPECT_EQ(recorder.waits.size(), 2u);
}

TEST(RetryCallTest, CancelledWhenTheSleepSaysStop) {
  Recorder recorder;
  recorder.keep_going = false;
  int calls = 0;
  const absl::Status status = RetryCall(RetryOptions{}, recorder.Sleep(), [&] {
    ++calls;
    return absl::UnavailableError("down");
  });
  EXPECT_EQ(status, absl::CancelledError("stopped"));
  EXPECT_EQ(calls, 1);
}

TEST(RetryCallTest, StatusOrFormReturnsTheValue) {
  int calls = 0;
  absl::StatusOr<int> result = RetryCall<int>(
      RetryOptions{}, [](absl::Duration) { return true; },
      [&]() -> absl::StatusOr<int> {
        if (++calls < 2) return absl::DeadlineExceededError("slow");
        return 7;
      });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, 7);
  absl::StatusOr<int> failed = RetryCall<int>(
      RetryOptions{}, [](absl::Duration) { return true; },
      []() -> absl::StatusOr<int> { return absl::NotFoundError("no"); });
  EXPECT_EQ(failed.status(), absl::NotFoundError("no"));
}

}  // namespace
}  // namespace sluice
