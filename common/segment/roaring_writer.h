// Writes Roaring bitmaps in the portable serialization format
// (https://github.com/RoaringBitmap/RoaringFormatSpec) straight from sorted
// row numbers, without building CRoaring objects: segment bitmaps are built
// once per dictionary value from posting lists, where allocating a CRoaring
// bitmap per value (hundreds of thousands for a high-cardinality dimension)
// would dominate the write.
//
// Container choice is a pure function of the values (run containers when
// they are strictly smaller), so equal sets serialize to equal bytes.
#ifndef SLUICE_COMMON_SEGMENT_ROARING_WRITER_H_
#define SLUICE_COMMON_SEGMENT_ROARING_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice {
namespace segment {

// Appends the portable serialization of the set {values[0..n)}, which must be
// strictly increasing.
void AppendPortableRoaring(const uint32_t* values, size_t n, std::string* out);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_ROARING_WRITER_H_
