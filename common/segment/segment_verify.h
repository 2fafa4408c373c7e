// One check of a segment file, for whoever is about to trust it: the task
// before it pushes a segment, the supervisor before it commits one and while
// it stays used. Opens the file with the reader (checksum and structure),
// decodes and verifies everything (SegmentReader::Verify) unless the caller
// asks for the structure or the checksum only, and compares it with what
// the caller expects.
//
//   ExpectedSegment expected{id, rows, size, checksum};
//   SLUICE_RETURN_IF_ERROR(VerifySegmentFile(local_path, expected));
#ifndef SLUICE_COMMON_SEGMENT_SEGMENT_VERIFY_H_
#define SLUICE_COMMON_SEGMENT_SEGMENT_VERIFY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/segment/segment_reader.h"

namespace sluice {
namespace segment {

// What the file must hold; empty or negative fields are not compared.
struct ExpectedSegment {
  std::string segment_id;
  int64_t num_rows = -1;
  int64_t size_bytes = -1;
  std::string checksum;  // "crc32c:1a2b3c4d"
};

// How much of the file a check reads.
enum class VerifyDepth {
  // The CRC-32C over every byte, the header and the directory, and
  // `expected`: the file holds the bytes its writer wrote, whatever the
  // disk did (a writer's read-back when whoever takes the file decodes all
  // of it before trusting it: the dictionaries are not decoded here).
  kChecksum,
  // The CRC-32C over every byte, the header, the structure and the
  // dictionaries (what SegmentReader::Open checks), and `expected`.
  kStructure,
  // Also every block and bitmap decoded and checked (SegmentReader::Verify).
  kFull,
};

// OK when the file is a readable, internally consistent segment (not a
// spill) matching `expected`. DATA_LOSS naming the file and the difference
// otherwise; the file system's errors (NOT_FOUND, ...) when it cannot be
// read. Cost: one pass over the file for the checksum and, at kFull, one
// decode of every block and bitmap.
absl::Status VerifySegmentFile(const std::string& path, const ExpectedSegment& expected,
                               VerifyDepth depth = VerifyDepth::kFull);

// The same on a reader already open on the file at `path` (named in errors),
// for a caller that reads the file further: the file is opened and
// checksummed once.
absl::Status VerifyOpenSegment(SegmentReader& reader, const std::string& path,
                               const ExpectedSegment& expected, VerifyDepth depth);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SEGMENT_VERIFY_H_
