// Sorting many strings with shared prefixes (dictionary values such as
// "History_List_12345"): multikey quicksort (Bentley & Sedgewick), which
// looks at each character position once per partition instead of comparing
// whole strings from their first byte each time.
#ifndef SLUICE_COMMON_SEGMENT_STRING_SORT_H_
#define SLUICE_COMMON_SEGMENT_STRING_SORT_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

// Sorts `order` (indexes into `values`) so that the values it points to are
// in byte order (as absl::string_view's operator<).
void SortStringIndexes(const std::vector<absl::string_view>& values, std::vector<uint32_t>* order);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_STRING_SORT_H_
