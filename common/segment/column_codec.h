// Encodings of one block of column values, and block compression.
//
// A block holds up to `rows_per_block` values of one column. Values are first
// encoded (below), then the bytes are compressed with the file's codec. Every
// decoder is bounds-checked: it consumes exactly the bytes it is given, or
// returns false, whatever those bytes are.
#ifndef SLUICE_COMMON_SEGMENT_COLUMN_CODEC_H_
#define SLUICE_COMMON_SEGMENT_COLUMN_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/segment/byte_buffer.h"
#include "common/segment/exact_sum.h"

namespace sluice {
namespace segment {

enum class Compression : uint8_t { kNone = 0, kLz4 = 1, kZstd = 2 };
const char* CompressionName(Compression c);

enum class LongEncoding : uint8_t {
  kPlain = 0,        // 8 bytes little-endian each
  kDeltaVarint = 1,  // zigzag varint of the difference to the previous value (first: to 0)
  kVarint = 2,       // zigzag varint of each value
};

// Upper bound of the encoded size of one value (a reader's limit on the raw
// size of a block before it allocates).
inline constexpr size_t kMaxEncodedLong = 10;
inline constexpr size_t kMaxEncodedDouble = 8;
inline constexpr size_t kMaxEncodedId = 4;
inline constexpr size_t kMaxEncodedExactSum = 2 + 10 + 10 + 70 * 5;

// Each encoder appends to a std::string or, with the same bytes, to a
// ByteBuffer (not zeroed as it grows: the segment writer's scratch).
void EncodeLongs(LongEncoding encoding, const int64_t* values, size_t n, std::string* out);
void EncodeLongs(LongEncoding encoding, const int64_t* values, size_t n, ByteBuffer* out);
bool DecodeLongs(LongEncoding encoding, absl::string_view in, size_t n, int64_t* out);

void EncodeDoubles(const double* values, size_t n, std::string* out);
void EncodeDoubles(const double* values, size_t n, ByteBuffer* out);
bool DecodeDoubles(absl::string_view in, size_t n, double* out);

// Dictionary ids: one width byte (1, 2 or 4: the smallest that holds the
// largest id of the block), then the ids little-endian at that width.
void EncodeIds(const uint32_t* ids, size_t n, std::string* out);
void EncodeIds(const uint32_t* ids, size_t n, ByteBuffer* out);
// Also fails when an id exceeds `max_id`.
bool DecodeIds(absl::string_view in, size_t n, uint32_t max_id, uint32_t* out);

void EncodeExactSums(const ExactSum* sums, size_t n, std::string* out);
bool DecodeExactSums(absl::string_view in, size_t n, ExactSum* out);

// Compresses blocks with one codec; keeps its compression context between
// calls. Not thread-safe; move-only.
class BlockCompressor {
 public:
  // `level` is zstd's level (ignored by the other codecs).
  BlockCompressor(Compression compression, int level);
  ~BlockCompressor();
  BlockCompressor(BlockCompressor&&) noexcept;
  BlockCompressor& operator=(BlockCompressor&&) noexcept;

  // Replaces `*out` with the compressed form of `raw`.
  absl::Status Compress(absl::string_view raw, std::string* out);
  absl::Status Compress(absl::string_view raw, ByteBuffer* out);

 private:
  template <typename Out>
  absl::Status CompressInto(absl::string_view raw, Out* out);
  struct Contexts;
  Compression compression_;
  int level_;
  std::unique_ptr<Contexts> contexts_;
};

// Decompresses blocks; keeps its decompression context between calls. Not
// thread-safe; move-only.
class BlockDecompressor {
 public:
  BlockDecompressor();
  ~BlockDecompressor();
  BlockDecompressor(BlockDecompressor&&) noexcept;
  BlockDecompressor& operator=(BlockDecompressor&&) noexcept;

  // Replaces `*out` with the decompression of `stored`, which must be exactly
  // `raw_size` bytes; DATA_LOSS naming `what` otherwise.
  absl::Status Decompress(Compression compression, absl::string_view stored, size_t raw_size,
                          absl::string_view what, std::string* out);

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_COLUMN_CODEC_H_
