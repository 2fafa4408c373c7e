// The loop of a stream supervisor as a strand of a pool: its queue
// (notice_queue.h), the strand that takes one thing per step (the first
// step, then a notice before a run), posting from any thread, waiting for a
// notice to be handled, and leaving. What a step does is the supervisor's:
// the callbacks below.
//
// Post, PostAndWait, RequestRun, SetNextRun and RequestExit are
// thread-safe; Start, Stop and Close are called by the owner. Not copyable.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_LOOP_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_LOOP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "supervisor/clock.h"
#include "supervisor/notice_queue.h"
#include "supervisor/strand_executor.h"

namespace sluice::supervisor {

struct SupervisorLoopOptions {
  std::string datasource;
  Clock* clock = Clock::Real();
  // The loop's first step (recovery).
  std::function<void()> first_step;
  // A periodic or requested run.
  std::function<void()> run;
  // Republishes what RPC threads read: after a step that did something,
  // and after a notice someone waits for.
  std::function<void()> publish_view;
};

class SupervisorLoop {
 public:
  explicit SupervisorLoop(SupervisorLoopOptions options);
  SupervisorLoop(const SupervisorLoop&) = delete;
  SupervisorLoop& operator=(const SupervisorLoop&) = delete;

  // Adds the loop's strand to `pool` and wakes it (its first step runs).
  void Start(StrandExecutor* pool);
  void Post(std::string kind, std::function<void()> handle);
  // Posts and waits until it was handled and the view republished;
  // UNAVAILABLE when that takes longer than `timeout`.
  absl::Status PostAndWait(std::string kind, std::function<void()> handle, absl::Duration timeout);
  void RequestRun();
  void SetNextRun(absl::Time at);
  // The loop leaves once the notices before are handled (from a notice).
  void RequestExit();
  // Makes the loop leave once the notices before are handled, and waits.
  void Stop();
  // Drops the strand (waits for a running step); after Stop, before what
  // the steps use goes.
  void Close();

 private:
  // One step of the strand; returns when it wants the next.
  absl::Time Step();
  std::string Prefix() const;

  const SupervisorLoopOptions options_;
  NoticeQueue notices_;
  // Stepped only once set (Post reads it from other threads).
  std::unique_ptr<StrandExecutor::Strand> strand_;
  // Only touched by steps.
  bool started_ = false;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_LOOP_H_
