#include "common/retry.h"

#include <algorithm>

#include "absl/random/random.h"

namespace sluice {

bool IsRetryable(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
      return true;
    default:
      return false;
  }
}

bool IsOutcomeUnknown(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kCancelled:
      return true;
    default:
      return IsRetryable(status);
  }
}

Backoff::Backoff(const RetryOptions& options, uint64_t seed)
    : options_(options), current_(options.initial_backoff), state_(seed) {
  if (state_ == 0) state_ = absl::BitGen()();
  if (state_ == 0) state_ = 0x9e3779b97f4a7c15ULL;
  options_.jitter = std::clamp(options_.jitter, 0.0, 1.0);
  if (options_.multiplier < 1.0) options_.multiplier = 1.0;
  if (options_.max_backoff < options_.initial_backoff) options_.max_backoff = options_.initial_backoff;
}

double Backoff::Uniform() {
  // xorshift64*: a small, seedable generator, so tests can pin the jitter.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return static_cast<double>((state_ * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

absl::Duration Backoff::Next() {
  const absl::Duration wait = current_ * (1.0 - options_.jitter * Uniform());
  current_ = std::min(options_.max_backoff, current_ * options_.multiplier);
  return wait;
}

void Backoff::Reset() { current_ = options_.initial_backoff; }

bool SleepUninterrupted(absl::Duration duration) {
  absl::SleepFor(duration);
  return true;
}

absl::Status RetryCall(const RetryOptions& options, const RetrySleep& sleep,
                       const std::function<absl::Status()>& call,
                       const RetryPredicate& retryable) {
  Backoff backoff(options);
  for (int attempt = 1;; ++attempt) {
    absl::Status status = call();
    if (status.ok() || !retryable(status)) return status;
    if (options.max_attempts > 0 && attempt >= options.max_attempts) return status;
    if (!sleep(backoff.Next())) return absl::CancelledError("stopped");
  }
}

}  // namespace sluice
