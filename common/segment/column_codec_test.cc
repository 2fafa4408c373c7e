#include "common/segment/column_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace sluice {
namespace segment {
namespace {

std::vector<int64_t> Longs() {
  std::vector<int64_t> v = {0, 1, -1, std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max(), 42, 1796004944123};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 500; ++i) v.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
  return v;
}

TEST(ColumnCodec, LongsRoundTripInEveryEncoding) {
  const std::vector<int64_t> values = Longs();
  for (LongEncoding e : {LongEncoding::kPlain, LongEncoding::kDeltaVarint, LongEncoding::kVarint}) {
    std::string bytes;
    EncodeLongs(e, values.data(), values.size(), &bytes);
    EXPECT_LE(bytes.size(), values.size() * kMaxEncodedLong);
    std::vector<int64_t> back(values.size());
    ASSERT_TRUE(DecodeLongs(e, bytes, values.size(), back.data()));
    EXPECT_EQ(back, values);
    // Too few bytes, or bytes left over, are refused.
    EXPECT_FALSE(DecodeLongs(e, absl::string_view(bytes).substr(0, bytes.size() - 1),
                             values.size(), back.data()));
    EXPECT_FALSE(DecodeLongs(e, bytes, values.size() - 1, back.data()));
  }
}

// The ByteBuffer forms (the segment writer's) append the same bytes as the
// std::string forms, after what the buffer holds.
TEST(ColumnCodec, ByteBufferFormsWriteTheSameBytes) {
  const std::vector<int64_t> longs = Longs();
  std::vector<double> doubles;
  for (int64_t v : longs) doubles.push_back(static_cast<double>(v) / 3);
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < 300; ++i) ids.push_back(i * 997 % 70000);
  std::string expected = "head";
  ByteBuffer buffer;
  buffer.Append("head");
  for (LongEncoding e : {LongEncoding::kPlain, LongEncoding::kDeltaVarint, LongEncoding::kVarint}) {
    EncodeLongs(e, longs.data(), longs.size(), &expected);
    EncodeLongs(e, longs.data(), longs.size(), &buffer);
  }
  EncodeDoubles(doubles.data(), doubles.size(), &expected);
  EncodeDoubles(doubles.data(), doubles.size(), &buffer);
  for (size_t n : {size_t{0}, size_t{10}, size_t{200}, ids.size()}) {
    EncodeIds(ids.data(), n, &expected);
    EncodeIds(ids.data(), n, &buffer);
  }
  EXPECT_EQ(buffer.view(), expected);
}

TEST(ColumnCodec, CompressorWritesTheSameBytesIntoAByteBuffer) {
  std::string raw;
  for (int i = 0; i < 5000; ++i) raw += std::to_string(i % 97);
  for (Compression c : {Compression::kNone, Compression::kLz4, Compression::kZstd}) {
    BlockCompressor a(c, 3), b(c, 3);
    std::string expected;
    ASSERT_TRUE(a.Compress(raw, &expected).ok());
    ByteBuffer buffer;
    buffer.Append("stale bytes the compressor replaces");
    ASSERT_TRUE(b.Compress(raw, &buffer).ok());
    EXPECT_EQ(buffer.view(), expected) << CompressionName(c);
  }
}

TEST(ColumnCodec, DeltaVarintIsCompactForSortedTimes) {
  std::vector<int64_t> times;
  for (int i = 0; i < 1000; ++i) times.push_back(1796004944123 + i * 37);
  std::string bytes;
  EncodeLongs(LongEncoding::kDeltaVarint, times.data(), times.size(), &bytes);
  EXPECT_LT(bytes.size(), 1100u);
}

TEST(ColumnCodec, DoublesRoundTripBitExactly) {
  const std::vector<double> values = {0.0, -0.0, 1.5, std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::denorm_min()};
  std::string bytes;
  EncodeDoubles(values.data(), values.size(), &bytes);
  std::vector<double> back(values.size());
  ASSERT_TRUE(DecodeDoubles(bytes, values.size(), back.data()));
  EXPECT_EQ(std::memcmp(back.data(), values.data(), 8 * values.size()), 0);
  EXPECT_FALSE(DecodeDoubles(bytes, values.size() + 1, back.data()));
}

TEST(ColumnCodec, IdsPickTheNarrowestWidthAndCheckTheLimit) {
  for (uint32_t max : {0u, 200u, 255u, 256u, 65535u, 65536u, 4000000000u}) {
    std::vector<uint32_t> ids = {0, max, max / 2, 1 % (max + 1)};
    std::string bytes;
    EncodeIds(ids.data(), ids.size(), &bytes);
    const size_t width = max <= 255 ? 1 : max <= 65535 ? 2 : 4;
    EXPECT_EQ(bytes.size(), 1 + width * ids.size()) << max;
    std::vector<uint32_t> back(ids.size());
    ASSERT_TRUE(DecodeIds(bytes, ids.size(), max, back.data())) << max;
    EXPECT_EQ(back, ids);
    if (max > 0) {
      EXPECT_FALSE(DecodeIds(bytes, ids.size(), max - 1, back.data())) << max;
    }
  }
  uint32_t out[2];
  EXPECT_FALSE(DecodeIds("", 0, 10, out));
  EXPECT_FALSE(DecodeIds(std::string("\x03\x01\x02\x03\x04\x05\x06", 7), 2, 1000, out));
}

TEST(ColumnCodec, ExactSumsRoundTrip) {
  std::vector<ExactSum> sums(3);
  sums[0].Add(1e300);
  sums[0].Add(-1e-300);
  sums[2].Add(-0.0);
  std::string bytes;
  EncodeExactSums(sums.data(), sums.size(), &bytes);
  std::vector<ExactSum> back(3);
  ASSERT_TRUE(DecodeExactSums(bytes, 3, back.data()));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(back[i] == sums[i]) << i;
  EXPECT_FALSE(DecodeExactSums(bytes, 2, back.data()));
  EXPECT_FALSE(DecodeExactSums(bytes, 4, back.data()));
}

TEST(ColumnCodec, CompressionRoundTripsAndRejectsDamage) {
  std::string raw;
  for (int i = 0; i < 5000; ++i) raw += "value-" + std::to_string(i % 97);
  for (Compression c : {Compression::kNone, Compression::kLz4, Compression::kZstd}) {
    BlockCompressor compressor(c, 1);
    BlockDecompressor decompressor;
    for (const std::string& input : {std::string(), raw}) {
      std::string stored, back;
      ASSERT_TRUE(compressor.Compress(input, &stored).ok());
      ASSERT_TRUE(decompressor.Decompress(c, stored, input.size(), "test", &back).ok())
          << CompressionName(c);
      EXPECT_EQ(back, input);
      // Wrong declared sizes are refused.
      EXPECT_FALSE(decompressor.Decompress(c, stored, input.size() + 1, "test", &back).ok());
      if (!input.empty()) {
        EXPECT_FALSE(decompressor.Decompress(c, stored, input.size() - 1, "test", &back).ok());
      }
    }
    std::string stored;
    ASSERT_TRUE(compressor.Compress(raw, &stored).ok());
    // Damaged or truncated compressed bytes never crash; they either fail or
    // produce exactly raw_size bytes.
    for (size_t i = 0; i < stored.size(); i += 7) {
      std::string damaged = stored;
      damaged[i] ^= 0x5a;
      std::string back;
      const absl::Status s = decompressor.Decompress(c, damaged, raw.size(), "test", &back);
      if (s.ok()) {
        EXPECT_EQ(back.size(), raw.size());
      } else {
        EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
        EXPECT_NE(s.message().find("test"), absl::string_view::npos);
      }
      std::string truncated = stored.substr(0, i);
      (void)decompressor.Decompress(c, truncated, raw.size(), "test", &back);
    }
  }
}

}  // namespace
}  // namespace segment
}  // namespace sluice
