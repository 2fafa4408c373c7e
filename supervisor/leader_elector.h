// Leader election of supervisors sharing one metadata store (PostgreSQL, or
// one SQLite file on one machine): a lease row with an epoch
// (supervisor/store/leader_lease_rows.h), taken when free or expired by the
// database's clock, renewed every `renew_every` by its holder.
//
//   LeaderElector elector({.store = store, .supervisor_id = "sup-a",
//                          .address = "10.0.0.5:7070",
//                          .on_elected = [](int64_t epoch) { ... start leading ... },
//                          .on_lost = [](const std::string& why) { ... exit ... }});
//   elector.Start();
//
// Becoming leader: the epoch goes up by one and the store's fence is set to
// (supervisor_id, epoch) before on_elected runs, so from then on every
// transaction of this process checks that it still leads (the fence,
// MetadataStore::SetLeaderFence). Losing it, once and for good: another
// supervisor holds the lease, or this one could not renew it before its own
// conservative deadline (the start of the last successful renewal + lease,
// by the local monotonic clock, which ends before the database's expiry).
// on_lost then runs; the fence stays, so nothing more is written. A process
// that lost the lease does not lead again (the supervisor exits and comes
// back as a standby).
//
// Thread-safe. Callbacks run on the elector's thread, one at a time; they
// must not call Stop().
#ifndef SLUICE_SUPERVISOR_LEADER_ELECTOR_H_
#define SLUICE_SUPERVISOR_LEADER_ELECTOR_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "supervisor/store/leader_lease_rows.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct LeaderElectorOptions {
  MetadataStore* store = nullptr;  // not owned
  // Unique per process incarnation (a restarted supervisor is a new holder).
  std::string supervisor_id;
  // Where this supervisor serves SupervisorService (what standbys name).
  std::string address;
  absl::Duration lease = absl::Seconds(6);
  // Zero: lease / 3.
  absl::Duration renew_every = absl::ZeroDuration();
  std::function<void(int64_t epoch)> on_elected;
  std::function<void(const std::string& why)> on_lost;
  // Runs for every transaction the fence refuses (MetadataStore::SetLeaderFence).
  std::function<void()> on_fenced;
};

// What this supervisor knows about the leadership.
struct Leadership {
  bool leading = false;
  // True once leadership was lost (it never comes back in this process).
  bool lost = false;
  // This supervisor's epoch while leading.
  int64_t epoch = 0;
  // The lease as last read (who leads, where, until when).
  std::optional<LeaderLease> lease;
  // The last failed round (the store unreachable, ...), "" after a good one.
  std::string last_error;
};

class LeaderElector {
 public:
  explicit LeaderElector(LeaderElectorOptions options);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Runs rounds every renew_every on a thread, the first at once.
  void Start() ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the thread. When leading and `resign`, gives the lease up (expires
  // it now) so that a standby leads at its next round instead of waiting
  // for the lease to run out. Idempotent.
  void Stop(bool resign) ABSL_LOCKS_EXCLUDED(mu_);

  // One round: take, renew or observe the lease (tests call it without
  // Start). Calls on_elected / on_lost as the round decides.
  absl::Status RunOnce() ABSL_LOCKS_EXCLUDED(mu_);

  Leadership leadership() const ABSL_LOCKS_EXCLUDED(mu_);

  // UNAVAILABLE for a call this supervisor cannot serve because it does not
  // lead: names the leader and its address when known.
  absl::Status NotLeaderStatus() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Outcome { kTook, kRenewed, kFollowing };
  void Loop();
  void Lose(const std::string& why) ABSL_LOCKS_EXCLUDED(mu_);

  const LeaderElectorOptions options_;
  const absl::Duration renew_every_;

  mutable absl::Mutex mu_;
  Leadership leadership_ ABSL_GUARDED_BY(mu_);
  // Local monotonic deadline of the current lease (leading only).
  std::chrono::steady_clock::time_point local_deadline_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // One round at a time (the thread, tests, Stop's resignation).
  absl::Mutex round_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::thread thread_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_LEADER_ELECTOR_H_
