#include "common/grpc_status.h"

#include <string>

namespace sluice {

#define SLUICE_SAME_CODE(name, grpc_name)                                          \
  static_assert(static_cast<int>(absl::StatusCode::name) ==                         \
                    static_cast<int>(grpc::StatusCode::grpc_name),                  \
                #name " differs between absl and grpc")
SLUICE_SAME_CODE(kOk, OK);
SLUICE_SAME_CODE(kCancelled, CANCELLED);
SLUICE_SAME_CODE(kUnknown, UNKNOWN);
SLUICE_SAME_CODE(kInvalidArgument, INVALID_ARGUMENT);
SLUICE_SAME_CODE(kDeadlineExceeded, DEADLINE_EXCEEDED);
SLUICE_SAME_CODE(kNotFound, NOT_FOUND);
SLUICE_SAME_CODE(kAlreadyExists, ALREADY_EXISTS);
SLUICE_SAME_CODE(kPermissionDenied, PERMISSION_DENIED);
SLUICE_SAME_CODE(kResourceExhausted, RESOURCE_EXHAUSTED);
SLUICE_SAME_CODE(kFailedPrecondition, FAILED_PRECONDITION);
SLUICE_SAME_CODE(kAborted, ABORTED);
SLUICE_SAME_CODE(kOutOfRange, OUT_OF_RANGE);
SLUICE_SAME_CODE(kUnimplemented, UNIMPLEMENTED);
SLUICE_SAME_CODE(kInternal, INTERNAL);
SLUICE_SAME_CODE(kUnavailable, UNAVAILABLE);
SLUICE_SAME_CODE(kDataLoss, DATA_LOSS);
SLUICE_SAME_CODE(kUnauthenticated, UNAUTHENTICATED);
#undef SLUICE_SAME_CODE

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

}  // namespace sluice
