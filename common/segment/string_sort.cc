#include "common/segment/string_sort.h"

#include <algorithm>
#include <cstring>

namespace sluice {
namespace segment {
namespace {

// A value's next 16 bytes from `depth` as two big-endian numbers (missing
// bytes 0), so that comparing numbers compares those bytes in order, and how
// many bytes were left from `depth`, up to 17 ("more than the key holds"): a
// value that ends inside the key sorts before a longer one with the same
// bytes (padding with 0 alone would tie "a" and "a\0").
struct Keyed {
  uint64_t key;
  uint64_t key2;  // the 8 bytes after `key`'s
  uint32_t left;
  uint32_t index;
};

constexpr size_t kKeyBytes = 16;

inline void Load(absl::string_view s, size_t depth, Keyed* k) {
  const size_t left = s.size() > depth ? s.size() - depth : 0;
  unsigned char bytes[kKeyBytes] = {};
  // An empty value may have a null data(): memcpy must not see it.
  if (left > 0) std::memcpy(bytes, s.data() + depth, std::min<size_t>(left, kKeyBytes));
  uint64_t key, key2;
  std::memcpy(&key, bytes, sizeof(key));
  std::memcpy(&key2, bytes + 8, sizeof(key2));
  k->key = __builtin_bswap64(key);
  k->key2 = __builtin_bswap64(key2);
  k->left = static_cast<uint32_t>(std::min<size_t>(left, kKeyBytes + 1));
}

// Sorts a[0, n), values equal in their first `depth` bytes, by the bytes
// from `depth` on: 16 at a time as two numbers (no byte-by-byte pass and no
// indirection per comparison), then each run of equal keys of values that
// go on past them by the next 16.
void SortFrom(const std::vector<absl::string_view>& values, Keyed* a, size_t n, size_t depth) {
  for (size_t i = 0; i < n; ++i) Load(values[a[i].index], depth, &a[i]);
  std::sort(a, a + n, [](const Keyed& x, const Keyed& y) {
    if (x.key != y.key) return x.key < y.key;
    if (x.key2 != y.key2) return x.key2 < y.key2;
    return x.left < y.left;
  });
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && a[j].key == a[i].key && a[j].key2 == a[i].key2 && a[j].left == a[i].left) ++j;
    // Equal keys and more bytes to come: order them by those. (Equal keys
    // that end within them are equal values.)
    if (j - i > 1 && a[i].left == kKeyBytes + 1) SortFrom(values, a + i, j - i, depth + kKeyBytes);
    i = j;
  }
}

}  // namespace

void SortStringIndexes(const std::vector<absl::string_view>& values, std::vector<uint32_t>* order) {
  std::vector<Keyed> keyed(order->size());
  for (size_t i = 0; i < keyed.size(); ++i) keyed[i].index = (*order)[i];
  SortFrom(values, keyed.data(), keyed.size(), 0);
  for (size_t i = 0; i < keyed.size(); ++i) (*order)[i] = keyed[i].index;
}

}  // namespace segment
}  // namespace sluice
