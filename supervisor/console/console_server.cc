#include "supervisor/console/console_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/metrics/http_message.h"

namespace sluice::supervisor::console {

namespace {

// Headers a check looks at: a second one leaves it open which was checked.
constexpr const char* kSingleHeaders[] = {"Authorization", "Host", "Origin", "Sec-Fetch-Site"};

void Answer(const httplib::Request& req, httplib::Response& res, metrics::HttpRoutes* routes) {
  for (const char* name : kSingleHeaders) {
    if (req.get_header_value_count(name) > 1) {
      res.status = 400;
      res.set_content(absl::StrCat("more than one ", name, " header\n"), "text/plain");
      return;
    }
  }
  metrics::HttpRequest request;
  request.method = req.method;
  request.path = req.path;
  const size_t question = req.target.find('?');
  if (question != std::string::npos) request.query = req.target.substr(question + 1);
  request.authorization = req.get_header_value("Authorization");
  request.host = req.get_header_value("Host");
  request.origin = req.get_header_value("Origin");
  request.sec_fetch_site = req.get_header_value("Sec-Fetch-Site");
  metrics::HttpResponse response;
  response.status = 404;
  response.body = "not found: the console is at /console/\n";
  if (routes != nullptr) {
    routes->Dispatch(request.path,
                     [&](metrics::HttpHandler& handler) { response = handler.Handle(request); });
  }
  res.status = response.status;
  for (absl::string_view line : absl::StrSplit(response.extra_headers, "\r\n", absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> header =
        absl::StrSplit(line, absl::MaxSplits(':', 1));
    res.set_header(std::string(header.first),
                   std::string(absl::StripLeadingAsciiWhitespace(header.second)));
  }
  res.set_content(response.body, response.content_type);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ConsoleServer>> ConsoleServer::Start(ConsoleServerOptions options) {
  const size_t colon = options.listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(options.listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("console listen address is not HOST:PORT: ", options.listen));
  }
  std::string host = options.listen.substr(0, colon);
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  if (options.tls_cert_path.empty() != options.tls_key_path.empty()) {
    return absl::InvalidArgumentError("the console's TLS needs both a certificate and a key");
  }
  auto server = std::unique_ptr<ConsoleServer>(new ConsoleServer());
  server->tls_ = !options.tls_cert_path.empty();
  if (server->tls_) {
    auto ssl = std::make_unique<httplib::SSLServer>(options.tls_cert_path.c_str(),
                                                    options.tls_key_path.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat("the console cannot load the certificate ",
                                                     options.tls_cert_path, " and its key"));
    }
    server->server_ = std::move(ssl);
  } else {
    server->server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& http = *server->server_;
  const int threads = std::max(1, options.threads);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(options.max_body_bytes);
  const auto read_timeout = absl::ToChronoMilliseconds(options.read_timeout);
  http.set_read_timeout(read_timeout);
  http.set_write_timeout(read_timeout);
  // Headers and body go out as separate writes: without TCP_NODELAY each
  // answer waits ~40 ms for the client's delayed ACK.
  http.set_tcp_nodelay(true);
  http.set_keep_alive_timeout(std::max<time_t>(1, absl::ToInt64Seconds(options.keep_alive)));
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, with which a
  // second process could bind the same port and take half the connections.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  metrics::HttpRoutes* routes = options.routes;
  auto handler = [routes](const httplib::Request& req, httplib::Response& res) {
    Answer(req, res, routes);
  };
  http.Get(".*", handler);
  http.Post(".*", handler);
  http.Put(".*", handler);
  http.Delete(".*", handler);
  http.Patch(".*", handler);
  http.Options(".*", handler);
  server->port_ = port == 0 ? http.bind_to_any_port(host) : (http.bind_to_port(host, port) ? port : -1);
  if (server->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("the console cannot listen on ", options.listen));
  }
  server->thread_ = std::thread([raw = server->server_.get()] { raw->listen_after_bind(); });
  // Until it runs, stop() would not reach it (and Shutdown's join would wait
  // for good).
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!http.is_running() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  if (!http.is_running()) return absl::InternalError("the console's listener did not start");
  return server;
}

ConsoleServer::~ConsoleServer() { Shutdown(); }

void ConsoleServer::Shutdown() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace sluice::supervisor::console
