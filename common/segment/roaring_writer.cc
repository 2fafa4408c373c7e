#include "common/segment/roaring_writer.h"

#include <cassert>
#include <cstring>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "common/segment/byte_io.h"

namespace sluice {
namespace segment {
namespace {

constexpr uint32_t kCookieNoRuns = 12346;
constexpr uint32_t kCookieRuns = 12347;
constexpr uint32_t kNoOffsetThreshold = 4;
constexpr uint32_t kMaxArrayCardinality = 4096;
constexpr size_t kBitsetBytes = 8192;

constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// Little-endian writes into a buffer already sized; return the next byte.
// (One store on a little-endian host, where a byte at a time was a
// sizeable share of the many small bitmaps' cost.)
inline char* Write16(char* p, uint32_t v) {
  if (kLittleEndian) {
    const uint16_t x = static_cast<uint16_t>(v);
    std::memcpy(p, &x, 2);
    return p + 2;
  }
  p[0] = static_cast<char>(v & 0xff);
  p[1] = static_cast<char>((v >> 8) & 0xff);
  return p + 2;
}
inline char* Write32(char* p, uint32_t v) {
  if (kLittleEndian) {
    std::memcpy(p, &v, 4);
    return p + 4;
  }
  p = Write16(p, v & 0xffff);
  return Write16(p, v >> 16);
}

struct Container {
  uint16_t key;
  size_t begin, end;  // values[begin, end) share the key
  uint32_t runs;
  bool is_run;
  size_t bytes;
};

// Room for `n` more bytes at the end of `out`, which the caller writes
// (all of them: the bytes where bits are set in place are zeroed first).
inline char* Room(std::string* out, size_t n) {
  const size_t start = out->size();
  out->resize(start + n);
  return &(*out)[start];
}
inline char* Room(ByteBuffer* out, size_t n) { return out->Extend(n); }

template <typename Out>
void AppendTo(const uint32_t* values, size_t n, Out* out) {
  // The bitmap of a value of a high-cardinality dimension (a page, a user)
  // holds one to three rows in one container, an array (runs are never
  // smaller at that size): written at once, as the general path below would
  // write it (most of a segment's bitmaps, and most of their time).
  if (n >= 1 && n <= 3 && (values[0] >> 16) == (values[n - 1] >> 16)) {
    constexpr size_t kHeaderBytes = 4 + 4 + 4 + 4;  // cookie, size, key + cardinality, offset
    char* p = Room(out, kHeaderBytes + 2 * n);
    p = Write32(p, kCookieNoRuns);
    p = Write32(p, 1);
    p = Write16(p, values[0] >> 16);
    p = Write16(p, static_cast<uint32_t>(n - 1));
    p = Write32(p, kHeaderBytes);
    for (size_t k = 0; k < n; ++k) p = Write16(p, values[k] & 0xffff);
    return;
  }
  // Most bitmaps of a segment hold few rows: one or two containers, kept
  // inline (one heap allocation per bitmap was a tenth of a segment build).
  absl::InlinedVector<Container, 4> containers;
  for (size_t i = 0; i < n;) {
    Container c;
    c.key = static_cast<uint16_t>(values[i] >> 16);
    c.begin = i;
    uint32_t runs = 1;
    size_t j = i + 1;
    while (j < n && (values[j] >> 16) == c.key) {
      if (values[j] != values[j - 1] + 1) ++runs;
      ++j;
    }
    c.end = j;
    c.runs = runs;
    const size_t cardinality = j - i;
    const size_t plain = cardinality <= kMaxArrayCardinality ? 2 * cardinality : kBitsetBytes;
    const size_t run_bytes = 2 + 4 * size_t{runs};
    c.is_run = run_bytes < plain;
    c.bytes = c.is_run ? run_bytes : plain;
    containers.push_back(c);
    i = j;
  }
  const uint32_t size = static_cast<uint32_t>(containers.size());
  bool any_run = false;
  size_t body_bytes = 0;
  for (const Container& c : containers) {
    any_run |= c.is_run;
    body_bytes += c.bytes;
  }
  const bool has_offsets = !any_run || size >= kNoOffsetThreshold;
  const size_t header_bytes = (any_run ? 4 + (size + 7) / 8 : 8) + 4 * size_t{size} +
                              (has_offsets ? 4 * size_t{size} : 0);
  // Sized once and written through a pointer: appending byte by byte was
  // most of a segment's bitmap time.
  char* const begin = Room(out, header_bytes + body_bytes);
  char* p = begin;
  if (any_run) {
    p = Write32(p, kCookieRuns | ((size - 1) << 16));
    std::memset(p, 0, (size + 7) / 8);
    for (uint32_t k = 0; k < size; ++k) {
      if (containers[k].is_run) p[k / 8] |= static_cast<char>(1 << (k % 8));
    }
    p += (size + 7) / 8;
  } else {
    p = Write32(p, kCookieNoRuns);
    p = Write32(p, size);
  }
  for (const Container& c : containers) {
    p = Write16(p, c.key);
    p = Write16(p, static_cast<uint32_t>(c.end - c.begin - 1));
  }
  if (has_offsets) {
    // Offsets of each container from the start of the bitmap.
    uint64_t offset = header_bytes;
    for (const Container& c : containers) {
      p = Write32(p, static_cast<uint32_t>(offset));
      offset += c.bytes;
    }
  }
  for (const Container& c : containers) {
    if (c.is_run) {
      p = Write16(p, c.runs);
      size_t k = c.begin;
      while (k < c.end) {
        size_t e = k + 1;
        while (e < c.end && values[e] == values[e - 1] + 1) ++e;
        p = Write16(p, values[k] & 0xffff);
        p = Write16(p, static_cast<uint32_t>(e - k - 1));
        k = e;
      }
    } else if (c.end - c.begin <= kMaxArrayCardinality) {
      for (size_t k = c.begin; k < c.end; ++k) p = Write16(p, values[k] & 0xffff);
    } else {
      std::memset(p, 0, kBitsetBytes);
      for (size_t k = c.begin; k < c.end; ++k) {
        const uint32_t low = values[k] & 0xffff;
        p[low / 8] = static_cast<char>(static_cast<uint8_t>(p[low / 8]) | (1u << (low % 8)));
      }
      p += kBitsetBytes;
    }
  }
  assert(p == begin + header_bytes + body_bytes);
}

}  // namespace

void AppendPortableRoaring(const uint32_t* values, size_t n, std::string* out) {
  AppendTo(values, n, out);
}

void AppendPortableRoaring(const uint32_t* values, size_t n, ByteBuffer* out) {
  AppendTo(values, n, out);
}

}  // namespace segment
}  // namespace sluice
