// Druid's idleConfig for one datasource: whether its stream has stopped
// moving. Pure: the loop feeds it one observation per run and acts on the
// answer (finish the groups and go IDLE, or wake up and create groups).
//
// Not idle -> idle: every partition's latest offset has stayed where it is,
// and reading has reached it (the furthest live reading task's offset, else
// the committed offset, equals the latest offset), for inactiveAfterMillis.
// Idle -> awake: any partition's latest offset differs from the one seen
// when it went idle (new records, or a partition added).
#ifndef SLUICE_SUPERVISOR_IDLE_TRACKER_H_
#define SLUICE_SUPERVISOR_IDLE_TRACKER_H_

#include <cstdint>

#include "absl/time/time.h"
#include "common/offsets.h"

namespace sluice::supervisor {

// What a datasource's idleness is, as the metadata store keeps it.
struct IdleState {
  // The latest offsets when it went idle.
  OffsetMap latest;
  int64_t since_ms = 0;
};

class IdleTracker {
 public:
  enum class Change { kNone, kWentIdle, kWoke };

  // A restarted supervisor resumes the stored state (null: awake).
  void Restore(const IdleState* state);

  // One observation: `latest` per partition (the watermarks; empty when
  // unknown: no change), and how far reading got (`read_to`; a partition
  // without an entry is not caught up).
  Change Observe(const OffsetMap& latest, const OffsetMap& read_to, absl::Time now,
                 absl::Duration inactive_after);

  // Back to awake at once (idleConfig turned off, a reset): kWoke if it was
  // idle.
  Change Wake();

  bool idle() const { return idle_; }
  // While idle: what to store.
  const IdleState& state() const { return state_; }

 private:
  bool idle_ = false;
  IdleState state_;
  // Awake: the latest offsets last seen, and since when the stream has
  // been still and read to its end (InfiniteFuture: not so now).
  OffsetMap last_latest_;
  absl::Time still_since_ = absl::InfiniteFuture();
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_IDLE_TRACKER_H_
