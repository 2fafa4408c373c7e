// Counts every RPC a gRPC server handles, into a metrics Registry:
//   sluice_grpc_server_handled_total{grpc_service,grpc_method,grpc_code}
//   sluice_grpc_server_handling_seconds{grpc_service,grpc_method}
// (kGrpcServerHandled / kGrpcServerHandlingSeconds in catalog.h).
//
// Usage, where the server is built:
//   std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> f;
//   f.push_back(metrics::NewGrpcServerMetricsFactory(&registry));
//   builder.experimental().SetInterceptorCreators(std::move(f));
//
// An RPC whose status is never sent (the client went away first) counts as
// CANCELLED. A method no compiled-in contract defines (the caller chose the
// name) counts under grpc_service="unknown", grpc_method="unknown", so
// callers cannot create series.
#ifndef SLUICE_COMMON_METRICS_GRPC_SERVER_METRICS_H_
#define SLUICE_COMMON_METRICS_GRPC_SERVER_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include <memory>

#include "common/metrics/registry.h"

namespace sluice {
namespace metrics {

// `registry` must outlive the server.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewGrpcServerMetricsFactory(
    Registry* registry);

}  // namespace metrics
}  // namespace sluice

#endif  // SLUICE_COMMON_METRICS_GRPC_SERVER_METRICS_H_
