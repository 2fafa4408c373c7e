#include "common/segment/roaring_check.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/segment/byte_io.h"

namespace sluice {
namespace segment {
namespace {

constexpr uint32_t kCookieNoRuns = 12346;
constexpr uint32_t kCookieRuns = 12347;
constexpr uint32_t kNoOffsetThreshold = 4;
constexpr uint32_t kMaxArrayCardinality = 4096;
constexpr size_t kBitsetBytes = 8192;

bool Fail(std::string* why, std::string message) {
  *why = std::move(message);
  return false;
}

uint16_t U16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) | (static_cast<uint8_t>(p[1]) << 8));
}

}  // namespace

bool CheckPortableRoaring(absl::string_view bytes, uint64_t limit, std::string* why,
                          std::vector<uint32_t>* values) {
  ByteReader r(bytes);
  uint32_t cookie;
  if (!r.Fixed32(&cookie)) return Fail(why, "bitmap shorter than its cookie");
  bool has_runs;
  uint32_t size;
  absl::string_view run_flags;
  if ((cookie & 0xffff) == kCookieRuns) {
    has_runs = true;
    size = (cookie >> 16) + 1;
    if (!r.Bytes((size + 7) / 8, &run_flags)) return Fail(why, "bitmap run flags truncated");
  } else if (cookie == kCookieNoRuns) {
    has_runs = false;
    if (!r.Fixed32(&size) || size > 65536) return Fail(why, "bitmap container count");
  } else {
    return Fail(why, "bitmap cookie");
  }
  absl::string_view descriptive;
  if (!r.Bytes(size_t{4} * size, &descriptive)) return Fail(why, "bitmap header truncated");
  const bool has_offsets = !has_runs || size >= kNoOffsetThreshold;
  absl::string_view offsets;
  if (has_offsets && !r.Bytes(size_t{4} * size, &offsets)) {
    return Fail(why, "bitmap offsets truncated");
  }
  int64_t previous_key = -1;
  for (uint32_t i = 0; i < size; ++i) {
    const uint16_t key = U16(descriptive.data() + 4 * i);
    const uint32_t cardinality = U16(descriptive.data() + 4 * i + 2) + 1u;
    if (key <= previous_key) return Fail(why, "bitmap keys not increasing");
    previous_key = key;
    if (has_offsets) {
      const uint32_t expected = DecodeFixed32(offsets.data() + 4 * i);
      if (expected != static_cast<uint64_t>(r.position() - bytes.data())) {
        return Fail(why, "bitmap container offset");
      }
    }
    const uint64_t high = static_cast<uint64_t>(key) << 16;
    const bool is_run = has_runs && ((static_cast<uint8_t>(run_flags[i / 8]) >> (i % 8)) & 1);
    uint32_t max_low = 0;
    if (is_run) {
      absl::string_view count_bytes, runs;
      if (!r.Bytes(2, &count_bytes)) return Fail(why, "bitmap run count truncated");
      const uint32_t n = U16(count_bytes.data());
      if (n == 0 || !r.Bytes(size_t{4} * n, &runs)) return Fail(why, "bitmap runs truncated");
      uint64_t total = 0;
      int64_t previous_end = -2;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t start = U16(runs.data() + 4 * k);
        const uint32_t length = U16(runs.data() + 4 * k + 2);
        if (static_cast<int64_t>(start) <= previous_end + 1 || start + length > 0xffff) {
          return Fail(why, "bitmap runs overlap or overflow");
        }
        previous_end = start + length;
        total += length + 1;
        if (values != nullptr) {
          for (uint32_t v = start; v <= start + length; ++v) {
            values->push_back(static_cast<uint32_t>(high | v));
          }
        }
      }
      if (total != cardinality) return Fail(why, "bitmap run cardinality");
      max_low = static_cast<uint32_t>(previous_end);
    } else if (cardinality > kMaxArrayCardinality) {
      absl::string_view words;
      if (!r.Bytes(kBitsetBytes, &words)) return Fail(why, "bitmap bitset truncated");
      uint64_t total = 0;
      for (size_t w = 0; w < kBitsetBytes / 8; ++w) {
        const uint64_t word = DecodeFixed64(words.data() + 8 * w);
        total += __builtin_popcountll(word);
        if (word != 0) max_low = static_cast<uint32_t>(w * 64 + 63 - __builtin_clzll(word));
        if (values != nullptr) {
          for (uint64_t bits = word; bits != 0; bits &= bits - 1) {
            values->push_back(static_cast<uint32_t>(high | (w * 64 + __builtin_ctzll(bits))));
          }
        }
      }
      if (total != cardinality) return Fail(why, "bitmap bitset cardinality");
    } else {
      absl::string_view array;
      if (!r.Bytes(size_t{2} * cardinality, &array)) return Fail(why, "bitmap array truncated");
      int64_t previous = -1;
      for (uint32_t k = 0; k < cardinality; ++k) {
        const uint16_t v = U16(array.data() + 2 * k);
        if (v <= previous) return Fail(why, "bitmap array not increasing");
        previous = v;
        if (values != nullptr) values->push_back(static_cast<uint32_t>(high | v));
      }
      max_low = static_cast<uint32_t>(previous);
    }
    if (high + max_low >= limit) return Fail(why, "bitmap value beyond the last row");
  }
  if (!r.empty()) return Fail(why, "bytes after the bitmap");
  return true;
}

}  // namespace segment
}  // namespace sluice
