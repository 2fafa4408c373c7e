#include "common/segment/roaring_writer.h"

#include <gtest/gtest.h>
#include <roaring/roaring.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/segment/roaring_check.h"

namespace sluice {
namespace segment {
namespace {

std::vector<uint32_t> Decode(const std::string& bytes) {
  roaring_bitmap_t* b = roaring_bitmap_portable_deserialize_safe(bytes.data(), bytes.size());
  EXPECT_NE(b, nullptr);
  if (b == nullptr) return {};
  EXPECT_EQ(roaring_bitmap_portable_deserialize_size(bytes.data(), bytes.size()), bytes.size());
  std::vector<uint32_t> out(roaring_bitmap_get_cardinality(b));
  roaring_bitmap_to_uint32_array(b, out.data());
  roaring_bitmap_free(b);
  return out;
}

TEST(AppendPortableRoaring, CRoaringReadsBackEveryContainerKind) {
  std::vector<std::vector<uint32_t>> cases = {{}, {0}, {7, 65535, 65536, 1u << 31}};
  std::vector<uint32_t> dense, runs, mixed, many_keys;
  for (uint32_t i = 0; i < 30000; i += 3) dense.push_back(i);          // bitset
  for (uint32_t i = 100; i < 300000; ++i) runs.push_back(i);          // runs over 5 keys
  std::mt19937 rng(3);
  for (uint32_t i = 0; i < 1000000; ++i) {
    if (rng() % 7 == 0 || (i > 500000 && i < 600000)) mixed.push_back(i);
  }
  for (uint32_t k = 0; k < 40; ++k) many_keys.push_back(k << 16 | (k * 37));
  cases.insert(cases.end(), {dense, runs, mixed, many_keys});
  for (const auto& values : cases) {
    std::string bytes = "prefix";
    AppendPortableRoaring(values.data(), values.size(), &bytes);
    const std::string bitmap = bytes.substr(6);
    EXPECT_EQ(Decode(bitmap), values) << values.size();
    std::string why;
    EXPECT_TRUE(CheckPortableRoaring(bitmap, uint64_t{1} << 32, &why)) << why;
  }
}

// The ByteBuffer form writes the same bytes, whatever stale bytes its reused
// memory holds (the general path sets bits in place: they must start at 0).
TEST(AppendPortableRoaring, ByteBufferGetsTheSameBytesOverStaleMemory) {
  std::vector<std::vector<uint32_t>> cases = {{}, {0}, {5, 9}, {7, 65535, 65536, 1u << 31}};
  std::vector<uint32_t> dense, runs, mixed;
  for (uint32_t i = 0; i < 30000; i += 3) dense.push_back(i);
  for (uint32_t i = 100; i < 300000; ++i) runs.push_back(i);
  for (uint32_t i = 0; i < 200000; i += (i % 5) + 1) mixed.push_back(i);
  cases.insert(cases.end(), {dense, runs, mixed});
  for (const auto& values : cases) {
    std::string expected = "prefix";
    AppendPortableRoaring(values.data(), values.size(), &expected);
    ByteBuffer buffer;
    const size_t junk = 2 * expected.size() + 64;
    std::memset(buffer.Extend(junk), 0xff, junk);
    buffer.Truncate(0);
    buffer.Append("prefix");
    AppendPortableRoaring(values.data(), values.size(), &buffer);
    EXPECT_EQ(buffer.view(), expected) << values.size();
  }
}

TEST(AppendPortableRoaring, NoLargerThanCRoaringAfterRunOptimize) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<uint32_t> values;
    const uint32_t density = 1 + rng() % 50;
    for (uint32_t i = 0; i < 200000; ++i) {
      if (rng() % density == 0) values.push_back(i);
    }
    std::string ours;
    AppendPortableRoaring(values.data(), values.size(), &ours);
    roaring_bitmap_t* b = roaring_bitmap_of_ptr(values.size(), values.data());
    roaring_bitmap_run_optimize(b);
    EXPECT_LE(ours.size(), roaring_bitmap_portable_size_in_bytes(b)) << trial;
    roaring_bitmap_free(b);
  }
}

// The bitmaps of one to three rows (most of a segment's: one per page or
// user) take a shortcut; their bytes must be CRoaring's own serialization
// of the same set, as every other bitmap's are.
TEST(AppendPortableRoaring, SmallBitmapsAreCRoaringsBytes) {
  const std::vector<std::vector<uint32_t>> cases = {
      {0},          {5},          {65535},      {65536},          {1u << 31},
      {0, 1},       {3, 9},       {7, 8, 9},    {1, 5, 65535},    {70000, 70001, 131071},
      {65535, 65536}, {1, 2, 65536}, {4294967295u}, {4294967293u, 4294967294u, 4294967295u}};
  for (const auto& values : cases) {
    std::string ours = "x";
    AppendPortableRoaring(values.data(), values.size(), &ours);
    roaring_bitmap_t* b = roaring_bitmap_of_ptr(values.size(), values.data());
    std::string theirs(roaring_bitmap_portable_size_in_bytes(b), '\0');
    roaring_bitmap_portable_serialize(b, theirs.data());
    roaring_bitmap_free(b);
    EXPECT_EQ(ours.substr(1), theirs) << values.size() << " values from " << values[0];
  }
}

}  // namespace
}  // namespace segment
}  // namespace sluice
