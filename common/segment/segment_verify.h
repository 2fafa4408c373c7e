// One check of a segment file, for whoever is about to trust it: the task
// before it pushes a segment, the supervisor before it commits one and while
// it stays used. Opens the file with the reader (checksum and structure),
// decodes and verifies everything (SegmentReader::Verify), and compares it
// with what the caller expects.
//
//   ExpectedSegment expected{id, rows, size, checksum};
//   SLUICE_RETURN_IF_ERROR(VerifySegmentFile(local_path, expected));
#ifndef SLUICE_COMMON_SEGMENT_SEGMENT_VERIFY_H_
#define SLUICE_COMMON_SEGMENT_SEGMENT_VERIFY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace sluice {
namespace segment {

// What the file must hold; empty or negative fields are not compared.
struct ExpectedSegment {
  std::string segment_id;
  int64_t num_rows = -1;
  int64_t size_bytes = -1;
  std::string checksum;  // "crc32c:1a2b3c4d"
};

// OK when the file is a readable, internally consistent segment (not a
// spill) matching `expected`. DATA_LOSS naming the file and the difference
// otherwise; the file system's errors (NOT_FOUND, ...) when it cannot be
// read. Cost: one pass over the file for the checksum and one decode of
// every block and bitmap.
absl::Status VerifySegmentFile(const std::string& path, const ExpectedSegment& expected);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SEGMENT_VERIFY_H_
