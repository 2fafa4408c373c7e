// Time as the supervisor sees it. Everything that decides by time (run
// periods, task duration, completion timeouts, worker liveness) reads a Clock
// so tests can drive it with a FakeClock instead of sleeping.
#ifndef SLUICE_SUPERVISOR_CLOCK_H_
#define SLUICE_SUPERVISOR_CLOCK_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace sluice::supervisor {

class Clock {
 public:
  virtual ~Clock() = default;

  virtual absl::Time Now() = 0;
  int64_t NowMs() { return absl::ToUnixMillis(Now()); }

  // With `mu` held: waits until `condition` holds or this clock reaches
  // `deadline`; returns whether the condition holds.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition,
                                 absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;

  // The process-wide wall clock.
  static Clock* Real();
};

// A clock that only moves when told. Waiters notice a change within a few
// real milliseconds.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixMillis(1'800'000'000'000)) : now_(start) {}

  absl::Time Now() override ABSL_LOCKS_EXCLUDED(mu_);
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition,
                         absl::Time deadline) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  void Advance(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);
  void Set(absl::Time t) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_CLOCK_H_
