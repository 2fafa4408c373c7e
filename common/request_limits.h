// The bounds of proto/sluice/v1/limits.proto, checked on any message by
// reflection: lengths of strings, sizes of lists and maps, integer ranges,
// enum values and nesting depth. Both servers run it on every request before
// the handler (a request beyond a bound changes nothing); ValidateSpec runs it
// on specs from any source.
#ifndef SLUICE_COMMON_REQUEST_LIMITS_H_
#define SLUICE_COMMON_REQUEST_LIMITS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace sluice {

// Bounds of fields without a (sluice.v1.limits) option.
inline constexpr size_t kDefaultMaxBytes = 65536;
inline constexpr size_t kDefaultMaxItems = 100000;
inline constexpr int kMaxMessageDepth = 32;
// Bound of a request whose method has no (sluice.v1.method_limits) option.
inline constexpr size_t kDefaultMaxRequestBytes = 65536;

// OK, or INVALID_ARGUMENT naming the first field beyond its bound by its JSON
// path ("spec.ioConfig.taskCount must be at least 1 (got 0)"). Long values
// are never echoed, only their size.
absl::Status CheckMessageLimits(const google::protobuf::Message& message);

// The request bound of a method ("sluice.v1.SupervisorService.ListSegments"
// or "/sluice.v1.SupervisorService/ListSegments"): its (method_limits)
// option, else kDefaultMaxRequestBytes; 0 for a method the generated pool
// does not know.
size_t MaxRequestBytes(absl::string_view method);

// The largest request bound of any method of `service` (a full name,
// "sluice.v1.TaskService"); 0 for an unknown service. A server's gRPC
// receive limit is the largest of its services' bounds.
size_t MaxRequestBytesOfService(absl::string_view service);

// OK, or RESOURCE_EXHAUSTED when `request` serializes to more bytes than its
// method's bound ("RegisterWorker requests are bounded to 4194304 bytes (got
// 5000000)").
absl::Status CheckRequestSize(const google::protobuf::Message& request, absl::string_view method);

}  // namespace sluice

#endif  // SLUICE_COMMON_REQUEST_LIMITS_H_
