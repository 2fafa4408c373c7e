#include "common/offsets.h"

#include <gtest/gtest.h>

#include "common/spec.h"

namespace sluice {
namespace {

TEST(OffsetsTest, EncodeDecodeRoundTrip) {
  const OffsetMap offsets = {{0, 123}, {7, 0}, {12, kEndOfPartition}};
  const std::string text = EncodeOffsets(offsets);
  EXPECT_EQ(text, "{\"0\":123,\"7\":0,\"12\":9223372036854775807}");
  auto decoded = DecodeOffsets(text);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, offsets);
  EXPECT_EQ(*DecodeOffsets("{}"), OffsetMap());
  EXPECT_EQ(*DecodeOffsets(" { \"1\" : 5 , \"2\":6 } "), (OffsetMap{{1, 5}, {2, 6}}));
}

TEST(OffsetsTest, DecodeRejectsMalformedText) {
  for (const char* bad : {"", "{", "{\"a\":1}", "{\"1\":}", "{\"1\":2,}", "{\"1\":2}x",
                          "{\"1\":2,\"1\":3}", "[1]", "{1:2}"}) {
    auto decoded = DecodeOffsets(bad);
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(OffsetsTest, MaxRestrictAndFormat) {
  const OffsetMap a = {{0, 10}, {1, 20}};
  const OffsetMap b = {{1, 15}, {2, 5}};
  EXPECT_EQ(MaxOffsets(a, b), (OffsetMap{{0, 10}, {1, 20}, {2, 5}}));
  EXPECT_EQ(Restrict(b, a), (OffsetMap{{1, 15}}));
  EXPECT_EQ(FormatOffsets({{0, 1}, {3, kEndOfPartition}}), "{0:1, 3:END}");
  EXPECT_TRUE(ContainsEndOfPartition({{3, kEndOfPartition}}));
  EXPECT_FALSE(ContainsEndOfPartition(a));
}

}  // namespace
}  // namespace sluice
