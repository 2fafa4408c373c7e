// The queue of a stream supervisor's loop: see notice_queue.h.
#include "supervisor/notice_queue.h"

#include <utility>

namespace sluice::supervisor {

void NoticeQueue::Push(Notice notice) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(notice));
}

void NoticeQueue::RequestRun() {
  absl::MutexLock lock(&mu_);
  run_requested_ = true;
}

void NoticeQueue::RequestExit() {
  absl::MutexLock lock(&mu_);
  exit_ = true;
}

void NoticeQueue::SetNextRun(absl::Time at) {
  absl::MutexLock lock(&mu_);
  next_run_at_ = at;
}

NoticeQueue::Step NoticeQueue::Take(absl::Time now) {
  Step step;
  absl::MutexLock lock(&mu_);
  if (left_) {
    step.left = true;
  } else if (!queue_.empty()) {
    step.notice = std::move(queue_.front());
    queue_.pop_front();
  } else if (exit_) {
    left_ = true;
    step.left = true;
    step.left_now = true;
  } else if (run_requested_ || now >= next_run_at_) {
    step.run = true;
    run_requested_ = false;
  }
  return step;
}

absl::Time NoticeQueue::NextStepAt() {
  absl::MutexLock lock(&mu_);
  if (!queue_.empty() || run_requested_ || exit_) return absl::InfinitePast();
  return next_run_at_;
}

void NoticeQueue::AwaitLeft() {
  absl::MutexLock lock(&mu_);
  auto left = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return left_; };
  mu_.Await(absl::Condition(&left));
}

}  // namespace sluice::supervisor
