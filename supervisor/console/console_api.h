// Runs a console route (console_route.h) as one call of the supervisor's own
// gRPC service, over an in-process channel, with the browser's
// Authorization header as the call's credential: the gRPC server
// authenticates, authorizes by role, checks limits and logs it exactly as any
// other client's call (a reader's POST of an action is PERMISSION_DENIED).
// The answer is the response message as JSON (proto3's JSON mapping, as
// grpcurl prints it, default values included), or {"code": ..., "message":
// ...} with the HTTP status of the gRPC code.
#ifndef SLUICE_SUPERVISOR_CONSOLE_CONSOLE_API_H_
#define SLUICE_SUPERVISOR_CONSOLE_CONSOLE_API_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/metrics/http_routes.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "supervisor/console/console_route.h"
#include "supervisor/console/lag_history.h"

namespace sluice::supervisor::console {

// The HTTP status of a gRPC code: UNAUTHENTICATED 401, PERMISSION_DENIED 403,
// NOT_FOUND 404, INVALID_ARGUMENT and OUT_OF_RANGE 400, ALREADY_EXISTS,
// ABORTED and FAILED_PRECONDITION 409, RESOURCE_EXHAUSTED 429, UNIMPLEMENTED
// 405, UNAVAILABLE 503, DEADLINE_EXCEEDED 504, anything else 500.
int HttpStatusOf(absl::StatusCode code);

// {"code":"NOT_FOUND","message":"..."} with the status's HTTP status.
metrics::HttpResponse ErrorResponse(const absl::Status& status);

class ConsoleApi {
 public:
  // `stub` calls the supervisor's own service (an in-process channel);
  // `lag_history` (not owned) answers kLagHistory.
  ConsoleApi(std::unique_ptr<v1::SupervisorService::StubInterface> stub,
             const LagHistory* lag_history, absl::Duration deadline = absl::Seconds(10));

  // Runs every route but kWhoAmI (the handler answers that itself) as the
  // caller whose Authorization header is `authorization`.
  metrics::HttpResponse Run(const ConsoleRoute& route, const std::string& authorization);

 private:
  std::unique_ptr<v1::SupervisorService::StubInterface> stub_;
  const LagHistory* lag_history_;
  const absl::Duration deadline_;
};

}  // namespace sluice::supervisor::console

#endif  // SLUICE_SUPERVISOR_CONSOLE_CONSOLE_API_H_
