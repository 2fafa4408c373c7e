// The limits of segment format v1: one set, used by the row parser (a record
// beyond a limit is a VALUE_TOO_LARGE parse error), the writer (which refuses
// to write a file beyond them) and the reader (which refuses a file beyond
// them as damaged). Because all three read the same constants, a row that
// parses always ends up in a file the reader accepts. docs/segment-format.md
// ("Limits") explains where each number comes from.
#ifndef SLUICE_COMMON_SEGMENT_FORMAT_LIMITS_H_
#define SLUICE_COMMON_SEGMENT_FORMAT_LIMITS_H_

#include <cstddef>
#include <cstdint>

#include "common/segment/column_codec.h"

namespace sluice {
namespace segment {

// --- Per row (enforced at ingest by the row parser) -----------------------

// Bytes of one dimension value: a string after unescaping, or the raw JSON
// text of an array or object.
inline constexpr size_t kMaxValueBytes = size_t{1} << 20;  // 1 MiB
// Elements of one array value (the values of a multi-value row).
inline constexpr size_t kMaxValuesPerRow = 1024;
// Bytes of all dimension values of one row together.
inline constexpr size_t kMaxRowValueBytes = size_t{8} << 20;  // 8 MiB

// --- Per segment, at ingest (enforced by the parser and the index) --------

// Discovered dimensions (a schemaless datasource) of one segment, and so of
// one row: well under kMaxDimensions, so that merging a segment's spills can
// never pass it. A record that would add one more is a VALUE_TOO_LARGE
// parse error.
inline constexpr size_t kMaxDiscoveredDimensions = size_t{1} << 13;  // 8192

// --- Per file (enforced by the writer, checked by the reader) -------------

// Dimension columns (also the most dimensions one row may carry).
inline constexpr size_t kMaxDimensions = size_t{1} << 16;
inline constexpr size_t kMaxMetrics = size_t{1} << 12;
inline constexpr uint32_t kMaxRowsPerBlock = uint32_t{1} << 20;
// Rows of one file: bitmaps hold 32-bit row numbers.
inline constexpr uint64_t kMaxRows = (uint64_t{1} << 32) - 1;
// Bytes of one dimension's dictionary before compression (count, then each
// value with its length).
inline constexpr uint64_t kMaxDictionaryBytes = (uint64_t{1} << 31) - 1;

// The largest number of bytes `stored_size` compressed bytes can decompress
// to with `compression`, from the codecs' formats: none copies; an LZ4
// sequence of n bytes yields at most 255 n (a match length byte adds at most
// 255); a zstd block of at least 4 bytes (an RLE block: 3-byte header, one
// byte) yields at most 128 KiB, i.e. 32768 bytes per stored byte. The reader
// refuses a block or dictionary claiming more (a decompression bomb); no
// input to the writer can reach it.
inline constexpr uint64_t kMaxLz4Expansion = 255;
inline constexpr uint64_t kMaxZstdExpansion = 32768;
inline constexpr uint64_t MaxDecompressedSize(Compression compression, uint64_t stored_size) {
  switch (compression) {
    case Compression::kNone: return stored_size;
    case Compression::kLz4: return stored_size * kMaxLz4Expansion;
    case Compression::kZstd: return stored_size * kMaxZstdExpansion;
  }
  return 0;
}

// The largest raw dictionary `cardinality` values within kMaxValueBytes can
// make (count, then per value a length of at most 3 varint bytes and the
// bytes), capped by kMaxDictionaryBytes.
inline constexpr uint64_t MaxDictionaryBytes(uint64_t cardinality) {
  constexpr uint64_t kPerValue = 3 + kMaxValueBytes;
  if (cardinality > kMaxDictionaryBytes / kPerValue) return kMaxDictionaryBytes;
  const uint64_t bound = 10 + cardinality * kPerValue;
  return bound < kMaxDictionaryBytes ? bound : kMaxDictionaryBytes;
}

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_FORMAT_LIMITS_H_
