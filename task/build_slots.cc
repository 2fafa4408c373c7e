#include "task/build_slots.h"

#include "absl/time/time.h"

namespace sluice::task {

bool BuildSlots::Acquire(const std::function<bool()>& stopping) {
  absl::MutexLock lock(&mu_);
  while (free_ == 0) {
    if (stopping && stopping()) return false;
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](int* free) { return *free > 0; }, &free_),
                         absl::Milliseconds(50));
  }
  --free_;
  return true;
}

void BuildSlots::Release() {
  absl::MutexLock lock(&mu_);
  ++free_;
}

int BuildSlots::in_use() const {
  absl::MutexLock lock(&mu_);
  return slots_ - free_;
}

}  // namespace sluice::task
