// Test helpers that speak the standard gRPC health and reflection protocols
// the way grpcurl and Kubernetes probes do.
#ifndef SLUICE_TESTS_GRPC_INTROSPECTION_H_
#define SLUICE_TESTS_GRPC_INTROSPECTION_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"

namespace sluice::testing {

// grpc.health.v1.Health/Check for `service` ("" = the whole server):
// "SERVING", "NOT_SERVING", ...
absl::StatusOr<std::string> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                        const std::string& service = "");

// Services listed by grpc.reflection.v1alpha, each with the names of its
// methods (resolved through FileContainingSymbol, as grpcurl describe does).
absl::StatusOr<std::map<std::string, std::set<std::string>>> ReflectServices(
    const std::shared_ptr<grpc::Channel>& channel);

// Calls the unary method `path` ("/pkg.Service/Method") with an empty request
// (valid for every message type), as a client that knows only the name would;
// the call's status. 10 s deadline.
grpc::Status CallWithEmptyRequest(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& path);

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_GRPC_INTROSPECTION_H_
