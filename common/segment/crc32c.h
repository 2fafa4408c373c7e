// CRC-32C (Castagnoli), the checksum of segment and spill files: hardware
// accelerated (SSE4.2) with a table fallback, plus combination of the CRCs of
// two adjacent byte ranges (so a file whose header is written last can still
// be checksummed in one pass).
#ifndef SLUICE_COMMON_SEGMENT_CRC32C_H_
#define SLUICE_COMMON_SEGMENT_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

// CRC-32C of `data` appended to bytes whose CRC-32C is `crc` (0 for none).
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t size);
inline uint32_t Crc32c(absl::string_view data) {
  return Crc32cExtend(0, data.data(), data.size());
}

// CRC-32C of A followed by B, from crc(A), crc(B) and the length of B.
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t size_b);

// The checksum as written on the wire: "crc32c:1a2b3c4d".
std::string FormatCrc32c(uint32_t crc);

namespace internal {
// The portable implementation, exposed for tests.
uint32_t Crc32cExtendPortable(uint32_t crc, const char* data, size_t size);
}  // namespace internal

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_CRC32C_H_
