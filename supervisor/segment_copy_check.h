// Is the deep-storage copy of a segment what its descriptor says? One check,
// used by the publisher before it commits a segment (a task's claim is not
// taken on its word), by handoff, and by the periodic re-verification of used
// segments.
#ifndef SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_
#define SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/deep_storage.h"
#include "sluice/v1/common.pb.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

enum class CopyCheckDepth {
  // Size, CRC-32C over every byte, header and structure, and the expected
  // fields: one sequential read of the file.
  kChecksum,
  // Also decode every block and bitmap and check them (segment::
  // VerifySegmentFile, the check the task runs before it pushes).
  kFull,
};

// What the file must hold. Unset optionals are not compared.
struct SegmentExpectation {
  std::string id;
  std::string datasource;
  std::string path;
  int64_t size_bytes = 0;
  int64_t num_rows = 0;
  std::string checksum;
  std::optional<v1::Interval> interval;
  std::optional<v1::Provenance> provenance;
  // The SHA-256 recorded at the commit ("sha256:<64 hex>"); empty: none
  // recorded, not compared. CRC-32C finds damage; this finds a change that
  // kept the CRC (whoever can write deep storage can also forge a CRC).
  std::string sha256;
  CopyCheckDepth depth = CopyCheckDepth::kChecksum;
};

// "sha256:<64 lowercase hex>" of `bytes`.
std::string Sha256Digest(absl::string_view bytes);

// The expectation a publish request's descriptor states, in full.
SegmentExpectation ExpectationOf(const v1::SegmentDescriptor& descriptor);
// What a published segment's row in the metadata store says.
SegmentExpectation ExpectationOf(const HandoffCandidate& published, CopyCheckDepth depth);

// OK when the object at expected.path lies under the datasource's own key
// prefix ("<datasource>/"), has the expected size, opens with the segment
// reader (structure and whole-file CRC-32C), and carries the expected
// checksum, row count, segment id, datasource, interval and provenance, and
// (when expected.sha256 is set) the recorded SHA-256 of the whole file.
// NOT_FOUND when it is missing, INVALID_ARGUMENT when the path is outside the
// datasource's prefix, DATA_LOSS when it is there but not what was claimed,
// UNAVAILABLE for transient storage errors. When OK and `sha256` is not null,
// *sha256 is the digest of the bytes that were checked (Sha256Digest).
absl::Status VerifySegmentCopy(DeepStorage* storage, const std::string& scratch_dir,
                               const SegmentExpectation& expected,
                               std::string* sha256 = nullptr);

// A published segment's copy (handoff, used-segment re-verification): every
// failure, a missing file included, is DATA_LOSS; UNAVAILABLE stays
// transient.
absl::Status CheckSegmentCopy(DeepStorage* deep_storage, const std::string& scratch_dir,
                              const HandoffCandidate& segment, CopyCheckDepth depth);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_
