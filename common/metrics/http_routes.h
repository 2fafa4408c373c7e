// The route table of the HTTP endpoint (http_server.h): besides its own
// /metrics and /healthz, the server hands every request whose path starts
// with a registered prefix (e.g. "/iceberg/") to that prefix's handler,
// after the same authorization check as /metrics. Handlers are plain C++:
// a request in, a response out, no sockets.
//
// A component that owns what its handler reads registers it once it is up
// and removes it before it goes away: Remove() waits for a request being
// handled to finish, so no handler runs on freed state.
#ifndef SLUICE_COMMON_METRICS_HTTP_ROUTES_H_
#define SLUICE_COMMON_METRICS_HTTP_ROUTES_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/metrics/http_message.h"

namespace sluice {
namespace metrics {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Complete "Name: value\r\n" lines.
  std::string extra_headers;
};

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // Answers one request (any method) on the server thread. The body of a
  // request is not passed: routes serve reads.
  virtual HttpResponse Handle(const HttpRequest& request) = 0;
  // The answer when the server refused the request before Handle: 401 or
  // 403 with `message` (which never holds the credential). Default: the
  // message as text.
  virtual HttpResponse Refusal(int status, absl::string_view message);
};

class HttpRoutes {
 public:
  // `prefix` starts and ends with "/" and is not "/metrics/" or
  // "/healthz/". INVALID_ARGUMENT otherwise, ALREADY_EXISTS when taken.
  absl::Status Add(const std::string& prefix, std::shared_ptr<HttpHandler> handler)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Removes the route, waiting for a request it is handling. No-op when
  // absent.
  void Remove(const std::string& prefix) ABSL_LOCKS_EXCLUDED(mu_);

  // The handler whose prefix `path` starts with (the path without its last
  // "/" counts too: "/iceberg" for "/iceberg/"), run under the table's
  // reader lock: `f(handler)`. False when no route matches (f not run).
  bool Dispatch(absl::string_view path, const std::function<void(HttpHandler&)>& f)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<HttpHandler>> routes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace metrics
}  // namespace sluice

#endif  // SLUICE_COMMON_METRICS_HTTP_ROUTES_H_
