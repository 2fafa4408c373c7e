// Kafka offset maps (partition -> offset) as the task handles them, and their
// conversions to and from the protobuf map fields of the wire contract.
#ifndef SLUICE_TASK_OFFSETS_H_
#define SLUICE_TASK_OFFSETS_H_

#include <cstdint>
#include <map>
#include <string>

#include "google/protobuf/map.h"

namespace sluice::task {

// Ordered by partition, so equal maps compare equal and print the same.
using OffsetMap = std::map<int32_t, int64_t>;

inline OffsetMap FromProtoMap(const google::protobuf::Map<int32_t, int64_t>& map) {
  return OffsetMap(map.begin(), map.end());
}

inline void ToProtoMap(const OffsetMap& offsets, google::protobuf::Map<int32_t, int64_t>* out) {
  out->clear();
  for (const auto& [partition, offset] : offsets) (*out)[partition] = offset;
}

// "{0: 12, 1: END}" for logs and error messages.
std::string OffsetsToString(const OffsetMap& offsets);

}  // namespace sluice::task

#endif  // SLUICE_TASK_OFFSETS_H_
