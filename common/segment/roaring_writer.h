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

#include "common/segment/byte_buffer.h"

namespace sluice {
namespace segment {

// Appends the portable serialization of the set {values[0..n)}, which must be
// strictly increasing.
void AppendPortableRoaring(const uint32_t* values, size_t n, std::string* out);
// The same bytes, appended to a buffer that is not zeroed as it grows (the
// segment writer's).
void AppendPortableRoaring(const uint32_t* values, size_t n, ByteBuffer* out);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_ROARING_WRITER_H_
