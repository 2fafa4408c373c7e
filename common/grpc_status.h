// The one place where absl::Status and grpc::Status meet. The codes are the
// same numbers in both libraries (checked at compile time in the .cc).
#ifndef SLUICE_COMMON_GRPC_STATUS_H_
#define SLUICE_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// A handler's answer: copies an OK result into the response, or maps the
// error once.  return ReplyWith(manager_->Status(*request), response);
template <typename T>
grpc::Status ReplyWith(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace sluice

#endif  // SLUICE_COMMON_GRPC_STATUS_H_
