#include "common/segment/byte_buffer.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace segment {
namespace {

TEST(ByteBuffer, ExtendKeepsEarlierBytesAcrossGrowth) {
  ByteBuffer b;
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    char* p = b.Extend(3);
    for (int k = 0; k < 3; ++k) p[k] = static_cast<char>('a' + (i + k) % 26);
    expected.append(p, 3);
  }
  EXPECT_EQ(b.view(), expected);
  EXPECT_GE(b.capacity(), b.size());
}

TEST(ByteBuffer, TruncateGivesBackTheUnusedTail) {
  ByteBuffer b;
  b.Append("header");
  char* p = b.Extend(10);
  p[0] = 'x';
  b.Truncate(7);
  EXPECT_EQ(b.view(), "headerx");
  b.Append("yz");
  EXPECT_EQ(b.view(), "headerxyz");
  b.clear();
  EXPECT_TRUE(b.empty());
  b.Append("again");
  EXPECT_EQ(b.view(), "again");
}

TEST(ByteBuffer, ReleaseFreesAndStaysUsable) {
  ByteBuffer b;
  b.Reserve(1 << 20);
  EXPECT_GE(b.capacity(), size_t{1} << 20);
  b.Append("abc");
  b.Release();
  EXPECT_EQ(b.capacity(), 0u);
  EXPECT_TRUE(b.empty());
  b.Append("def");
  EXPECT_EQ(b.view(), "def");
}

TEST(ByteBuffer, MovesItsBytes) {
  ByteBuffer a;
  a.Append("moved");
  ByteBuffer b = std::move(a);
  EXPECT_EQ(b.view(), "moved");
}

}  // namespace
}  // namespace segment
}  // namespace sluice
