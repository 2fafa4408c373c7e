#include "supervisor/handoff_verifier.h"

#include <glog/logging.h>

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/metrics/catalog.h"
#include "common/retry.h"
#include "common/status_macros.h"
#include "supervisor/segment_copy_check.h"

namespace sluice::supervisor {

absl::Status HandoffVerifier::VerifyCopy(const HandoffCandidate& segment) {
  // The publisher decoded every block and bitmap of this very object before
  // it committed the segment (the only way a segment enters the store), and
  // recorded its CRC-32C and its SHA-256: the whole-file CRC, digest,
  // structure and published fields show it is still those bytes (the digest
  // also when someone changed them and kept the CRC). Decoding again here
  // cost as much as the publisher's check, for every segment.
  return CheckSegmentCopy(options_.deep_storage, options_.scratch_dir, segment,
                          CopyCheckDepth::kChecksum);
}

absl::StatusOr<HandoffPass> HandoffVerifier::VerifyOnce() {
  absl::MutexLock serialized(&pass_mu_);
  std::vector<HandoffCandidate> candidates;
  std::map<std::string, v1::HandoffMode> modes;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(candidates, txn.HandoffCandidates(options_.batch));
    for (const HandoffCandidate& c : candidates) {
      if (modes.count(c.datasource)) continue;
      SLUICE_ASSIGN_OR_RETURN(auto spec, txn.LatestSpec(c.datasource));
      modes[c.datasource] = spec ? spec->spec.tuning_config().handoff_mode() : v1::HANDOFF_MODE_DEEP_STORAGE;
    }
    return absl::OkStatus();
  }));
  HandoffPass pass;
  for (const HandoffCandidate& c : candidates) {
    ++pass.examined;
    absl::Status copy = VerifyCopy(c);
    const int64_t now_ms = options_.clock->NowMs();
    v1::HandoffState state;
    int64_t verified_at = c.verified_at_ms;
    int64_t handed_off_at = 0;
    if (!copy.ok()) {
      if (IsRetryable(copy)) continue;  // transient (I/O, disk full): next pass
      state = v1::HANDOFF_STATE_FAILED;
      verified_at = 0;
      if (c.state != v1::HANDOFF_STATE_FAILED) {
        LOG(ERROR) << "[supervisor " << c.datasource << "] ALERT: segment " << c.id
                   << " failed deep-storage verification: " << copy;
      }
      ++pass.failed;
    } else {
      if (verified_at == 0) verified_at = now_ms;
      const bool loaded = modes[c.datasource] != v1::HANDOFF_MODE_LOADER || c.loaded_at_ms > 0;
      state = loaded ? v1::HANDOFF_STATE_HANDED_OFF : v1::HANDOFF_STATE_PENDING;
      if (loaded) {
        handed_off_at = now_ms;
        ++pass.handed_off;
      }
    }
    if (state == c.state && verified_at == c.verified_at_ms) continue;
    SLUICE_RETURN_IF_ERROR(options_.store->InTransaction(
        [&](StoreTxn& txn) { return txn.SetHandoff(c.id, state, verified_at, handed_off_at); }));
    if (state == v1::HANDOFF_STATE_HANDED_OFF) {
      VLOG(1) << "[supervisor " << c.datasource << "] segment " << c.id << " handed off";
      if (options_.metrics != nullptr) {
        options_.metrics
            ->GetHistogram(metrics::kSupervisorHandoffSeconds, {{"datasource", c.datasource}})
            ->ObserveDuration(absl::Milliseconds(now_ms - c.created_at_ms));
      }
    }
  }
  if (pass.handed_off > 0 || pass.failed > 0) {
    LOG(INFO) << "[supervisor] handoff pass: " << pass.examined << " segments examined, "
              << pass.handed_off << " handed off, " << pass.failed << " failed verification";
  }
  return pass;
}

}  // namespace sluice::supervisor
