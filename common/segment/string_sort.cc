#include "common/segment/string_sort.h"

#include <algorithm>
#include <utility>

namespace sluice {
namespace segment {
namespace {

// The byte at `depth`, or -1 past the end (shorter strings sort first).
inline int CharAt(absl::string_view s, size_t depth) {
  return depth < s.size() ? static_cast<unsigned char>(s[depth]) : -1;
}

void InsertionSort(const std::vector<absl::string_view>& v, uint32_t* a, size_t n, size_t depth) {
  for (size_t i = 1; i < n; ++i) {
    const uint32_t x = a[i];
    const absl::string_view xs = v[x].substr(std::min(depth, v[x].size()));
    size_t j = i;
    while (j > 0 && xs < v[a[j - 1]].substr(std::min(depth, v[a[j - 1]].size()))) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = x;
  }
}

void MultikeyQuicksort(const std::vector<absl::string_view>& v, uint32_t* a, size_t n,
                       size_t depth) {
  while (n > 1) {
    if (n < 16) {
      InsertionSort(v, a, n, depth);
      return;
    }
    // Median of three characters as the pivot.
    int p0 = CharAt(v[a[0]], depth), p1 = CharAt(v[a[n / 2]], depth),
        p2 = CharAt(v[a[n - 1]], depth);
    if (p0 > p1) std::swap(p0, p1);
    if (p1 > p2) std::swap(p1, p2);
    if (p0 > p1) std::swap(p0, p1);
    const int pivot = p1;
    // Three-way partition: [0, lt) < pivot, [lt, gt) == pivot, [gt, n) > pivot.
    size_t lt = 0, i = 0, gt = n;
    while (i < gt) {
      const int c = CharAt(v[a[i]], depth);
      if (c < pivot) {
        std::swap(a[lt++], a[i++]);
      } else if (c > pivot) {
        std::swap(a[i], a[--gt]);
      } else {
        ++i;
      }
    }
    MultikeyQuicksort(v, a, lt, depth);
    MultikeyQuicksort(v, a + gt, n - gt, depth);
    if (pivot < 0) return;  // all equal and ended: nothing more to order
    a += lt;
    n = gt - lt;
    ++depth;
  }
}

}  // namespace

void SortStringIndexes(const std::vector<absl::string_view>& values, std::vector<uint32_t>* order) {
  MultikeyQuicksort(values, order->data(), order->size(), 0);
}

}  // namespace segment
}  // namespace sluice
