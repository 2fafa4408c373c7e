// Little-endian fixed-width integers, LEB128 varints and zigzag encoding:
// appending to a std::string, and reading back from a bounded span where every
// read is checked (a reader never reads past its end, whatever the bytes say).
#ifndef SLUICE_COMMON_SEGMENT_BYTE_IO_H_
#define SLUICE_COMMON_SEGMENT_BYTE_IO_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

inline void PutFixed32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 4);
}
inline void PutFixed64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 8);
}
inline void EncodeFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// Writes the varint of `v` at `dst` (room for 10 bytes needed); returns the
// byte after it.
inline char* EncodeVarint64(char* dst, uint64_t v) {
  while (v >= 0x80) {
    *dst++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *dst++ = static_cast<char>(v);
  return dst;
}
inline void PutVarint64(std::string* out, uint64_t v) {
  char b[10];
  out->append(b, EncodeVarint64(b, v) - b);
}
inline void PutVarintSigned(std::string* out, int64_t v) { PutVarint64(out, ZigZag(v)); }
inline void PutString(std::string* out, absl::string_view s) {
  PutVarint64(out, s.size());
  out->append(s.data(), s.size());
}

// Reads from [data, data + size). Every method returns false (and leaves the
// output untouched) when the bytes run out or are malformed; a failed read
// sets failed() for good, so a caller may check once after a series of reads.
class ByteReader {
 public:
  ByteReader() = default;
  ByteReader(const char* data, size_t size) : p_(data), end_(data + size) {}
  explicit ByteReader(absl::string_view bytes)
      : ByteReader(bytes.data(), bytes.size()) {}

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool empty() const { return p_ == end_; }
  bool failed() const { return failed_; }
  const char* position() const { return p_; }

  bool Byte(uint8_t* v) {
    if (p_ == end_) return Fail();
    *v = static_cast<uint8_t>(*p_++);
    return true;
  }
  bool Fixed32(uint32_t* v) {
    if (remaining() < 4) return Fail();
    *v = DecodeFixed32(p_);
    p_ += 4;
    return true;
  }
  bool Fixed64(uint64_t* v) {
    if (remaining() < 8) return Fail();
    *v = DecodeFixed64(p_);
    p_ += 8;
    return true;
  }
  bool Varint64(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return Fail();
      const uint8_t b = static_cast<uint8_t>(*p_++);
      if (shift == 63 && b > 1) return Fail();  // more than 64 bits
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        *v = result;
        return true;
      }
    }
    return Fail();
  }
  bool Varint32(uint32_t* v) {
    uint64_t x;
    if (!Varint64(&x)) return false;
    if (x > UINT32_MAX) return Fail();
    *v = static_cast<uint32_t>(x);
    return true;
  }
  bool VarintSigned(int64_t* v) {
    uint64_t x;
    if (!Varint64(&x)) return false;
    *v = UnZigZag(x);
    return true;
  }
  // A varint that must be <= `max` (a count or length about to size memory).
  bool Count(uint64_t max, uint64_t* v) {
    uint64_t x;
    if (!Varint64(&x)) return false;
    if (x > max) return Fail();
    *v = x;
    return true;
  }
  bool Bytes(size_t n, absl::string_view* out) {
    if (remaining() < n) return Fail();
    *out = absl::string_view(p_, n);
    p_ += n;
    return true;
  }
  // A varint length followed by that many bytes.
  bool String(absl::string_view* out) {
    uint64_t n;
    if (!Varint64(&n)) return false;
    if (n > remaining()) return Fail();
    return Bytes(static_cast<size_t>(n), out);
  }
  bool String(std::string* out) {
    absl::string_view s;
    if (!String(&s)) return false;
    out->assign(s.data(), s.size());
    return true;
  }

 private:
  bool Fail() {
    failed_ = true;
    p_ = end_;
    return false;
  }

  const char* p_ = nullptr;
  const char* end_ = nullptr;
  bool failed_ = false;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_BYTE_IO_H_
