// The audit's SegmentVerifier over segment files: opens the file a segment's
// deep-storage path names (CRC-32C of the whole file checked on open), runs
// the reader's full verification (every block decoded, row order, statistics
// and bitmaps), and returns what the file itself says: rows, checksum,
// segment id and Kafka provenance, for the audit to compare with the
// metadata store.
//
// Deep storage is found from the path: "file:///root/..." (or a bare
// absolute path) is read in place. Other schemes are UNIMPLEMENTED until a
// remote deep storage exists (then it would download to a scratch dir).
#ifndef SLUICE_TOOLS_AUDIT_SEGMENT_FILE_VERIFIER_H_
#define SLUICE_TOOLS_AUDIT_SEGMENT_FILE_VERIFIER_H_

#include <string>

#include "absl/status/statusor.h"
#include "tools/audit/exactly_once_audit.h"

namespace sluice::audit {

// The local file of a deep-storage URI: "file:///a/b" -> "/a/b", "/a/b" as
// is. INVALID_ARGUMENT for a relative path; UNIMPLEMENTED for other schemes.
absl::StatusOr<std::string> LocalSegmentPath(const std::string& uri);

class SegmentFileVerifier : public SegmentVerifier {
 public:
  // NOT_FOUND for a missing file, DATA_LOSS for a damaged one (bad checksum,
  // structure, blocks, order or bitmaps), FAILED_PRECONDITION for a spill
  // file where a segment was expected.
  absl::StatusOr<VerifiedSegment> Verify(const std::string& path) override;
};

}  // namespace sluice::audit

#endif  // SLUICE_TOOLS_AUDIT_SEGMENT_FILE_VERIFIER_H_
