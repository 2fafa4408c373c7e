// The web console's listener (--console_listen): HTTP, or HTTPS with the
// certificate and key the gRPC server uses, served by cpp-httplib (Debian's
// libcpp-httplib) on a thread pool. Every request goes to the route
// table's handler for its path (console_handler.h under /console/); the
// handler decides who may see what. No client certificate is asked for:
// browsers sign in with a bearer token.
#ifndef SLUICE_SUPERVISOR_CONSOLE_CONSOLE_SERVER_H_
#define SLUICE_SUPERVISOR_CONSOLE_CONSOLE_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/metrics/http_routes.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace sluice::supervisor::console {

struct ConsoleServerOptions {
  // "HOST:PORT"; port 0 picks a free one (port() tells which).
  std::string listen;
  // Both set: HTTPS with this PEM certificate chain and key. Both empty:
  // plain HTTP. One without the other is INVALID_ARGUMENT.
  std::string tls_cert_path;
  std::string tls_key_path;
  // Not owned; must outlive the server.
  metrics::HttpRoutes* routes = nullptr;
  // Requests with a longer body are refused (413); the API takes none.
  size_t max_body_bytes = 8192;
  // Threads answering requests (a keep-alive connection holds one while it
  // stays open); connections beyond them wait.
  int threads = 16;
  // An idle keep-alive connection is closed after this long.
  absl::Duration keep_alive = absl::Seconds(2);
  absl::Duration read_timeout = absl::Seconds(5);
};

class ConsoleServer {
 public:
  // Binds and starts serving. INVALID_ARGUMENT for a malformed address, a
  // lone certificate or key, or a certificate and key that do not load;
  // UNAVAILABLE when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<ConsoleServer>> Start(ConsoleServerOptions options);
  ~ConsoleServer();  // Shutdown()

  int port() const { return port_; }
  bool tls() const { return tls_; }
  // Stops accepting, finishes running requests, joins. Idempotent.
  void Shutdown();

 private:
  ConsoleServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool tls_ = false;
};

}  // namespace sluice::supervisor::console

#endif  // SLUICE_SUPERVISOR_CONSOLE_CONSOLE_SERVER_H_
