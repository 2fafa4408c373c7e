// Used segments stay verified: a periodic, rate-limited pass over the used,
// handed-off segments, the longest unverified first, that checks each one's
// deep-storage copy (exists, published size, whole-file CRC-32C and the
// published checksum, rows and id: segment_copy_check.h). A copy that fails
// turns the segment HANDOFF_FAILED: ListSegments and `sluicectl segments`
// show it, the datasource's status counts it and is unhealthy, the handoff
// verifier re-checks it every pass (and hands it off again once restored),
// and sluice_supervisor_segment_verification_failures_total counts it.
//
// Cost: one sequential read of each file per cycle; the budget below bounds
// a pass (docs/operations.md has measured figures).
#ifndef SLUICE_SUPERVISOR_USED_SEGMENT_VERIFIER_H_
#define SLUICE_SUPERVISOR_USED_SEGMENT_VERIFIER_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/metrics/registry.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct UsedSegmentVerifierOptions {
  MetadataStore* store = nullptr;
  DeepStorage* deep_storage = nullptr;
  Clock* clock = Clock::Real();
  std::string scratch_dir = "/tmp";
  // The budget of one pass: at most this many segments and, once one file
  // is read, at most this many bytes.
  int max_segments_per_pass = 200;
  int64_t max_bytes_per_pass = int64_t{512} << 20;
  // Null: no metrics.
  metrics::Registry* metrics = nullptr;
};

struct ReverifyPass {
  int examined = 0;
  int failed = 0;
  int64_t bytes = 0;
  absl::Duration took;
};

class UsedSegmentVerifier {
 public:
  explicit UsedSegmentVerifier(UsedSegmentVerifierOptions options) : options_(options) {}

  // One pass within the budget. Passes are serialized.
  absl::StatusOr<ReverifyPass> VerifyOnce() ABSL_LOCKS_EXCLUDED(pass_mu_);

 private:
  const UsedSegmentVerifierOptions options_;
  absl::Mutex pass_mu_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_USED_SEGMENT_VERIFIER_H_
