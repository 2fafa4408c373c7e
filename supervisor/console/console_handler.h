// The supervisor's web console over HTTP (the listener of --console_listen,
// route "/console/"): the page and its script and style (console_assets.h),
// and the JSON API (console_route.h) run as calls of the supervisor's own
// gRPC service with the browser's bearer token (console_api.h).
//
// Who sees what: the page and its assets hold no data and load without a
// credential; the script asks for a bearer token, keeps it in the tab's
// sessionStorage and sends it as "Authorization: Bearer" with every API
// call. The gRPC server then decides as for any client: readers read, admins
// also act. GET /console/api/whoami answers the caller's roles so the page
// shows admin buttons only to admins (the server refuses a reader's action
// whatever the page shows).
//
// Cross-site requests cannot act: no cookie or other ambient credential
// exists (a request another site makes the browser send carries no token),
// actions are POSTs (never GET), and an API request whose Origin is not this
// host, or whose Sec-Fetch-Site is cross-site or same-site, is refused 403
// before anything runs. Every answer carries a Content-Security-Policy that
// allows only this origin's script and style, and frames nothing.
#ifndef SLUICE_SUPERVISOR_CONSOLE_CONSOLE_HANDLER_H_
#define SLUICE_SUPERVISOR_CONSOLE_CONSOLE_HANDLER_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/auth/authorizer.h"
#include "common/metrics/http_routes.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/console/console_api.h"
#include "supervisor/console/lag_history.h"

namespace sluice::supervisor::console {

inline constexpr char kConsolePrefix[] = "/console/";

struct ConsoleHandlerOptions {
  // A channel to the supervisor's own gRPC service (in-process).
  std::shared_ptr<grpc::Channel> channel;
  // The gRPC server's authorizer (whoami); must outlive the handler. Null:
  // authentication is off and every caller is an admin.
  const auth::Authorizer* authorizer = nullptr;
  // The statuses the lag history samples every `lag_sample_period`; null:
  // no history.
  std::function<std::vector<v1::SupervisorStatus>()> statuses;
  absl::Duration lag_sample_period = absl::Seconds(10);
};

class ConsoleHandler : public metrics::HttpHandler {
 public:
  explicit ConsoleHandler(ConsoleHandlerOptions options);
  ~ConsoleHandler() override;  // stops the sampler

  metrics::HttpResponse Handle(const metrics::HttpRequest& request) override;

 private:
  metrics::HttpResponse Api(const metrics::HttpRequest& request);
  metrics::HttpResponse WhoAmI(const metrics::HttpRequest& request) const;

  const ConsoleHandlerOptions options_;
  LagHistory lag_history_;
  ConsoleApi api_;
  absl::Notification stop_;
  std::thread sampler_;
};

// 403 unless the request comes from this host's own pages: an Origin header,
// when sent, is http(s)://<Host>; a Sec-Fetch-Site header, when sent, is
// same-origin or none.
absl::Status CheckSameOrigin(const metrics::HttpRequest& request);

}  // namespace sluice::supervisor::console

#endif  // SLUICE_SUPERVISOR_CONSOLE_CONSOLE_HANDLER_H_
