// Scrapes a live MetricsHttpServer over TCP on loopback.
#include "common/metrics/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace sluice {
namespace metrics {
namespace {

// A blocking TCP client with a receive timeout, so a server bug fails the
// test instead of hanging it.
class Client {
 public:
  explicit Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Client() { close(fd_); }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  void Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      ASSERT_GT(n, 0) << strerror(errno);
      sent += n;
    }
  }

  struct Response {
    int status = 0;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
  };

  // Reads one response; `head_only` for answers to HEAD (no body follows).
  Response Read(bool head_only = false) {
    Response r;
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return r;
    }
    std::vector<std::string> lines = absl::StrSplit(buffer_.substr(0, end), "\r\n");
    std::vector<std::string> status_line = absl::StrSplit(lines[0], ' ');
    if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &r.status)) return r;
    for (size_t i = 1; i < lines.size(); ++i) {
      size_t colon = lines[i].find(':');
      r.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
          std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    }
    buffer_.erase(0, end + 4);
    size_t length = 0;
    if (!head_only && absl::SimpleAtoi(r.headers["content-length"], &length)) {
      while (buffer_.size() < length) {
        if (!Fill()) return r;
      }
      r.body = buffer_.substr(0, length);
      buffer_.erase(0, length);
    }
    return r;
  }

  // True when the server closed the connection (and sent nothing more).
  bool ClosedByServer() {
    char c;
    return buffer_.empty() && recv(fd_, &c, 1, 0) == 0;
  }

 private:
  bool Fill() {
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    buffer_.append(buf, n);
    return true;
  }

  int fd_;
  bool connected_ = false;
  std::string buffer_;
};

class MetricsHttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rows_ = registry_.GetCounter("rows_total", "Rows.", {{"datasource", "wiki"}});
    StartServer({});
  }

  void StartServer(MetricsHttpServerOptions options) {
    server_.reset();
    options.listen = "127.0.0.1:0";
    options.registry = &registry_;
    auto server = MetricsHttpServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
  }

  Registry registry_;
  Counter* rows_;
  std::unique_ptr<MetricsHttpServer> server_;
};

TEST_F(MetricsHttpServerTest, ScrapesMetricsOverKeepAlive) {
  rows_->Increment(5);
  Client client(server_->port());
  ASSERT_TRUE(client.connected());
  client.Send("GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
  Client::Response r = client.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.body, registry_.Render());
  EXPECT_TRUE(absl::StrContains(r.body, "rows_total{datasource=\"wiki\"} 5\n")) << r.body;

  // Same connection, the new value.
  rows_->Increment();
  client.Send("GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
  r = client.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(absl::StrContains(r.body, "rows_total{datasource=\"wiki\"} 6\n")) << r.body;
}

TEST_F(MetricsHttpServerTest, RequestArrivingByteByByte) {
  Client client(server_->port());
  std::string request = "GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n";
  for (char c : request) {
    client.Send(std::string(1, c));
    absl::SleepFor(absl::Milliseconds(1));
  }
  Client::Response r = client.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
}

TEST_F(MetricsHttpServerTest, PipelinedRequestsAnsweredInOrder) {
  Client client(server_->port());
  client.Send(
      "GET /healthz HTTP/1.1\r\n\r\n"
      "GET /nope HTTP/1.1\r\n\r\n"
      "HEAD /metrics HTTP/1.1\r\n\r\n"
      "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(client.Read().status, 200);
  EXPECT_EQ(client.Read().status, 404);
  Client::Response head = client.Read(/*head_only=*/true);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.headers["content-length"], std::to_string(registry_.Render().size()));
  Client::Response last = client.Read();
  EXPECT_EQ(last.status, 200);
  EXPECT_EQ(last.headers["connection"], "close");
  EXPECT_TRUE(absl::StrContains(last.body, "rows_total")) << last.body;
  EXPECT_TRUE(client.ClosedByServer());
}

TEST_F(MetricsHttpServerTest, ConnectionCloseAndHttp10) {
  {
    Client client(server_->port());
    client.Send("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(client.Read().status, 200);
    EXPECT_TRUE(client.ClosedByServer());
  }
  {
    Client client(server_->port());
    client.Send("GET /metrics HTTP/1.0\r\n\r\n");
    EXPECT_EQ(client.Read().status, 200);
    EXPECT_TRUE(client.ClosedByServer());
  }
  {
    Client client(server_->port());
    client.Send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    Client::Response r = client.Read();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.headers["connection"], "keep-alive");
    client.Send("GET /healthz HTTP/1.0\r\n\r\n");
    EXPECT_EQ(client.Read().status, 200);
    EXPECT_TRUE(client.ClosedByServer());
  }
}

TEST_F(MetricsHttpServerTest, ErrorsAndMethods) {
  Client client(server_->port());
  client.Send("GET /other HTTP/1.1\r\n\r\n");
  EXPECT_EQ(client.Read().status, 404);
  client.Send("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  Client::Response r = client.Read();
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "GET, HEAD");
  // Still usable after 404 and 405.
  client.Send("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(client.Read().status, 200);
  // Garbage: 400 and the connection is closed.
  client.Send("NOT HTTP AT ALL\r\n\r\n");
  r = client.Read();
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_TRUE(client.ClosedByServer());
}

TEST_F(MetricsHttpServerTest, OversizedRequestIsRefused) {
  MetricsHttpServerOptions options;
  options.max_request_bytes = 1024;
  StartServer(options);
  Client client(server_->port());
  client.Send("GET /metrics HTTP/1.1\r\nX-Filler: " + std::string(4000, 'x'));
  Client::Response r = client.Read();
  EXPECT_EQ(r.status, 431);
  EXPECT_TRUE(client.ClosedByServer());
}

TEST_F(MetricsHttpServerTest, HealthCheckFailureIs503) {
  std::atomic<bool> healthy{true};
  MetricsHttpServerOptions options;
  options.health = [&]() -> absl::Status {
    if (healthy) return absl::OkStatus();
    return absl::UnavailableError("metadata store is closed");
  };
  StartServer(options);
  Client client(server_->port());
  client.Send("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(client.Read().status, 200);
  healthy = false;
  client.Send("GET /healthz HTTP/1.1\r\n\r\n");
  Client::Response r = client.Read();
  EXPECT_EQ(r.status, 503);
  EXPECT_TRUE(absl::StrContains(r.body, "metadata store is closed")) << r.body;
}

TEST_F(MetricsHttpServerTest, EverythingButLivenessNeedsTheCredential) {
  MetricsHttpServerOptions options;
  std::vector<std::string> seen;
  options.authorize = [&seen](const std::string& authorization) -> absl::Status {
    seen.push_back(authorization);
    if (authorization == "Bearer reader-token") return absl::OkStatus();
    if (authorization == "Bearer worker-token") {
      return absl::PermissionDeniedError("principal token:w0 (role worker) may not read metrics");
    }
    return absl::UnauthenticatedError("authentication required");
  };
  StartServer(std::move(options));
  Client client(server_->port());
  ASSERT_TRUE(client.connected());
  // Liveness: no credential needed, none asked for.
  client.Send("GET /healthz HTTP/1.1\r\n\r\n");
  Client::Response r = client.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(seen.empty());
  // No credential, an unknown one: 401 with the scheme to use.
  for (const std::string& header : {std::string(), std::string("Authorization: Bearer nope\r\n"),
                                    std::string("Authorization: Basic dXNlcjpwYXNz\r\n")}) {
    client.Send("GET /metrics HTTP/1.1\r\n" + header + "\r\n");
    r = client.Read();
    EXPECT_EQ(r.status, 401) << header;
    EXPECT_EQ(r.headers["www-authenticate"], "Bearer") << header;
    EXPECT_FALSE(absl::StrContains(r.body, "rows_total")) << r.body;
  }
  // HEAD and unknown paths too: nothing is told without a credential.
  client.Send("HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(client.Read(/*head_only=*/true).status, 401);
  client.Send("GET /elsewhere HTTP/1.1\r\n\r\n");
  EXPECT_EQ(client.Read().status, 401);
  // Authenticated, without the role.
  client.Send("GET /metrics HTTP/1.1\r\nAuthorization: Bearer worker-token\r\n\r\n");
  r = client.Read();
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.headers.count("www-authenticate"), 0u);
  EXPECT_TRUE(absl::StrContains(r.body, "may not read metrics")) << r.body;
  // The role: the scrape, on the same connection.
  client.Send("GET /metrics HTTP/1.1\r\nAuthorization: Bearer reader-token\r\n\r\n");
  r = client.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, registry_.Render());
  client.Send("GET /elsewhere HTTP/1.1\r\nAuthorization: Bearer reader-token\r\n\r\n");
  EXPECT_EQ(client.Read().status, 404);
  // The check saw the header as sent.
  EXPECT_EQ(seen[1], "Bearer nope");
}

TEST_F(MetricsHttpServerTest, IdleConnectionsAreClosed) {
  MetricsHttpServerOptions options;
  options.idle_timeout = absl::Milliseconds(200);
  StartServer(options);
  Client client(server_->port());
  client.Send("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(client.Read().status, 200);
  // Nothing more is sent; the server closes within the (5 s) receive timeout.
  EXPECT_TRUE(client.ClosedByServer());
}

TEST_F(MetricsHttpServerTest, ANewConnectionBeyondTheLimitClosesTheQuietest) {
  MetricsHttpServerOptions options;
  options.max_connections = 1;
  StartServer(options);
  Client first(server_->port());
  first.Send("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(first.Read().status, 200);
  // The first connection stays open (keep-alive) but quiet: the second takes
  // its place.
  Client second(server_->port());
  second.Send("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(second.Read().status, 200);
  EXPECT_TRUE(first.ClosedByServer());
}

// A few slow connections used to keep /healthz out until the idle timeout
// (30 s), so liveness probes failed.
TEST_F(MetricsHttpServerTest, SlowClientsCannotKeepALivenessProbeOut) {
  MetricsHttpServerOptions options;
  options.max_connections = 4;
  StartServer(options);
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 4; ++i) {
    slow.push_back(std::make_unique<Client>(server_->port()));
    slow.back()->Send("GET /heal");
  }
  absl::SleepFor(absl::Milliseconds(50));  // the server has accepted them
  Client probe(server_->port());
  probe.Send("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(probe.Read().status, 200);  // within the client's 5 s timeout
}

TEST_F(MetricsHttpServerTest, ARequestDrippingInPastItsDeadlineIsClosed) {
  MetricsHttpServerOptions options;
  options.request_timeout = absl::Milliseconds(300);
  StartServer(options);
  Client client(server_->port());
  const std::string request = "GET /healthz HTTP/1.1\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
  bool closed = false;
  // One byte every 50 ms keeps the connection active, never complete in time.
  for (size_t i = 0; i < request.size() && !closed; ++i) {
    if (send(client.fd(), &request[i], 1, MSG_NOSIGNAL) != 1) closed = true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(closed || client.ClosedByServer());
}

TEST_F(MetricsHttpServerTest, ShutdownWithOpenConnections) {
  Client idle(server_->port());
  Client half(server_->port());
  half.Send("GET /met");
  absl::SleepFor(absl::Milliseconds(20));
  server_->Shutdown();
  server_->Shutdown();  // idempotent
  EXPECT_TRUE(idle.ClosedByServer());
  EXPECT_TRUE(half.ClosedByServer());
}

TEST(MetricsHttpServerStart, BadOptions) {
  Registry registry;
  for (const char* listen :
       {"", "nocolon", "host:", "host:x", "host:70000", "[::1]9090", "a:b:c"}) {
    auto server = MetricsHttpServer::Start({.listen = listen, .registry = &registry});
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << listen;
    EXPECT_TRUE(absl::StrContains(server.status().message(), "metrics listen address"))
        << server.status();
  }
}

// Without a registry (a listener for routes only) /metrics is not served.
TEST(MetricsHttpServerStart, WithoutARegistryMetricsIsNotServed) {
  auto server = MetricsHttpServer::Start({.listen = "127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  Client client((*server)->port());
  ASSERT_TRUE(client.connected());
  client.Send("GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
  EXPECT_EQ(client.Read().status, 404);
  client.Send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n");
  EXPECT_EQ(client.Read().status, 200);
}

TEST(MetricsHttpServerStart, StartIfListening) {
  Registry registry;
  auto off = MetricsHttpServer::StartIfListening("", &registry);
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(*off, nullptr);
  auto on = MetricsHttpServer::StartIfListening("127.0.0.1:0", &registry);
  ASSERT_TRUE(on.ok()) << on.status();
  ASSERT_NE(*on, nullptr);
  EXPECT_GT((*on)->port(), 0);
  EXPECT_EQ(MetricsHttpServer::StartIfListening("bad", &registry).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MetricsHttpServerStart, PortInUse) {
  Registry registry;
  auto first = MetricsHttpServer::Start({.listen = "127.0.0.1:0", .registry = &registry});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = MetricsHttpServer::Start(
      {.listen = "127.0.0.1:" + std::to_string((*first)->port()), .registry = &registry});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(second.status().message(), "in use")) << second.status();
}

TEST(MetricsHttpServerStart, AllInterfacesAndIpv6Loopback) {
  Registry registry;
  auto any = MetricsHttpServer::Start({.listen = ":0", .registry = &registry});
  ASSERT_TRUE(any.ok()) << any.status();
  Client client((*any)->port());  // reachable on 127.0.0.1
  ASSERT_TRUE(client.connected());
  client.Send("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(client.Read().status, 200);
  auto v6 = MetricsHttpServer::Start({.listen = "[::1]:0", .registry = &registry});
  if (!v6.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << v6.status();
  EXPECT_GT((*v6)->port(), 0);
}

}  // namespace
}  // namespace metrics
}  // namespace sluice
