// The check of a published segment's deep-storage copy, shared by handoff
// (before a segment counts as handed off) and the periodic re-verification
// of used segments: the object exists with the published size, and it is a
// segment file whose whole-file CRC-32C, checksum, row count and segment id
// are the published ones (common/segment/segment_verify.h).
#ifndef SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_
#define SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_

#include <string>

#include "absl/status/status.h"
#include "common/deep_storage.h"
#include "supervisor/metadata_store.h"

namespace sluice::supervisor {

enum class CopyCheckDepth {
  // Size, CRC-32C over every byte, header and structure, published
  // checksum, rows and id: one sequential read of the file.
  kChecksum,
  // Also decode every block and bitmap and check them (SegmentReader::Verify).
  kFull,
};

// OK when the copy matches. DATA_LOSS (missing, wrong size, damaged,
// different) with a message naming the path; UNAVAILABLE for a transient
// storage error (retry later). A remote object is downloaded under
// `scratch_dir` and removed again.
absl::Status CheckSegmentCopy(DeepStorage* deep_storage, const std::string& scratch_dir,
                              const HandoffCandidate& segment, CopyCheckDepth depth);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_
