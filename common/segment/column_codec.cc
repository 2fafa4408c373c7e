#include "common/segment/column_codec.h"

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/segment/byte_io.h"

namespace sluice {
namespace segment {

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone: return "none";
    case Compression::kLz4: return "lz4";
    case Compression::kZstd: return "zstd";
  }
  return "unknown";
}

namespace {

// The encoders write at `p`, which has room for their bound, and return the
// byte after the last written; each has a std::string and a ByteBuffer form.
size_t LongsBound(LongEncoding encoding, size_t n) {
  return (encoding == LongEncoding::kPlain ? 8 : kMaxEncodedLong) * n;
}

char* EncodeLongsAt(LongEncoding encoding, const int64_t* values, size_t n, char* p) {
  switch (encoding) {
    case LongEncoding::kPlain:
      for (size_t i = 0; i < n; ++i) EncodeFixed64(p + 8 * i, static_cast<uint64_t>(values[i]));
      return p + 8 * n;
    case LongEncoding::kDeltaVarint:
    case LongEncoding::kVarint: {
      uint64_t previous = 0;
      const bool delta = encoding == LongEncoding::kDeltaVarint;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t v = static_cast<uint64_t>(values[i]);
        // Differences wrap around in two's complement, so any values round-trip.
        p = EncodeVarint64(p, ZigZag(static_cast<int64_t>(delta ? v - previous : v)));
        previous = v;
      }
      return p;
    }
  }
  return p;
}

// Little-endian hosts store doubles and 32-bit ids as the format does: one
// copy instead of a shift and a store per byte.
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

char* EncodeDoublesAt(const double* values, size_t n, char* p) {
  if (kLittleEndian) {
    if (n > 0) std::memcpy(p, values, 8 * n);
    return p + 8 * n;
  }
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits;
    std::memcpy(&bits, &values[i], 8);
    EncodeFixed64(p + 8 * i, bits);
  }
  return p + 8 * n;
}

int IdWidth(const uint32_t* ids, size_t n) {
  uint32_t max_id = 0;
  for (size_t i = 0; i < n; ++i) max_id = std::max(max_id, ids[i]);
  return max_id <= 0xff ? 1 : max_id <= 0xffff ? 2 : 4;
}

char* EncodeIdsAt(const uint32_t* ids, size_t n, int width, char* p) {
  *p++ = static_cast<char>(width);
  switch (width) {
    case 1:
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>(ids[i]);
      break;
    case 2:
      for (size_t i = 0; i < n; ++i) {
        p[2 * i] = static_cast<char>(ids[i]);
        p[2 * i + 1] = static_cast<char>(ids[i] >> 8);
      }
      break;
    default:
      if (kLittleEndian) {
        if (n > 0) std::memcpy(p, ids, 4 * n);
        break;
      }
      for (size_t i = 0; i < n; ++i) {
        for (int b = 0; b < 4; ++b) p[4 * i + b] = static_cast<char>(ids[i] >> (8 * b));
      }
  }
  return p + static_cast<size_t>(width) * n;
}

// Encodes into `out` through `encode(p)` with room for `bound` bytes.
template <typename Encode>
void EncodeInto(std::string* out, size_t bound, Encode encode) {
  const size_t start = out->size();
  out->resize(start + bound);
  char* begin = &(*out)[start];
  out->resize(start + static_cast<size_t>(encode(begin) - begin));
}
template <typename Encode>
void EncodeInto(ByteBuffer* out, size_t bound, Encode encode) {
  const size_t start = out->size();
  char* begin = out->Extend(bound);
  out->Truncate(start + static_cast<size_t>(encode(begin) - begin));
}

}  // namespace

void EncodeLongs(LongEncoding encoding, const int64_t* values, size_t n, std::string* out) {
  EncodeInto(out, LongsBound(encoding, n),
             [&](char* p) { return EncodeLongsAt(encoding, values, n, p); });
}
void EncodeLongs(LongEncoding encoding, const int64_t* values, size_t n, ByteBuffer* out) {
  EncodeInto(out, LongsBound(encoding, n),
             [&](char* p) { return EncodeLongsAt(encoding, values, n, p); });
}

bool DecodeLongs(LongEncoding encoding, absl::string_view in, size_t n, int64_t* out) {
  switch (encoding) {
    case LongEncoding::kPlain:
      if (in.size() != 8 * n) return false;
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<int64_t>(DecodeFixed64(in.data() + 8 * i));
      return true;
    case LongEncoding::kDeltaVarint:
    case LongEncoding::kVarint: {
      const char* p = in.data();
      const char* const end = p + in.size();
      uint64_t previous = 0;
      const bool delta = encoding == LongEncoding::kDeltaVarint;
      for (size_t i = 0; i < n; ++i) {
        uint64_t z;
        if (p != end && static_cast<uint8_t>(*p) < 0x80) {
          z = static_cast<uint8_t>(*p++);  // one byte: most deltas, counts, small values
        } else {
          ByteReader r(p, static_cast<size_t>(end - p));
          if (!r.Varint64(&z)) return false;
          p = r.position();
        }
        const uint64_t v = static_cast<uint64_t>(UnZigZag(z)) + (delta ? previous : 0);
        out[i] = static_cast<int64_t>(v);
        previous = v;
      }
      return p == end;
    }
  }
  return false;
}

void EncodeDoubles(const double* values, size_t n, std::string* out) {
  EncodeInto(out, 8 * n, [&](char* p) { return EncodeDoublesAt(values, n, p); });
}
void EncodeDoubles(const double* values, size_t n, ByteBuffer* out) {
  EncodeInto(out, 8 * n, [&](char* p) { return EncodeDoublesAt(values, n, p); });
}

bool DecodeDoubles(absl::string_view in, size_t n, double* out) {
  if (in.size() != 8 * n) return false;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bits = DecodeFixed64(in.data() + 8 * i);
    std::memcpy(&out[i], &bits, 8);
  }
  return true;
}

void EncodeIds(const uint32_t* ids, size_t n, std::string* out) {
  const int width = IdWidth(ids, n);
  EncodeInto(out, 1 + width * n, [&](char* p) { return EncodeIdsAt(ids, n, width, p); });
}
void EncodeIds(const uint32_t* ids, size_t n, ByteBuffer* out) {
  const int width = IdWidth(ids, n);
  EncodeInto(out, 1 + width * n, [&](char* p) { return EncodeIdsAt(ids, n, width, p); });
}

bool DecodeIds(absl::string_view in, size_t n, uint32_t max_id, uint32_t* out) {
  if (in.empty()) return false;
  const int width = static_cast<uint8_t>(in[0]);
  if (width != 1 && width != 2 && width != 4) return false;
  if (in.size() != 1 + width * n) return false;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(in.data() + 1);
  uint32_t seen_max = 0;
  switch (width) {
    case 1:
      for (size_t i = 0; i < n; ++i) out[i] = p[i];
      break;
    case 2:
      for (size_t i = 0; i < n; ++i) out[i] = p[2 * i] | (uint32_t{p[2 * i + 1]} << 8);
      break;
    default:
      for (size_t i = 0; i < n; ++i) out[i] = DecodeFixed32(in.data() + 1 + 4 * i);
  }
  for (size_t i = 0; i < n; ++i) seen_max = std::max(seen_max, out[i]);
  return seen_max <= max_id;
}

void EncodeExactSums(const ExactSum* sums, size_t n, std::string* out) {
  for (size_t i = 0; i < n; ++i) sums[i].AppendTo(out);
}

bool DecodeExactSums(absl::string_view in, size_t n, ExactSum* out) {
  ByteReader r(in);
  for (size_t i = 0; i < n; ++i) {
    if (!ExactSum::ReadFrom(&r, &out[i])) return false;
  }
  return r.empty();
}

struct BlockCompressor::Contexts {
  ZSTD_CCtx* zstd = nullptr;
  ~Contexts() {
    if (zstd != nullptr) ZSTD_freeCCtx(zstd);
  }
};

BlockCompressor::BlockCompressor(Compression compression, int level)
    : compression_(compression), level_(level), contexts_(new Contexts) {}
BlockCompressor::~BlockCompressor() = default;
BlockCompressor::BlockCompressor(BlockCompressor&&) noexcept = default;
BlockCompressor& BlockCompressor::operator=(BlockCompressor&&) noexcept = default;

namespace {

// Room for `n` bytes in `out` (its old bytes not kept), and the size it
// ends with.
char* Room(std::string* out, size_t n) {
  out->resize(n);
  return &(*out)[0];
}
char* Room(ByteBuffer* out, size_t n) {
  out->clear();
  return out->Extend(n);
}
void SetSize(std::string* out, size_t n) { out->resize(n); }
void SetSize(ByteBuffer* out, size_t n) { out->Truncate(n); }

}  // namespace

template <typename Out>
absl::Status BlockCompressor::CompressInto(absl::string_view raw, Out* out) {
  switch (compression_) {
    case Compression::kNone: {
      char* p = Room(out, raw.size());
      if (!raw.empty()) std::memcpy(p, raw.data(), raw.size());
      return absl::OkStatus();
    }
    case Compression::kLz4: {
      if (raw.size() > LZ4_MAX_INPUT_SIZE) {
        return absl::InvalidArgumentError("block too large for lz4");
      }
      const int bound = LZ4_compressBound(static_cast<int>(raw.size()));
      char* p = Room(out, static_cast<size_t>(bound));
      const int n = LZ4_compress_default(raw.data(), p, static_cast<int>(raw.size()), bound);
      if (n <= 0 && !raw.empty()) return absl::InternalError("lz4 compression failed");
      SetSize(out, static_cast<size_t>(n));
      return absl::OkStatus();
    }
    case Compression::kZstd: {
      if (contexts_->zstd == nullptr) {
        contexts_->zstd = ZSTD_createCCtx();
        if (contexts_->zstd == nullptr) return absl::ResourceExhaustedError("ZSTD_createCCtx failed");
      }
      const size_t bound = ZSTD_compressBound(raw.size());
      char* p = Room(out, bound);
      const size_t n = ZSTD_compressCCtx(contexts_->zstd, p, bound, raw.data(), raw.size(), level_);
      if (ZSTD_isError(n)) {
        return absl::InternalError(absl::StrCat("zstd compression failed: ", ZSTD_getErrorName(n)));
      }
      SetSize(out, n);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError("unknown compression");
}

absl::Status BlockCompressor::Compress(absl::string_view raw, std::string* out) {
  return CompressInto(raw, out);
}
absl::Status BlockCompressor::Compress(absl::string_view raw, ByteBuffer* out) {
  return CompressInto(raw, out);
}

struct BlockDecompressor::Context {
  ZSTD_DCtx* zstd = nullptr;
  ~Context() {
    if (zstd != nullptr) ZSTD_freeDCtx(zstd);
  }
};

BlockDecompressor::BlockDecompressor() : context_(new Context) {}
BlockDecompressor::~BlockDecompressor() = default;
BlockDecompressor::BlockDecompressor(BlockDecompressor&&) noexcept = default;
BlockDecompressor& BlockDecompressor::operator=(BlockDecompressor&&) noexcept = default;

absl::Status BlockDecompressor::Decompress(Compression compression, absl::string_view stored,
                                           size_t raw_size, absl::string_view what,
                                           std::string* out) {
  out->resize(raw_size);
  switch (compression) {
    case Compression::kNone:
      if (stored.size() != raw_size) break;
      if (raw_size > 0) std::memcpy(&(*out)[0], stored.data(), raw_size);
      return absl::OkStatus();
    case Compression::kLz4: {
      if (stored.size() > LZ4_MAX_INPUT_SIZE || raw_size > LZ4_MAX_INPUT_SIZE) break;
      if (raw_size == 0) {
        // LZ4 writes one token byte for an empty input.
        if (stored.size() == 1 && stored[0] == 0) return absl::OkStatus();
        break;
      }
      const int n = LZ4_decompress_safe(stored.data(), &(*out)[0], static_cast<int>(stored.size()),
                                        static_cast<int>(raw_size));
      if (n != static_cast<int>(raw_size)) break;
      return absl::OkStatus();
    }
    case Compression::kZstd: {
      if (context_->zstd == nullptr) {
        context_->zstd = ZSTD_createDCtx();
        if (context_->zstd == nullptr) return absl::ResourceExhaustedError("ZSTD_createDCtx failed");
      }
      const size_t n = ZSTD_decompressDCtx(context_->zstd, raw_size == 0 ? nullptr : &(*out)[0],
                                           raw_size, stored.data(), stored.size());
      if (ZSTD_isError(n) || n != raw_size) break;
      return absl::OkStatus();
    }
  }
  return absl::DataLossError(
      absl::StrCat(what, ": compressed block does not decompress to ", raw_size, " bytes"));
}

}  // namespace segment
}  // namespace sluice
