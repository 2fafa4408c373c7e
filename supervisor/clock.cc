#include "supervisor/clock.h"

namespace sluice::supervisor {
namespace {

class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition,
                         absl::Time deadline) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return mu->AwaitWithDeadline(condition, deadline);
  }
};

}  // namespace

Clock* Clock::Real() {
  static auto* clock = new RealClock();
  return clock;
}

absl::Time FakeClock::Now() {
  absl::MutexLock lock(&mu_);
  return now_;
}

bool FakeClock::AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition,
                                  absl::Time deadline) {
  while (true) {
    if (condition.Eval()) return true;
    if (Now() >= deadline) return false;
    // Poll: the fake time moves without touching `mu`.
    mu->AwaitWithTimeout(condition, absl::Milliseconds(2));
  }
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
}

void FakeClock::Set(absl::Time t) {
  absl::MutexLock lock(&mu_);
  now_ = t;
}

}  // namespace sluice::supervisor
