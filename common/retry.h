// One retry policy for every call that is repeated after a failure.
//
// Which codes are retried follows the meaning docs/architecture.md ("What
// each status code means") gives each code:
//   - IsRetryable: UNAVAILABLE (retry this call), DEADLINE_EXCEEDED (the
//     outcome is unknown; the callee was slow or unreachable) and
//     RESOURCE_EXHAUSTED (the callee is overloaded and asks to come back).
//     Never ABORTED (retry the higher-level operation, not this call),
//     FAILED_PRECONDITION (fix the state first), INVALID_ARGUMENT and the rest.
//   - IsOutcomeUnknown: the above plus INTERNAL, UNKNOWN and CANCELLED, after
//     which a call may or may not have taken effect. Only idempotent calls
//     whose caller must learn the outcome (a publish, which is checked
//     against the metadata store) retry these.
//
// Backoff is exponential with jitter, capped, and every wait goes through a
// caller-supplied sleep that returns false when the caller is stopping, so a
// retry loop never outlives its owner.
#ifndef SLUICE_COMMON_RETRY_H_
#define SLUICE_COMMON_RETRY_H_

#include <cstdint>
#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sluice {

bool IsRetryable(const absl::Status& status);
bool IsOutcomeUnknown(const absl::Status& status);

struct RetryOptions {
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  double multiplier = 2.0;
  // Each wait is drawn uniformly from [w * (1 - jitter), w], so replicas that
  // failed together do not retry in lockstep. 0: no jitter.
  double jitter = 0.2;
  // Calls in all, the first included; 0: no limit (until success, a code that
  // is not retried, or cancellation).
  int max_attempts = 0;
};

// The waits between attempts: initial_backoff, then multiplied up to
// max_backoff, each with jitter. Not thread-safe.
class Backoff {
 public:
  explicit Backoff(const RetryOptions& options, uint64_t seed = 0);

  // The wait before the next attempt.
  absl::Duration Next();
  // After a success: the next wait is initial_backoff again.
  void Reset();

 private:
  double Uniform();

  RetryOptions options_;
  absl::Duration current_;
  uint64_t state_;
};

// Returns false when the caller is stopping; the retry then ends with
// CANCELLED "stopped".
using RetrySleep = std::function<bool(absl::Duration)>;
using RetryPredicate = std::function<bool(const absl::Status&)>;

// Sleeps with absl::SleepFor and never reports cancellation.
bool SleepUninterrupted(absl::Duration duration);

// Calls `call` until it succeeds, fails with a status `retryable` rejects,
// max_attempts calls were made (the last status is returned), or `sleep`
// returns false (CANCELLED "stopped").
absl::Status RetryCall(const RetryOptions& options, const RetrySleep& sleep,
                       const std::function<absl::Status()>& call,
                       const RetryPredicate& retryable = IsRetryable);

template <typename T>
absl::StatusOr<T> RetryCall(const RetryOptions& options, const RetrySleep& sleep,
                            const std::function<absl::StatusOr<T>()>& call,
                            const RetryPredicate& retryable = IsRetryable) {
  absl::StatusOr<T> result = absl::UnknownError("not called");
  const absl::Status status = RetryCall(
      options, sleep,
      [&]() {
        result = call();
        return result.status();
      },
      retryable);
  if (status.ok()) return result;
  return status;
}

}  // namespace sluice

#endif  // SLUICE_COMMON_RETRY_H_
