// A stream supervisor's idleness (ioConfig.idleConfig) as it acts on it:
// the tracker (idle_tracker.h) fed one observation per run from the
// stream's watermarks and how far reading got, the state written to the
// metadata store at every change, and the log lines that say why. The loop
// finishes the reading groups when Check says the stream went idle.
//
// Used on the stream supervisor's loop only. Not copyable. The store and
// clock must outlive it.
#ifndef SLUICE_SUPERVISOR_IDLE_HANDLING_H_
#define SLUICE_SUPERVISOR_IDLE_HANDLING_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "common/offsets.h"
#include "sluice/v1/spec.pb.h"
#include "supervisor/clock.h"
#include "supervisor/idle_tracker.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/stream_tracker.h"

namespace sluice::supervisor {

struct IdleHandlingOptions {
  std::string datasource;
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  // A failure worth the status' recent errors (storing the state).
  std::function<void(const absl::Status&)> record_error;
};

class IdleHandling {
 public:
  enum class Verdict {
    kAwake,
    kIdle,
    // Idle from this run on: the caller finishes the reading groups.
    kWentIdle,
  };

  explicit IdleHandling(IdleHandlingOptions options);
  IdleHandling(const IdleHandling&) = delete;
  IdleHandling& operator=(const IdleHandling&) = delete;

  // One run's observation: idleConfig off wakes it; otherwise, when the
  // stream answered and its offsets are sound, the latest offsets against
  // `read_to` (asked only then). Stores the state when it changed.
  Verdict Check(const v1::IdleConfig& config, const StreamTracker& stream,
                const std::function<OffsetMap()>& read_to);
  // Leaves the idle state now (an offset reset: reading must restart).
  void WakeUp(const std::string& why);
  // The state a restarted supervisor found in the store (null: awake).
  void Restore(const IdleState* state);

  bool idle() const { return tracker_.idle(); }

 private:
  // Writes the tracker's state to the store (a failure is a recorded error).
  void Store();
  std::string Prefix() const;

  const IdleHandlingOptions options_;
  IdleTracker tracker_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_IDLE_HANDLING_H_
