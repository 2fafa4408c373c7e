// Structural validation of a Roaring bitmap in the portable serialization
// format (https://github.com/RoaringBitmap/RoaringFormatSpec), before the
// bytes are handed to CRoaring: CRoaring's "safe" deserializer checks that it
// stays within its buffer but not that containers are well formed (sorted,
// consistent cardinalities), which later operations rely on.
#ifndef SLUICE_COMMON_SEGMENT_ROARING_CHECK_H_
#define SLUICE_COMMON_SEGMENT_ROARING_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

// Whether `bytes` is exactly one well-formed portable Roaring bitmap whose
// values are all < `limit`; `*why` says what is wrong otherwise. When
// `values` is not null the bitmap's values are appended to it in ascending
// order as they are checked (what is appended before a failure means
// nothing): a decoder that needs no CRoaring bitmap and no allocation
// beyond the caller's vector, for callers that read every bitmap once (the
// segment verifier).
bool CheckPortableRoaring(absl::string_view bytes, uint64_t limit, std::string* why,
                          std::vector<uint32_t>* values = nullptr);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_ROARING_CHECK_H_
