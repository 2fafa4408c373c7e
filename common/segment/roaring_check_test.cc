#include "common/segment/roaring_check.h"

#include <gtest/gtest.h>
#include <roaring/roaring.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sluice {
namespace segment {
namespace {

std::string Serialize(const std::vector<uint32_t>& values, bool run_optimize, bool add_range = false) {
  roaring_bitmap_t* b = roaring_bitmap_create();
  if (add_range && !values.empty()) {
    roaring_bitmap_add_range(b, values.front(), values.back() + 1);
  } else {
    for (uint32_t v : values) roaring_bitmap_add(b, v);
  }
  if (run_optimize) roaring_bitmap_run_optimize(b);
  std::string bytes(roaring_bitmap_portable_size_in_bytes(b), '\0');
  roaring_bitmap_portable_serialize(b, &bytes[0]);
  roaring_bitmap_free(b);
  return bytes;
}

TEST(CheckPortableRoaring, AcceptsWhatCRoaringWritesInEveryContainerKind) {
  std::vector<std::vector<uint32_t>> cases = {{}, {0}, {5, 9, 70000}};
  std::vector<uint32_t> dense, range;
  for (uint32_t i = 0; i < 20000; i += 2) dense.push_back(i);  // a bitset container
  for (uint32_t i = 100; i < 200000; ++i) range.push_back(i);  // runs over several keys
  cases.push_back(dense);
  cases.push_back(range);
  for (const auto& values : cases) {
    for (bool optimize : {false, true}) {
      const std::string bytes = Serialize(values, optimize, &values == &cases.back());
      std::string why;
      EXPECT_TRUE(CheckPortableRoaring(bytes, 200000, &why)) << values.size() << ": " << why;
    }
  }
}

TEST(CheckPortableRoaring, DecodesTheValuesOfEveryContainerKind) {
  std::vector<std::vector<uint32_t>> cases = {{}, {0}, {5, 9, 70000}, {65535, 65536, 131071}};
  std::vector<uint32_t> dense, range, mixed;
  for (uint32_t i = 0; i < 20000; i += 2) dense.push_back(i);  // a bitset container
  for (uint32_t i = 100; i < 200000; ++i) range.push_back(i);  // runs over several keys
  for (uint32_t i = 0; i < 300000; i += (i % 7) + 1) mixed.push_back(i);
  cases.push_back(dense);
  cases.push_back(mixed);
  cases.push_back(range);
  for (const auto& values : cases) {
    for (bool optimize : {false, true}) {
      const std::string bytes = Serialize(values, optimize, &values == &cases.back());
      std::string why;
      std::vector<uint32_t> decoded = {7};  // appended to, not replaced
      ASSERT_TRUE(CheckPortableRoaring(bytes, 300000, &why, &decoded)) << why;
      ASSERT_EQ(decoded.size(), values.size() + 1);
      EXPECT_EQ(decoded[0], 7u);
      EXPECT_TRUE(std::equal(values.begin(), values.end(), decoded.begin() + 1))
          << values.size() << " values, optimize " << optimize;
    }
  }
}

TEST(CheckPortableRoaring, RejectsValuesBeyondTheLimit) {
  std::string why;
  EXPECT_FALSE(CheckPortableRoaring(Serialize({5, 100}, false), 100, &why));
  EXPECT_NE(why.find("beyond"), std::string::npos);
  EXPECT_TRUE(CheckPortableRoaring(Serialize({5, 99}, false), 100, &why));
}

TEST(CheckPortableRoaring, EveryDamageIsCaughtOrHarmless) {
  std::vector<uint32_t> values;
  for (uint32_t i = 0; i < 70000; i += 3) values.push_back(i);
  values.push_back(100000);
  for (bool optimize : {false, true}) {
    const std::string bytes = Serialize(values, optimize);
    std::string why;
    ASSERT_TRUE(CheckPortableRoaring(bytes, 200000, &why)) << why;
    for (size_t cut = 0; cut < bytes.size(); cut += 13) {
      EXPECT_FALSE(CheckPortableRoaring(bytes.substr(0, cut), 200000, &why)) << cut;
    }
    EXPECT_FALSE(CheckPortableRoaring(bytes + "x", 200000, &why));
    // A damaged bitmap that still passes must deserialize safely and hold
    // only values below the limit.
    for (size_t i = 0; i < bytes.size(); i += 5) {
      std::string damaged = bytes;
      damaged[i] ^= 0x21;
      if (!CheckPortableRoaring(damaged, 200000, &why)) continue;
      roaring_bitmap_t* b = roaring_bitmap_portable_deserialize_safe(damaged.data(), damaged.size());
      ASSERT_NE(b, nullptr);
      EXPECT_LT(roaring_bitmap_maximum(b), 200000u);
      roaring_bitmap_free(b);
    }
  }
  std::string why;
  EXPECT_FALSE(CheckPortableRoaring("", 10, &why));
  EXPECT_FALSE(CheckPortableRoaring(std::string("\x3a\x30\x00\x00\x01\x00\x00\x00", 8), 10, &why));
}

}  // namespace
}  // namespace segment
}  // namespace sluice
