#include "common/segment/string_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

namespace sluice {
namespace segment {
namespace {

TEST(SortStringIndexes, MatchesByteOrder) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<std::string> storage;
    const int n = 1 + rng() % 3000;
    for (int i = 0; i < n; ++i) {
      std::string s;
      const int len = rng() % (trial % 3 == 0 ? 3 : 30);
      for (int k = 0; k < len; ++k) {
        // Few distinct bytes (long shared prefixes), high bytes, NULs.
        const char alphabet[] = {'a', 'b', '\0', '\xff', '\xc3', 'Z'};
        s.push_back(alphabet[rng() % (trial % 2 == 0 ? 2 : 6)]);
      }
      if (trial % 5 == 0) s = "History_List_" + s;
      storage.push_back(s);
    }
    std::vector<absl::string_view> values(storage.begin(), storage.end());
    std::vector<uint32_t> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    SortStringIndexes(values, &order);
    for (size_t i = 1; i < order.size(); ++i) {
      ASSERT_FALSE(values[order[i]] < values[order[i - 1]]) << trial << " at " << i;
    }
    std::vector<uint32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i);  // a permutation
  }
}

// An empty value whose data() is null (a default string_view, as the index
// holds for an empty dimension value): sorted first, and never handed to
// memcpy (the sanitized build checks that).
TEST(SortStringIndexes, EmptyValuesWithoutData) {
  const std::vector<absl::string_view> values = {"b", absl::string_view(), "a",
                                                 absl::string_view()};
  std::vector<uint32_t> order = {0, 1, 2, 3};
  SortStringIndexes(values, &order);
  ASSERT_EQ(order.size(), 4u);
  EXPECT_TRUE(values[order[0]].empty());
  EXPECT_TRUE(values[order[1]].empty());
  EXPECT_EQ(values[order[2]], "a");
  EXPECT_EQ(values[order[3]], "b");
}

// Values that end inside, at or just past an 8- or 16-byte step, padded with the
// byte the sort pads with (0), or differing only after it.
TEST(SortStringIndexes, EndsAndZerosAroundEightByteSteps) {
  std::vector<std::string> storage;
  for (const std::string& base : {std::string(""), std::string("abcdefg"), std::string("abcdefgh"),
                                  std::string("abcdefghijklmno"), std::string("abcdefghijklmnop"),
                                  std::string("abcdefghijklmnopqrstuvwxyz012345")}) {
    for (const std::string& tail : {std::string(""), std::string(1, '\0'), std::string(2, '\0'),
                                    std::string("\0a"), std::string("a"), std::string("\xff"),
                                    std::string(9, '\0'), std::string("abcdefgh\0")}) {
      storage.push_back(base + tail);
    }
  }
  std::sort(storage.begin(), storage.end());
  storage.erase(std::unique(storage.begin(), storage.end()), storage.end());
  std::reverse(storage.begin(), storage.end());
  std::vector<absl::string_view> values(storage.begin(), storage.end());
  std::vector<uint32_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  SortStringIndexes(values, &order);
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i], values.size() - 1 - i) << i;  // the reverse order undone
  }
}

}  // namespace
}  // namespace segment
}  // namespace sluice
