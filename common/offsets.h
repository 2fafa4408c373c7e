// Kafka offset maps (partition -> offset), the one vocabulary of the task,
// the supervisor and the tools: conversions from and to the proto maps, a compact JSON text form for the
// metadata store ({"0":123,"1":456}), comparison helpers and log formatting.
#ifndef SLUICE_COMMON_OFFSETS_H_
#define SLUICE_COMMON_OFFSETS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"

namespace sluice {

// Ordered by partition, so equal maps compare equal and print the same.
using OffsetMap = std::map<int32_t, int64_t>;

OffsetMap FromProto(const google::protobuf::Map<int32_t, int64_t>& map);
void ToProto(const OffsetMap& offsets, google::protobuf::Map<int32_t, int64_t>* out);

// {"0":123,"1":456} (keys ascending, no spaces).
std::string EncodeOffsets(const OffsetMap& offsets);
// Parses EncodeOffsets' form (whitespace tolerated); INVALID_ARGUMENT otherwise.
absl::StatusOr<OffsetMap> DecodeOffsets(absl::string_view text);

// "{0:123, 1:456}" for logs; END_OF_PARTITION shows as "END".
std::string FormatOffsets(const OffsetMap& offsets);

// Per-partition maximum of `a` and `b` over the union of their partitions.
OffsetMap MaxOffsets(const OffsetMap& a, const OffsetMap& b);

// `offsets` restricted to `partitions`' keys.
OffsetMap Restrict(const OffsetMap& offsets, const OffsetMap& partitions);

bool ContainsEndOfPartition(const OffsetMap& offsets);

}  // namespace sluice

#endif  // SLUICE_COMMON_OFFSETS_H_
