// Handler glue: the request bounds of proto/sluice/v1/limits.proto as a
// grpc::Status, for the first lines of every handler (after authorization,
// so an unauthenticated caller learns nothing about the bounds).
#ifndef SLUICE_COMMON_GRPC_REQUEST_CHECK_H_
#define SLUICE_COMMON_GRPC_REQUEST_CHECK_H_

#include <grpcpp/support/status.h>

#include "common/grpc_status.h"
#include "common/request_limits.h"
#include "google/protobuf/message.h"

namespace sluice {

// `method` is the gRPC path ("/sluice.v1.TaskService/RunTask"): the request's
// size against its method's bound first (RESOURCE_EXHAUSTED), then its fields
// (INVALID_ARGUMENT).
inline grpc::Status CheckRequest(const google::protobuf::Message& request,
                                 absl::string_view method) {
  if (absl::Status size = CheckRequestSize(request, method); !size.ok()) {
    return ToGrpcStatus(size);
  }
  return ToGrpcStatus(CheckMessageLimits(request));
}

}  // namespace sluice

// Returns RESOURCE_EXHAUSTED or INVALID_ARGUMENT from the enclosing handler if
// `request` is beyond a bound of `method`.
#define SLUICE_CHECK_REQUEST(request, method)                                          \
  if (::grpc::Status sluice_request_refused = ::sluice::CheckRequest(request, method); \
      !sluice_request_refused.ok())                                              \
  return sluice_request_refused

#endif  // SLUICE_COMMON_GRPC_REQUEST_CHECK_H_
