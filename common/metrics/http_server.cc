#include "common/metrics/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/metrics/http_message.h"

namespace sluice {
namespace metrics {
namespace {

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";
constexpr char kTextContentType[] = "text/plain; charset=utf-8";

absl::Status ErrnoStatus(int err, absl::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(err), absl::StrCat(what, ": ", strerror(err)));
}

// Splits "HOST:PORT", "[V6]:PORT", ":PORT" into host ("" = any) and port.
absl::Status SplitHostPort(absl::string_view listen, std::string* host, std::string* port) {
  absl::string_view h, p;
  if (!listen.empty() && listen[0] == '[') {
    size_t close = listen.find("]:");
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics listen address \"", listen, "\": expected [IPv6]:PORT"));
    }
    h = listen.substr(1, close - 1);
    p = listen.substr(close + 2);
  } else {
    size_t colon = listen.rfind(':');
    if (colon == absl::string_view::npos || listen.find(':') != colon) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metrics listen address \"", listen, "\": expected HOST:PORT, :PORT or [IPv6]:PORT"));
    }
    h = listen.substr(0, colon);
    p = listen.substr(colon + 1);
  }
  uint32_t number;
  if (p.empty() || !absl::SimpleAtoi(p, &number) || number > 65535 ||
      p.find_first_not_of("0123456789") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen address \"", listen, "\": bad port \"", p, "\""));
  }
  *host = std::string(h);
  *port = std::string(p);
  return absl::OkStatus();
}

// A listening, non-blocking socket on the first address of `listen` that
// binds; its port in *port.
absl::StatusOr<int> Listen(absl::string_view listen, int* port) {
  std::string host, service;
  absl::Status split = SplitHostPort(listen, &host, &service);
  if (!split.ok()) return split;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addrs = nullptr;
  int gai = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &addrs);
  if (gai != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen address \"", listen, "\": ", gai_strerror(gai)));
  }
  absl::Status last = absl::UnavailableError(
      absl::StrCat("metrics listen address \"", listen, "\" resolved to nothing"));
  int fd = -1;
  for (addrinfo* ai = addrs; ai != nullptr; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = ErrnoStatus(errno, "socket");
      continue;
    }
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ai->ai_family == AF_INET6 && host.empty()) {
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));  // dual stack
    }
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 128) == 0) break;
    last = absl::UnavailableError(
        absl::StrCat("cannot listen for metrics on \"", listen, "\": ", strerror(errno)));
    close(fd);
    fd = -1;
  }
  freeaddrinfo(addrs);
  if (fd < 0) return last;
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  *port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

}  // namespace

// One client connection, owned by the serving thread.
struct MetricsHttpServer::Connection {
  int fd = -1;
  std::string in;   // received, not yet answered
  std::string out;  // response being sent
  size_t out_sent = 0;
  bool close_after_write = false;
  bool closed = false;
  absl::Time last_active;
  // When the first byte of the request now in `in` arrived; InfiniteFuture
  // while `in` is empty.
  absl::Time request_started = absl::InfiniteFuture();
};

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    MetricsHttpServerOptions options) {
  if (options.max_request_bytes < 256 || options.max_connections < 1 ||
      options.idle_timeout <= absl::ZeroDuration() ||
      options.request_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "metrics server: max_request_bytes >= 256, max_connections >= 1 and positive "
        "idle_timeout and request_timeout are required");
  }
  int port = 0;
  absl::StatusOr<int> fd = Listen(options.listen, &port);
  if (!fd.ok()) return fd.status();
  int wake[2];
  if (pipe2(wake, O_NONBLOCK | O_CLOEXEC) != 0) {
    absl::Status status = ErrnoStatus(errno, "metrics server: pipe");
    close(*fd);
    return status;
  }
  return std::unique_ptr<MetricsHttpServer>(
      new MetricsHttpServer(std::move(options), *fd, port, wake[0], wake[1]));
}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::StartIfListening(
    const std::string& listen, Registry* registry,
    std::function<absl::Status(const std::string& authorization)> authorize,
    HttpRoutes* routes) {
  if (listen.empty()) return std::unique_ptr<MetricsHttpServer>();
  MetricsHttpServerOptions options;
  options.listen = listen;
  options.registry = registry;
  options.authorize = std::move(authorize);
  options.routes = routes;
  return Start(std::move(options));
}

MetricsHttpServer::MetricsHttpServer(MetricsHttpServerOptions options, int listen_fd, int port,
                                     int wake_read, int wake_write)
    : options_(std::move(options)),
      listen_fd_(listen_fd),
      port_(port),
      wake_read_(wake_read),
      wake_write_(wake_write) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsHttpServer::~MetricsHttpServer() {
  Shutdown();
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

void MetricsHttpServer::Shutdown() {
  if (!stopping_.exchange(true)) {
    char byte = 1;
    while (write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
    }
  }
  if (thread_.joinable()) thread_.join();
}

void MetricsHttpServer::Serve() {
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    absl::Time now = absl::Now();
    absl::Duration wait = options_.idle_timeout;
    for (const auto& conn : connections) {
      short events = conn->out.empty() ? POLLIN : POLLOUT;
      fds.push_back({conn->fd, events, 0});
      wait = std::min(wait, conn->last_active + options_.idle_timeout - now);
      wait = std::min(wait, conn->request_started + options_.request_timeout - now);
    }
    int timeout_ms = static_cast<int>(
        std::max<int64_t>(0, absl::ToInt64Milliseconds(wait + absl::Milliseconds(1))));
    int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      PLOG(ERROR) << "[metrics] poll failed; the metrics server stops";
      break;
    }
    if (stopping_.load()) break;
    // Connections first: `fds` is indexed like `connections` from 2 on, and
    // Accept appends to `connections`.
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection* conn = connections[i].get();
      short revents = fds[i + 2].revents;
      if (revents & (POLLERR | POLLNVAL)) {
        conn->closed = true;
      } else if (revents & POLLOUT) {
        Write(conn);
      } else if (revents & (POLLIN | POLLHUP)) {
        Read(conn);
      }
    }
    if (fds[1].revents & POLLIN) Accept(&connections);
    now = absl::Now();
    for (auto& conn : connections) {
      if (!conn->closed && now - conn->last_active >= options_.idle_timeout) {
        VLOG(1) << "[metrics] closing idle connection";
        conn->closed = true;
      }
      if (!conn->closed && now - conn->request_started >= options_.request_timeout) {
        VLOG(1) << "[metrics] closing a connection whose request is not complete in time";
        conn->closed = true;
      }
      if (conn->closed) {
        close(conn->fd);
        conn.reset();
      }
    }
    connections.erase(std::remove(connections.begin(), connections.end(), nullptr),
                      connections.end());
  }
  for (auto& conn : connections) close(conn->fd);
}

void MetricsHttpServer::Evict(std::vector<std::unique_ptr<Connection>>* connections) {
  Connection* quietest = nullptr;
  for (auto& conn : *connections) {
    if (conn->closed || !conn->out.empty()) continue;
    if (quietest == nullptr || conn->last_active < quietest->last_active) quietest = conn.get();
  }
  if (quietest == nullptr) return;
  VLOG(1) << "[metrics] connection limit reached: closing the quietest connection";
  close(quietest->fd);
  for (auto& conn : *connections) {
    if (conn.get() == quietest) conn.reset();
  }
  connections->erase(std::remove(connections->begin(), connections->end(), nullptr),
                     connections->end());
}

void MetricsHttpServer::Accept(std::vector<std::unique_ptr<Connection>>* connections) {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        PLOG_EVERY_N(WARNING, 100) << "[metrics] accept";
      }
      return;
    }
    if (static_cast<int>(connections->size()) >= options_.max_connections) Evict(connections);
    if (static_cast<int>(connections->size()) >= options_.max_connections) {
      close(fd);  // every connection is being answered: this one retries
      continue;
    }
    auto conn = std::make_unique<Connection>();
    conn->fd = fd;
    conn->last_active = absl::Now();
    connections->push_back(std::move(conn));
  }
}

void MetricsHttpServer::Read(Connection* conn) {
  char buf[16384];
  bool eof = false;
  // Stop reading once past the limit: the parser then answers 431/413.
  while (conn->in.size() <= options_.max_request_bytes) {
    ssize_t n = recv(conn->fd, buf, sizeof(buf), 0);
    if (n > 0) {
      if (conn->in.empty()) conn->request_started = absl::Now();
      conn->in.append(buf, n);
      conn->last_active = absl::Now();
      continue;
    }
    if (n == 0) {
      eof = true;
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      conn->closed = true;
      return;
    }
    break;
  }
  Respond(conn);
  if (eof) {
    // The client sent all it will: answer what is complete, then close.
    if (conn->out.empty()) {
      conn->closed = true;
    } else {
      conn->close_after_write = true;
    }
  }
}

void MetricsHttpServer::Write(Connection* conn) {
  while (conn->out_sent < conn->out.size()) {
    ssize_t n = send(conn->fd, conn->out.data() + conn->out_sent, conn->out.size() - conn->out_sent,
                     MSG_NOSIGNAL);
    if (n > 0) {
      conn->out_sent += n;
      conn->last_active = absl::Now();
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;  // poll for POLLOUT
    } else {
      conn->closed = true;
      return;
    }
  }
  conn->out.clear();
  conn->out_sent = 0;
  if (conn->close_after_write) {
    shutdown(conn->fd, SHUT_WR);
    conn->closed = true;
    return;
  }
  Respond(conn);  // a pipelined request may be waiting
}

void MetricsHttpServer::Respond(Connection* conn) {
  if (!conn->out.empty() || conn->close_after_write || conn->closed) return;
  HttpParseResult parsed = ParseHttpRequest(conn->in, options_.max_request_bytes);
  switch (parsed.state) {
    case HttpParseResult::State::kIncomplete:
      return;
    case HttpParseResult::State::kInvalid:
      VLOG(1) << "[metrics] bad request: " << parsed.error;
      conn->out = FormatHttpResponse(parsed.error_status, kTextContentType, parsed.error + "\n",
                                     /*close=*/true, /*head_only=*/false);
      conn->close_after_write = true;
      conn->in.clear();
      break;
    case HttpParseResult::State::kComplete: {
      bool close = !parsed.request.keep_alive;
      conn->out = Route(parsed.request, &close);
      conn->close_after_write = close;
      conn->in.erase(0, parsed.consumed);
      // A pipelined request already begun gets its own full allowance.
      conn->request_started = conn->in.empty() ? absl::InfiniteFuture() : absl::Now();
      break;
    }
  }
  Write(conn);
}

std::string MetricsHttpServer::Route(const HttpRequest& request, bool* close) {
  const bool head = request.method == "HEAD";
  const bool get_or_head = head || request.method == "GET";
  // HTTP/1.0 clients that asked for keep-alive are told it is on.
  std::string extra = request.minor_version == 0 && !*close ? "Connection: keep-alive\r\n" : "";
  // Liveness is open to probes; everything else (unknown paths too, so
  // nothing is told without a credential) needs one when authentication is on.
  if (request.path != "/healthz" && options_.authorize) {
    absl::Status allowed = options_.authorize(request.authorization);
    if (!allowed.ok()) {
      const bool unauthenticated = absl::IsUnauthenticated(allowed);
      // The message names the principal or the reason, never the credential.
      LOG_EVERY_N(WARNING, 100) << "[metrics] refused " << request.method << " "
                                << absl::CHexEscape(request.path.substr(0, 100)) << ": "
                                << allowed.message() << " (one refusal in 100 is logged)";
      const int status = unauthenticated ? 401 : 403;
      HttpResponse refusal;
      refusal.status = status;
      refusal.content_type = kTextContentType;
      refusal.body = absl::StrCat(allowed.message(), "\n");
      if (options_.routes != nullptr) {
        options_.routes->Dispatch(request.path, [&](HttpHandler& handler) {
          refusal = handler.Refusal(status, allowed.message());
        });
      }
      return FormatHttpResponse(status, refusal.content_type, refusal.body, *close, head,
                                absl::StrCat(unauthenticated ? "WWW-Authenticate: Bearer\r\n" : "",
                                             extra, refusal.extra_headers));
    }
  }
  if (options_.routes != nullptr) {
    HttpResponse response;
    if (options_.routes->Dispatch(request.path,
                                  [&](HttpHandler& handler) { response = handler.Handle(request); })) {
      return FormatHttpResponse(response.status, response.content_type, response.body, *close,
                                head, absl::StrCat(extra, response.extra_headers));
    }
  }
  if ((request.path == "/metrics" && options_.registry != nullptr) || request.path == "/healthz") {
    if (!get_or_head) {
      return FormatHttpResponse(405, kTextContentType, "use GET or HEAD\n", *close, false,
                                extra + "Allow: GET, HEAD\r\n");
    }
    if (request.path == "/metrics") {
      return FormatHttpResponse(200, kMetricsContentType, options_.registry->Render(), *close, head,
                                extra);
    }
    absl::Status health = options_.health ? options_.health() : absl::OkStatus();
    if (health.ok()) return FormatHttpResponse(200, kTextContentType, "ok\n", *close, head, extra);
    return FormatHttpResponse(503, kTextContentType, absl::StrCat(health.ToString(), "\n"), *close,
                              head, extra);
  }
  return FormatHttpResponse(404, kTextContentType, "not found: use /metrics or /healthz\n", *close,
                            head, extra);
}

}  // namespace metrics
}  // namespace sluice
