// A stream supervisor's idleness: observations, stored state, log lines
// (idle_handling.h).
#include "supervisor/idle_handling.h"

#include <glog/logging.h>

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "supervisor/stream_health.h"

namespace sluice::supervisor {

IdleHandling::IdleHandling(IdleHandlingOptions options) : options_(std::move(options)) {}

IdleHandling::Verdict IdleHandling::Check(const v1::IdleConfig& config,
                                          const StreamTracker& stream,
                                          const std::function<OffsetMap()>& read_to) {
  IdleTracker::Change change = IdleTracker::Change::kNone;
  if (!config.enabled()) {
    change = tracker_.Wake();
  } else if (!stream.unreachable() && stream.offsets_verdict().problem == StreamProblem::kNone) {
    OffsetMap latest;
    for (const auto& [p, marks] : stream.watermarks()) latest[p] = marks.latest;
    change = tracker_.Observe(latest, read_to(), options_.clock->Now(),
                              absl::Milliseconds(config.inactive_after_millis()));
  }
  if (change == IdleTracker::Change::kNone) {
    return tracker_.idle() ? Verdict::kIdle : Verdict::kAwake;
  }
  Store();
  if (change == IdleTracker::Change::kWoke) {
    LOG(INFO) << Prefix()
              << "awake: " << (config.enabled() ? "the stream moved" : "idleConfig is off")
              << "; creating groups again";
    return Verdict::kAwake;
  }
  LOG(INFO) << Prefix() << "idle: every partition stayed at its latest offset "
            << FormatOffsets(tracker_.state().latest) << " for " << config.inactive_after_millis()
            << " ms with nothing left to read";
  return Verdict::kWentIdle;
}

void IdleHandling::WakeUp(const std::string& why) {
  if (tracker_.Wake() != IdleTracker::Change::kWoke) return;
  Store();
  LOG(INFO) << Prefix() << "awake: " << why;
}

void IdleHandling::Restore(const IdleState* state) {
  tracker_.Restore(state);
  if (state != nullptr) {
    LOG(INFO) << Prefix() << "idle since "
              << absl::FormatTime(absl::FromUnixMillis(state->since_ms)) << " (latest offsets "
              << FormatOffsets(state->latest) << ")";
  }
}

void IdleHandling::Store() {
  const int64_t now_ms = options_.clock->NowMs();
  absl::Status stored = options_.store->InTransaction([&](StoreTxn& txn) {
    return txn.SetIdleState(options_.datasource, tracker_.idle() ? &tracker_.state() : nullptr,
                            now_ms);
  });
  if (!stored.ok()) options_.record_error(Annotate(stored, "storing the idle state"));
}

std::string IdleHandling::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

}  // namespace sluice::supervisor
