// A minimal HTTP/1.1 server for Prometheus scrapes and liveness checks:
//   GET|HEAD /metrics  -> 200, the registry in text format 0.0.4
//   GET|HEAD /healthz  -> 200 "ok", or 503 with the health check's message
//   a path under a prefix of `routes` (http_routes.h) -> that route's handler
//   other paths        -> 404; other methods on /metrics, /healthz -> 405
// With an `authorize` check (authentication on), every path but /healthz
// first needs the credential it accepts ("Authorization: Bearer <token>"):
// 401 with "WWW-Authenticate: Bearer" without one or for an unknown one, 403
// for a caller without the role. /healthz stays open: it is what liveness and
// readiness probes ask, and it tells nothing but "ok" or why not.
// Keep-alive (HTTP/1.1 default, "Connection: close" honoured), pipelined
// requests answered in order, requests bounded in size and in time (a request
// must arrive whole within request_timeout of its first byte, so a client
// dripping bytes cannot hold a connection), idle connections closed after a
// timeout, at most `max_connections` open at once: a new connection beyond
// them closes the one that has been quiet longest, so slow or idle clients
// cannot keep a liveness probe out.
//
// Usage (in main, through StartServiceBasics; see docs/operations.md for the
// flag):
//   SLUICE_ASSIGN_OR_RETURN(auto server, metrics::MetricsHttpServer::Start(
//       {.listen = FLAGS_metrics_listen, .registry = &registry}));
//   LOG(INFO) << "metrics on port " << server->port();
//
// One thread serves every connection with poll(); rendering happens on that
// thread. Plain HTTP only: bearer tokens cross the network in clear, so
// expose the port inside the cluster, not beyond.
#ifndef SLUICE_COMMON_METRICS_HTTP_SERVER_H_
#define SLUICE_COMMON_METRICS_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/metrics/http_message.h"
#include "common/metrics/http_routes.h"
#include "common/metrics/registry.h"

namespace sluice {
namespace metrics {

struct MetricsHttpServerOptions {
  // "HOST:PORT", "[IPv6]:PORT" or ":PORT" (every interface). Port 0 picks a
  // free port; port() tells which.
  std::string listen;
  // Served at /metrics; must outlive the server. Null: /metrics is not
  // served (404), e.g. the supervisor's web console's own listener.
  Registry* registry = nullptr;
  // Answers /healthz: OK gives 200 "ok", an error 503 with its message.
  // Runs on the server thread. Unset: always healthy while the server runs.
  std::function<absl::Status()> health;
  // Checks the Authorization header's value ("" when absent) of every request
  // but /healthz, on the server thread: OK serves it, UNAUTHENTICATED answers
  // 401 (with "WWW-Authenticate: Bearer"), any other error 403; the status's
  // message is the body and must not hold the credential. Unset: every
  // request is served (authentication off).
  std::function<absl::Status(const std::string& authorization)> authorize;
  // More paths, served after the `authorize` check (the route formats the
  // refusal). Null: none. Not owned; must outlive the server.
  HttpRoutes* routes = nullptr;
  // Longest request (head and body) accepted; longer ones get 431/413.
  size_t max_request_bytes = 8192;
  // Open connections; a new one beyond this closes the quietest.
  int max_connections = 32;
  // A connection with no complete request for this long is closed.
  absl::Duration idle_timeout = absl::Seconds(30);
  // A request must be complete this long after its first byte arrived.
  absl::Duration request_timeout = absl::Seconds(5);
};

class MetricsHttpServer {
 public:
  // Binds and starts serving. INVALID_ARGUMENT for a malformed address or
  // options, UNAVAILABLE when the address cannot be bound (e.g. in use).
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(MetricsHttpServerOptions options);

  // For mains: null when `listen` is empty (metrics off), else
  // Start({.listen = listen, .registry = registry, .authorize = authorize,
  // .routes = routes}).
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> StartIfListening(
      const std::string& listen, Registry* registry,
      std::function<absl::Status(const std::string& authorization)> authorize = nullptr,
      HttpRoutes* routes = nullptr);

  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;
  ~MetricsHttpServer();  // Shutdown()

  // The bound port (the real one when asked for port 0).
  int port() const { return port_; }

  // Closes the listener and every connection and joins the thread.
  // Idempotent.
  void Shutdown();

 private:
  struct Connection;

  MetricsHttpServer(MetricsHttpServerOptions options, int listen_fd, int port, int wake_read,
                    int wake_write);
  void Serve();
  // Everything below runs on the serving thread only.
  void Accept(std::vector<std::unique_ptr<Connection>>* connections);
  // Closes the connection quiet longest that is not sending an answer.
  void Evict(std::vector<std::unique_ptr<Connection>>* connections);
  void Read(Connection* conn);
  void Write(Connection* conn);
  void Respond(Connection* conn);
  std::string Route(const HttpRequest& request, bool* close);

  const MetricsHttpServerOptions options_;
  const int listen_fd_;
  const int port_;
  const int wake_read_;  // poll()ed; Shutdown writes to wake_write_
  const int wake_write_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace metrics
}  // namespace sluice

#endif  // SLUICE_COMMON_METRICS_HTTP_SERVER_H_
