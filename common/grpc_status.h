// The one place where absl::Status and grpc::Status meet. The codes are the
// same numbers in both libraries (checked at compile time in the .cc).
#ifndef SLUICE_COMMON_GRPC_STATUS_H_
#define SLUICE_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace sluice {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace sluice

#endif  // SLUICE_COMMON_GRPC_STATUS_H_
