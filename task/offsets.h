// The task's names for common/offsets.h (the one offsets vocabulary).
#ifndef SLUICE_TASK_OFFSETS_H_
#define SLUICE_TASK_OFFSETS_H_

#include <string>

#include "common/offsets.h"

namespace sluice::task {

using ::sluice::OffsetMap;

inline OffsetMap FromProtoMap(const google::protobuf::Map<int32_t, int64_t>& map) {
  return ::sluice::FromProto(map);
}
inline void ToProtoMap(const OffsetMap& offsets, google::protobuf::Map<int32_t, int64_t>* out) {
  ::sluice::ToProto(offsets, out);
}
// "{0:12, 1:END}" for logs and error messages (FormatOffsets).
inline std::string OffsetsToString(const OffsetMap& offsets) { return ::sluice::FormatOffsets(offsets); }

}  // namespace sluice::task

#endif  // SLUICE_TASK_OFFSETS_H_
