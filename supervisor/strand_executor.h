// A bounded pool of threads that drives many serial activities ("strands"),
// so the supervisor's threads do not grow with its datasources: each stream supervisor's loop is a strand of one shared pool, and
// its Kafka queries a strand of another.
//
// A strand is a step function. The pool calls it when the strand was woken
// (Wake) or when the time the previous step asked for has come, on any pool
// thread, but never two steps of one strand at once, and a step runs after
// every Wake that came before it started. A step does one bounded piece of
// work and returns when it wants to run again with nothing new:
// absl::InfinitePast() (now, behind the strands already waiting),
// a time on the pool's clock, or absl::InfiniteFuture() (only after a Wake).
//
//   StrandExecutorOptions options;
//   options.threads = 4;
//   StrandExecutor pool(options);
//   std::unique_ptr<StrandExecutor::Strand> s = pool.AddStrand([&] { ...; return next; });
//   s->Wake();
//   s.reset();  // waits for a running step; no step after this
//
// Times are read from the options' clock, so a FakeClock drives the timers
// of tests.
#ifndef SLUICE_SUPERVISOR_STRAND_EXECUTOR_H_
#define SLUICE_SUPERVISOR_STRAND_EXECUTOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "supervisor/clock.h"

namespace sluice::supervisor {

struct StrandExecutorOptions {
  // Pool threads (at least 1).
  int threads = 4;
  Clock* clock = Clock::Real();
  // Names the pool in logs.
  std::string name = "strands";
};

class StrandExecutor {
 public:
  using Step = std::function<absl::Time()>;

  class Strand {
   public:
    // Waits for a running step to return; the strand never steps again.
    // Must not be called from the strand's own step.
    ~Strand();
    Strand(const Strand&) = delete;
    Strand& operator=(const Strand&) = delete;

    // Makes the strand step soon (again after a running step).
    void Wake();

   private:
    friend class StrandExecutor;
    Strand(StrandExecutor* pool, uint64_t id) : pool_(pool), id_(id) {}
    StrandExecutor* const pool_;
    const uint64_t id_;
  };

  explicit StrandExecutor(StrandExecutorOptions options);
  // Every strand must have been destroyed before.
  ~StrandExecutor();
  StrandExecutor(const StrandExecutor&) = delete;
  StrandExecutor& operator=(const StrandExecutor&) = delete;

  // A new strand whose first step runs at `first_at` (InfinitePast: now).
  std::unique_ptr<Strand> AddStrand(Step step, absl::Time first_at = absl::InfinitePast())
      ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `job` once on a pool thread, in turn with the strands (e.g. a
  // blocking RPC whose answer the job posts back to a strand).
  void Run(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);

  int threads() const { return static_cast<int>(threads_.size()); }
  // Strands registered now (tests, metrics).
  int strands() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    Step step;
    // Pending timer (InfiniteFuture: none).
    absl::Time due = absl::InfiniteFuture();
    bool queued = false;   // in ready_
    bool running = false;  // a pool thread is in its step
    bool woken = false;    // woken while running: step again after
  };

  void Work() ABSL_LOCKS_EXCLUDED(mu_);
  void Remove(uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  void Wake(uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  void MakeReady(uint64_t id, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetTimer(uint64_t id, Entry& entry, absl::Time due) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ClearTimer(uint64_t id, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StrandExecutorOptions options_;
  absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> ready_ ABSL_GUARDED_BY(mu_);
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<absl::Time, uint64_t>> timers_ ABSL_GUARDED_BY(mu_);
  // Bumped when a timer earlier than the waiters' deadline may exist.
  uint64_t timers_version_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STRAND_EXECUTOR_H_
