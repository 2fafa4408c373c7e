#include "supervisor/used_segment_verifier.h"

#include <glog/logging.h>

#include <vector>

#include "common/metrics/catalog.h"
#include "common/retry.h"
#include "common/status_macros.h"
#include "supervisor/segment_copy_check.h"

namespace sluice::supervisor {

absl::StatusOr<ReverifyPass> UsedSegmentVerifier::VerifyOnce() {
  absl::MutexLock serialized(&pass_mu_);
  const absl::Time started = options_.clock->Now();
  std::vector<HandoffCandidate> segments;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(segments, txn.SegmentsToReverify(options_.max_segments_per_pass));
    return absl::OkStatus();
  }));
  ReverifyPass pass;
  for (const HandoffCandidate& s : segments) {
    if (pass.examined > 0 && pass.bytes + s.size_bytes > options_.max_bytes_per_pass) break;
    ++pass.examined;
    pass.bytes += s.size_bytes;
    const absl::Status copy = CheckSegmentCopy(options_.deep_storage, options_.scratch_dir, s,
                                               CopyCheckDepth::kChecksum);
    if (IsRetryable(copy)) continue;  // transient (I/O, disk full): next cycle
    const int64_t now_ms = options_.clock->NowMs();
    if (copy.ok()) {
      SLUICE_RETURN_IF_ERROR(options_.store->InTransaction(
          [&](StoreTxn& txn) { return txn.SetVerifiedAt(s.id, now_ms); }));
      continue;
    }
    ++pass.failed;
    LOG(ERROR) << "[supervisor " << s.datasource << "] ALERT: used segment " << s.id
               << " no longer verifies in deep storage: " << copy;
    SLUICE_RETURN_IF_ERROR(options_.store->InTransaction(
        [&](StoreTxn& txn) { return txn.SetHandoff(s.id, v1::HANDOFF_STATE_FAILED, 0, 0); }));
    if (options_.metrics != nullptr) {
      options_.metrics
          ->GetCounter(metrics::kSupervisorSegmentVerificationFailures,
                       {{"datasource", s.datasource}})
          ->Increment();
    }
  }
  pass.took = options_.clock->Now() - started;
  if (pass.failed > 0) {
    LOG(WARNING) << "[supervisor] used-segment verification: " << pass.examined
                 << " segments examined (" << pass.bytes << " bytes), " << pass.failed
                 << " failed";
  }
  return pass;
}

}  // namespace sluice::supervisor
