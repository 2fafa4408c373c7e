// Handoff tracking: a published segment is handed off once its deep-storage
// copy is verified (present with the published size, a readable segment file
// whose whole-file CRC matches, carrying the published checksum, row count and
// segment id) and, for a datasource in LOADER handoff mode, an external loader
// confirmed it with MarkSegmentsLoaded. A copy that fails is HANDOFF_FAILED
// (and re-checked on later passes); a transient storage error is retried.
#ifndef SLUICE_SUPERVISOR_HANDOFF_VERIFIER_H_
#define SLUICE_SUPERVISOR_HANDOFF_VERIFIER_H_

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/deep_storage.h"
#include "common/metrics/registry.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct HandoffVerifierOptions {
  MetadataStore* store = nullptr;
  DeepStorage* deep_storage = nullptr;
  Clock* clock = Clock::Real();
  // Segments examined per pass.
  int batch = 1000;
  // Where copies of remote objects are downloaded to be read (a local
  // deep storage reads its files in place).
  std::string scratch_dir = "/tmp";
  // Handoff latency (common/metrics/catalog.h); null: none.
  metrics::Registry* metrics = nullptr;
};

struct HandoffPass {
  int examined = 0;
  int handed_off = 0;
  int failed = 0;
};

class HandoffVerifier {
 public:
  explicit HandoffVerifier(HandoffVerifierOptions options) : options_(options) {}

  // One pass over the used segments that are not handed off yet. Passes are
  // serialized (the periodic one and one after MarkSegmentsLoaded).
  absl::StatusOr<HandoffPass> VerifyOnce() ABSL_LOCKS_EXCLUDED(pass_mu_);

 private:
  // Checks the deep-storage copy of one segment; OK when it is a valid
  // segment file matching what was published.
  absl::Status VerifyCopy(const HandoffCandidate& segment);

  const HandoffVerifierOptions options_;
  absl::Mutex pass_mu_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_HANDOFF_VERIFIER_H_
