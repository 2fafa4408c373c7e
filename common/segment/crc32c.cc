#include "common/segment/crc32c.h"

#include <nmmintrin.h>

#include <array>
#include <cstring>

#include "absl/strings/str_format.h"

namespace sluice {
namespace segment {
namespace {

constexpr uint32_t kPoly = 0x82f63b78;  // reflected Castagnoli polynomial

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = MakeTable();

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t state,
                                                           const char* p,
                                                           size_t n) {
  uint64_t s = state;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    s = _mm_crc32_u64(s, word);
    p += 8;
    n -= 8;
  }
  uint32_t s32 = static_cast<uint32_t>(s);
  while (n > 0) {
    s32 = _mm_crc32_u8(s32, static_cast<uint8_t>(*p++));
    --n;
  }
  return s32;
}

uint32_t ExtendTable(uint32_t state, const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    state = kTable[(state ^ static_cast<uint8_t>(p[i])) & 0xff] ^ (state >> 8);
  }
  return state;
}

const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");

// a(x) * b(x) mod P(x), bit-reflected (bit 31 is x^0).
uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = uint32_t{1} << 31;
  uint32_t p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

// x^(8 * n) mod P(x), by squaring.
uint32_t XPow8N(uint64_t n) {
  uint32_t result = uint32_t{1} << 31;  // x^0
  uint32_t square = uint32_t{1} << 23;  // x^8
  while (n != 0) {
    if (n & 1) result = MultModP(square, result);
    square = MultModP(square, square);
    n >>= 1;
  }
  return result;
}

}  // namespace

namespace internal {
uint32_t Crc32cExtendPortable(uint32_t crc, const char* data, size_t size) {
  return ~ExtendTable(~crc, data, size);
}
}  // namespace internal

uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t size) {
  if (kHaveSse42) return ~ExtendHardware(~crc, data, size);
  return ~ExtendTable(~crc, data, size);
}

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t size_b) {
  return MultModP(XPow8N(size_b), crc_a) ^ crc_b;
}

std::string FormatCrc32c(uint32_t crc) { return absl::StrFormat("crc32c:%08x", crc); }

}  // namespace segment
}  // namespace sluice
