// Is the deep-storage copy of a segment what its descriptor says? One check,
// used by the publisher before it commits a segment (a task's claim is not
// taken on its word) and by the handoff verifier afterwards.
#ifndef SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_
#define SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/deep_storage.h"
#include "sluice/v1/common.pb.h"

namespace sluice::supervisor {

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
};

// The expectation a publish request's descriptor states, in full.
SegmentExpectation ExpectationOf(const v1::SegmentDescriptor& descriptor);

// OK when the object at expected.path lies under the datasource's own key
// prefix ("<datasource>/"), has the expected size, opens with the segment
// reader (structure and whole-file CRC-32C), and carries the expected
// checksum, row count, segment id, datasource, interval and provenance.
// NOT_FOUND when it is missing, INVALID_ARGUMENT when the path is outside the
// datasource's prefix, DATA_LOSS when it is there but not what was claimed,
// UNAVAILABLE for transient storage errors.
absl::Status VerifySegmentCopy(DeepStorage* storage, const std::string& scratch_dir,
                               const SegmentExpectation& expected);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SEGMENT_COPY_CHECK_H_
