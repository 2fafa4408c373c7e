// Damaged segment files for the tests of the checks that must refuse them:
// damage the whole-file checksum cannot catch, because the checksum is
// recomputed after it.
#ifndef SLUICE_COMMON_SEGMENT_TEST_DAMAGE_H_
#define SLUICE_COMMON_SEGMENT_TEST_DAMAGE_H_

#include <string>

#include "absl/status/statusor.h"

namespace sluice {
namespace segment {
namespace testing {

// Recomputes the trailer's CRC-32C over `bytes` (a segment or spill file a
// test has changed). Files shorter than a trailer are left alone.
void ResealChecksum(std::string* bytes);

// Changes one byte of the segment file at `path` so that it still opens (the
// checksum resealed; header, directory and dictionaries intact) but fails
// SegmentReader::Verify: damage only a decode of every block or bitmap can
// find. Rewrites the file and returns its new checksum ("crc32c:..").
// NOT_FOUND if no single-byte change does that.
absl::StatusOr<std::string> DamageBlocksKeepingChecksum(const std::string& path);

// Changes five bytes of the segment file at `path` so that its CRC-32C stays
// the same (they are XORed with the Castagnoli polynomial, which a CRC cannot
// see) and it still opens with the same header: the deliberate change of a
// committed file that only a cryptographic digest finds. Prefers a change
// that also passes SegmentReader::Verify (different values, still decoding).
// Rewrites the file and returns the offset changed; NOT_FOUND if no offset
// does that.
absl::StatusOr<size_t> ChangeKeepingChecksum(const std::string& path);

}  // namespace testing
}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_TEST_DAMAGE_H_
