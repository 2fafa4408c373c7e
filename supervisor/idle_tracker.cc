#include "supervisor/idle_tracker.h"

namespace sluice::supervisor {
namespace {

bool CaughtUp(const OffsetMap& latest, const OffsetMap& read_to) {
  for (const auto& [partition, offset] : latest) {
    auto it = read_to.find(partition);
    if (it == read_to.end() || it->second < offset) return false;
  }
  return true;
}

}  // namespace

void IdleTracker::Restore(const IdleState* state) {
  idle_ = state != nullptr;
  state_ = idle_ ? *state : IdleState();
  last_latest_.clear();
  still_since_ = absl::InfiniteFuture();
}

IdleTracker::Change IdleTracker::Observe(const OffsetMap& latest, const OffsetMap& read_to,
                                         absl::Time now, absl::Duration inactive_after) {
  if (latest.empty()) return Change::kNone;
  if (idle_) {
    if (latest == state_.latest) return Change::kNone;
    idle_ = false;
    state_ = IdleState();
    last_latest_ = latest;
    still_since_ = absl::InfiniteFuture();
    return Change::kWoke;
  }
  if (latest != last_latest_ || !CaughtUp(latest, read_to)) {
    last_latest_ = latest;
    still_since_ = CaughtUp(latest, read_to) ? now : absl::InfiniteFuture();
    return Change::kNone;
  }
  if (still_since_ == absl::InfiniteFuture()) still_since_ = now;
  if (now - still_since_ < inactive_after) return Change::kNone;
  idle_ = true;
  state_.latest = latest;
  state_.since_ms = absl::ToUnixMillis(now);
  return Change::kWentIdle;
}

IdleTracker::Change IdleTracker::Wake() {
  if (!idle_) {
    still_since_ = absl::InfiniteFuture();
    return Change::kNone;
  }
  Restore(nullptr);
  return Change::kWoke;
}

}  // namespace sluice::supervisor
