// The audit's SegmentVerifier over segment files: opens the file a segment's
// deep-storage path names (CRC-32C of the whole file checked on open), runs
// the reader's full verification (every block decoded, row order, statistics
// and bitmaps), and returns what the file itself says: rows, checksum,
// segment id and Kafka provenance, for the audit to compare with the
// metadata store.
//
// Deep storage is found from the path: "file:///root/..." (or a bare
// absolute path) is read in place. Any other URI (s3://...) is read through
// the deep storage given in the options: downloaded (its size and SHA-256
// checked by the store) to the scratch directory, verified, removed.
#ifndef SLUICE_TOOLS_AUDIT_SEGMENT_FILE_VERIFIER_H_
#define SLUICE_TOOLS_AUDIT_SEGMENT_FILE_VERIFIER_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "common/deep_storage.h"
#include "tools/audit/exactly_once_audit.h"

namespace sluice::audit {

// The local file of a deep-storage URI: "file:///a/b" -> "/a/b", "/a/b" as
// is. INVALID_ARGUMENT for a relative path; UNIMPLEMENTED for other schemes.
absl::StatusOr<std::string> LocalSegmentPath(const std::string& uri);

struct SegmentFileVerifierOptions {
  // Where non-file URIs are read from (not owned; null: only file:// paths).
  DeepStorage* deep_storage = nullptr;
  // Downloads go here and are removed after each check.
  std::string scratch_dir;
};

class SegmentFileVerifier : public SegmentVerifier {
 public:
  SegmentFileVerifier() = default;
  explicit SegmentFileVerifier(SegmentFileVerifierOptions options) : options_(std::move(options)) {}

  // NOT_FOUND for a missing file, DATA_LOSS for a damaged one (bad checksum,
  // structure, blocks, order or bitmaps), FAILED_PRECONDITION for a spill
  // file where a segment was expected.
  absl::StatusOr<VerifiedSegment> Verify(const std::string& path) override;

 private:
  absl::StatusOr<VerifiedSegment> VerifyLocal(const std::string& local);

  SegmentFileVerifierOptions options_;
};

}  // namespace sluice::audit

#endif  // SLUICE_TOOLS_AUDIT_SEGMENT_FILE_VERIFIER_H_
