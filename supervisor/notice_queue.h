// The queue of a stream supervisor's loop: notices posted by any thread
// (checkpoint requests, resets, RunTask answers, ...), run requests, the
// time of the next periodic run, and the request to leave. The loop takes
// one thing per step (a notice before a run); a thread may wait until the
// loop has left. Thread-safe (its own mutex).
#ifndef SLUICE_SUPERVISOR_NOTICE_QUEUE_H_
#define SLUICE_SUPERVISOR_NOTICE_QUEUE_H_

#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sluice::supervisor {

class NoticeQueue {
 public:
  struct Notice {
    std::string kind;
    std::function<void()> handle;
  };
  // What the loop does at a step.
  struct Step {
    std::optional<Notice> notice;
    bool run = false;
    // The loop leaves (it was asked to and no notice is left); `left_now`:
    // at this step.
    bool left = false;
    bool left_now = false;
  };

  void Push(Notice notice) ABSL_LOCKS_EXCLUDED(mu_);
  void RequestRun() ABSL_LOCKS_EXCLUDED(mu_);
  // The loop leaves once the notices before are taken.
  void RequestExit() ABSL_LOCKS_EXCLUDED(mu_);
  void SetNextRun(absl::Time at) ABSL_LOCKS_EXCLUDED(mu_);
  // The next notice, else leaving (when asked), else a run if one was
  // requested or `now` reached the next run's time.
  Step Take(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  // When the loop wants its next step: at once while a notice, a run or the
  // exit is pending, else at the next run's time.
  absl::Time NextStepAt() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until the loop left.
  void AwaitLeft() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  std::deque<Notice> queue_ ABSL_GUARDED_BY(mu_);
  bool run_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool exit_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time next_run_at_ ABSL_GUARDED_BY(mu_);
  bool left_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_NOTICE_QUEUE_H_
