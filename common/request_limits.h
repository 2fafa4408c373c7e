// The bounds of proto/sluice/v1/limits.proto, checked on any message by
// reflection: lengths of strings, sizes of lists and maps, integer ranges,
// enum values and nesting depth. Both servers run it on every request before
// the handler (a request beyond a bound changes nothing); ValidateSpec runs it
// on specs from any source.
#ifndef SLUICE_COMMON_REQUEST_LIMITS_H_
#define SLUICE_COMMON_REQUEST_LIMITS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace sluice {

// Bounds of fields without a (sluice.v1.limits) option.
inline constexpr size_t kDefaultMaxBytes = 65536;
inline constexpr size_t kDefaultMaxItems = 100000;
inline constexpr int kMaxMessageDepth = 32;

// OK, or INVALID_ARGUMENT naming the first field beyond its bound by its JSON
// path ("spec.ioConfig.taskCount must be at least 1 (got 0)"). Long values
// are never echoed, only their size.
absl::Status CheckMessageLimits(const google::protobuf::Message& message);

}  // namespace sluice

#endif  // SLUICE_COMMON_REQUEST_LIMITS_H_
