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

void EncodeLongs(LongEncoding encoding, const int64_t* values, size_t n, std::string* out) {
  const size_t start = out->size();
  switch (encoding) {
    case LongEncoding::kPlain: {
      out->resize(start + 8 * n);
      char* p = &(*out)[start];
      for (size_t i = 0; i < n; ++i) EncodeFixed64(p + 8 * i, static_cast<uint64_t>(values[i]));
      return;
    }
    case LongEncoding::kDeltaVarint:
    case LongEncoding::kVarint: {
      out->resize(start + kMaxEncodedLong * n);
      char* begin = &(*out)[start];
      char* p = begin;
      uint64_t previous = 0;
      const bool delta = encoding == LongEncoding::kDeltaVarint;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t v = static_cast<uint64_t>(values[i]);
        // Differences wrap around in two's complement, so any values round-trip.
        p = EncodeVarint64(p, ZigZag(static_cast<int64_t>(delta ? v - previous : v)));
        previous = v;
      }
      out->resize(start + (p - begin));
      return;
    }
  }
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
  const size_t start = out->size();
  out->resize(start + 8 * n);
  char* p = &(*out)[start];
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits;
    std::memcpy(&bits, &values[i], 8);
    EncodeFixed64(p + 8 * i, bits);
  }
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
  uint32_t max_id = 0;
  for (size_t i = 0; i < n; ++i) max_id = std::max(max_id, ids[i]);
  const int width = max_id <= 0xff ? 1 : max_id <= 0xffff ? 2 : 4;
  const size_t start = out->size();
  out->resize(start + 1 + width * n);
  char* p = &(*out)[start];
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
      for (size_t i = 0; i < n; ++i) {
        for (int b = 0; b < 4; ++b) p[4 * i + b] = static_cast<char>(ids[i] >> (8 * b));
      }
  }
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

absl::Status BlockCompressor::Compress(absl::string_view raw, std::string* out) {
  switch (compression_) {
    case Compression::kNone:
      out->assign(raw.data(), raw.size());
      return absl::OkStatus();
    case Compression::kLz4: {
      if (raw.size() > LZ4_MAX_INPUT_SIZE) {
        return absl::InvalidArgumentError("block too large for lz4");
      }
      out->resize(LZ4_compressBound(static_cast<int>(raw.size())));
      const int n = LZ4_compress_default(raw.data(), &(*out)[0], static_cast<int>(raw.size()),
                                         static_cast<int>(out->size()));
      if (n <= 0 && !raw.empty()) return absl::InternalError("lz4 compression failed");
      out->resize(n);
      return absl::OkStatus();
    }
    case Compression::kZstd: {
      if (contexts_->zstd == nullptr) {
        contexts_->zstd = ZSTD_createCCtx();
        if (contexts_->zstd == nullptr) return absl::ResourceExhaustedError("ZSTD_createCCtx failed");
      }
      out->resize(ZSTD_compressBound(raw.size()));
      const size_t n = ZSTD_compressCCtx(contexts_->zstd, &(*out)[0], out->size(), raw.data(),
                                         raw.size(), level_);
      if (ZSTD_isError(n)) {
        return absl::InternalError(absl::StrCat("zstd compression failed: ", ZSTD_getErrorName(n)));
      }
      out->resize(n);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError("unknown compression");
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
