#include "common/segment/value_dictionary.h"

#include <deque>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "absl/container/flat_hash_map.h"

namespace sluice {
namespace segment {
namespace {

// Keeps the values the dictionary views, as the index's arena does.
class Dictionary {
 public:
  uint32_t Intern(const std::string& value) {
    const uint64_t hash = ValueDictionary::Hash(value);
    if (const uint32_t id = dict_.Find(value, hash); id != 0) return id;
    stored_.push_back(value);
    return dict_.Insert(stored_.back(), hash);
  }
  uint32_t Find(const std::string& value) const {
    return dict_.Find(value, ValueDictionary::Hash(value));
  }
  const ValueDictionary& dict() const { return dict_; }

 private:
  std::deque<std::string> stored_;
  ValueDictionary dict_;
};

TEST(ValueDictionaryTest, IdsAreDenseInFirstSeenOrder) {
  Dictionary d;
  EXPECT_EQ(d.Find("a"), 0u);
  EXPECT_EQ(d.Intern("b"), 1u);
  EXPECT_EQ(d.Intern("a"), 2u);
  EXPECT_EQ(d.Intern("b"), 1u);
  EXPECT_EQ(d.Intern(""), 3u);
  EXPECT_EQ(d.Find(""), 3u);
  EXPECT_EQ(d.Find("c"), 0u);
  ASSERT_EQ(d.dict().size(), 3u);
  EXPECT_EQ(d.dict().values()[0], "b");
  EXPECT_EQ(d.dict().values()[1], "a");
  EXPECT_EQ(d.dict().values()[2], "");
}

// Values around the inline head's length and the length byte's limit, and
// values that share their head and differ only past it.
TEST(ValueDictionaryTest, LongValuesCompareBeyondTheSlot) {
  const size_t k = ValueDictionary::kInlineBytes;
  std::vector<std::string> values;
  for (size_t n : {k - 1, k, k + 1, size_t{254}, size_t{255}, size_t{256}, size_t{300}}) {
    values.push_back(std::string(n, 'x'));
    std::string tail = std::string(n, 'x');
    tail.back() = 'y';
    values.push_back(tail);
  }
  // Same head, same length byte (255 and more), different lengths.
  values.push_back(std::string(255, 'x') + "z");
  values.push_back(std::string(1000, 'x'));
  values.push_back(std::string("a\0b", 3));
  values.push_back(std::string("a\0c", 3));
  Dictionary d;
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(d.Intern(values[i]), i + 1) << values[i].size();
  }
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(d.Find(values[i]), i + 1) << values[i].size();
  }
  EXPECT_EQ(d.Find(std::string(k + 1, 'x') + "x"), 0u);
  EXPECT_EQ(d.Find(std::string(999, 'x')), 0u);
  EXPECT_EQ(d.Find(std::string("a\0d", 3)), 0u);
}

// The head is compared by word loads: values of every length up to past the
// head, each differing from the others of its length in one byte only, on
// one hash and one length byte, are told apart by the head compare alone.
TEST(ValueDictionaryTest, HeadsDifferingInAnyOneByte) {
  std::deque<std::string> stored;
  ValueDictionary dict;
  for (size_t n = 1; n <= ValueDictionary::kInlineBytes + 2; ++n) {
    const size_t first = dict.size();
    stored.push_back(std::string(n, 'a'));
    for (size_t i = 0; i < n; ++i) {
      std::string v(n, 'a');
      v[i] = 'b';
      stored.push_back(v);
    }
    for (size_t k = first; k < stored.size(); ++k) {
      ASSERT_EQ(dict.Find(stored[k], 7), 0u) << n << " " << stored[k];
      ASSERT_EQ(dict.Insert(stored[k], 7), static_cast<uint32_t>(k + 1));
    }
  }
  for (size_t k = 0; k < stored.size(); ++k) {
    EXPECT_EQ(dict.Find(stored[k], 7), static_cast<uint32_t>(k + 1)) << stored[k];
  }
  EXPECT_EQ(dict.Find("c", 7), 0u);
  EXPECT_EQ(dict.Find(std::string(ValueDictionary::kInlineBytes, 'c'), 7), 0u);
}

// Copy (the arena's) copies exactly n bytes at every length around its word
// sizes, and nothing past them.
TEST(ValueDictionaryTest, CopyWritesExactlyTheValue) {
  for (size_t n = 0; n <= 40; ++n) {
    std::string from(n, ' ');
    for (size_t i = 0; i < n; ++i) from[i] = static_cast<char>('a' + i);
    std::string to(n + 8, '#');
    ValueDictionary::Copy(to.data(), from.data(), n);
    EXPECT_EQ(to.substr(0, n), from) << n;
    EXPECT_EQ(to.substr(n), std::string(8, '#')) << n;
  }
}

// Every value on one hash, through growth: found by probing past the
// others, whatever the kept hash and the length say.
TEST(ValueDictionaryTest, EqualHashesProbeOn) {
  std::deque<std::string> stored;
  ValueDictionary dict;
  constexpr int kValues = 100;
  for (int i = 0; i < kValues; ++i) {
    stored.push_back(std::string(i * 3, 'v') + std::to_string(i));
    ASSERT_EQ(dict.Find(stored.back(), 7), 0u);
    ASSERT_EQ(dict.Insert(stored.back(), 7), static_cast<uint32_t>(i + 1));
  }
  EXPECT_EQ(dict.capacity_bytes(), static_cast<int64_t>(256 * 32 + dict.values().capacity() * 16));
  for (int i = 0; i < kValues; ++i) {
    EXPECT_EQ(dict.Find(stored[i], 7), static_cast<uint32_t>(i + 1));
  }
  EXPECT_EQ(dict.Find("absent", 7), 0u);
}

// Against absl::flat_hash_map over many growths, with a skewed mix of short
// and long values like the benchmark's pages and users.
TEST(ValueDictionaryTest, AgreesWithAHashMapThroughGrowth) {
  std::mt19937_64 rng(11);
  absl::flat_hash_map<std::string, uint32_t> oracle;
  Dictionary d;
  for (int i = 0; i < 300000; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const uint64_t n = static_cast<uint64_t>(u * u * 150000);
    std::string value = std::to_string(n);
    if (n % 3 == 0) value = "Page_title_that_is_longer_than_the_slot_" + value;
    const auto [it, inserted] = oracle.emplace(value, static_cast<uint32_t>(oracle.size() + 1));
    ASSERT_EQ(d.Intern(value), it->second) << value;
  }
  ASSERT_EQ(d.dict().size(), oracle.size());
  for (const auto& [value, id] : oracle) ASSERT_EQ(d.Find(value), id);
  // At most 3/4 full: 32-byte slots for at least 4/3 of the values, plus the
  // id -> value list.
  EXPECT_GE(d.dict().capacity_bytes(),
            static_cast<int64_t>(oracle.size() * 32 * 4 / 3 + oracle.size() * 16));
  EXPECT_LE(d.dict().capacity_bytes(),
            static_cast<int64_t>(oracle.size() * 32 * 8 / 3 + oracle.size() * 32));
}

// The arena's first copy of an empty value, and a default view, have a
// null data pointer (UBSan checks memcpy and memcmp are not given one).
TEST(ValueDictionaryTest, EmptyValueWithNullData) {
  ValueDictionary dict;
  const absl::string_view empty;
  ASSERT_EQ(empty.data(), nullptr);
  EXPECT_EQ(dict.Find(empty, ValueDictionary::Hash("")), 0u);
  EXPECT_EQ(dict.Insert(empty, ValueDictionary::Hash("")), 1u);
  EXPECT_EQ(dict.Find(empty, ValueDictionary::Hash("")), 1u);
  EXPECT_EQ(dict.Find("", ValueDictionary::Hash("")), 1u);
}

// Moved, a dictionary keeps its values in the new place and leaves an empty
// one behind that takes values again.
TEST(ValueDictionaryTest, MovedKeepsItsValues) {
  std::deque<std::string> stored = {"a", "b", "c"};
  ValueDictionary from;
  for (const std::string& v : stored) from.Insert(v, ValueDictionary::Hash(v));
  ValueDictionary to(std::move(from));
  EXPECT_EQ(to.Find("b", ValueDictionary::Hash("b")), 2u);
  EXPECT_EQ(from.size(), 0u);  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(from.capacity_bytes(), 0);
  EXPECT_EQ(from.Find("b", ValueDictionary::Hash("b")), 0u);
  EXPECT_EQ(from.Insert(stored[0], ValueDictionary::Hash("a")), 1u);
  EXPECT_EQ(from.Find("a", ValueDictionary::Hash("a")), 1u);
  ValueDictionary assigned;
  assigned = std::move(to);
  EXPECT_EQ(assigned.Find("c", ValueDictionary::Hash("c")), 3u);
  EXPECT_EQ(to.Find("c", ValueDictionary::Hash("c")), 0u);  // NOLINT(bugprone-use-after-move)
}

TEST(ValueDictionaryTest, EmptyDictionaryHoldsNothing) {
  ValueDictionary dict;
  EXPECT_EQ(dict.size(), 0u);
  EXPECT_EQ(dict.capacity_bytes(), 0);
  EXPECT_EQ(dict.Find("x", ValueDictionary::Hash("x")), 0u);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
