#include "tests/s3/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace sluice::s3::testing {
namespace {

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int ConnectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads until the end of the request head (or EOF / 5 s).
void ReadRequestHead(int fd) {
  std::string head;
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  char buf[4096];
  while (head.find("\r\n\r\n") == std::string::npos && absl::Now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    head.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::Start(int target_port) {
  std::unique_ptr<FaultProxy> proxy(new FaultProxy());
  proxy->target_port_ = target_port;
  proxy->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(proxy->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(proxy->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(proxy->listen_fd_, 64) != 0 ||
      ::getsockname(proxy->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return absl::InternalError(absl::StrCat("fault proxy cannot listen: ", std::strerror(errno)));
  }
  proxy->port_ = ntohs(addr.sin_port);
  proxy->acceptor_ = std::thread([p = proxy.get()] { p->AcceptLoop(); });
  return proxy;
}

FaultProxy::~FaultProxy() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> workers;
  {
    absl::MutexLock lock(&mu_);
    workers.swap(workers_);
  }
  for (std::thread& t : workers) t.join();
}

std::string FaultProxy::endpoint() const { return absl::StrCat("http://127.0.0.1:", port_); }

void FaultProxy::Queue(const Fault& fault, int times) {
  absl::MutexLock lock(&mu_);
  for (int i = 0; i < times; ++i) queued_.push_back(fault);
}

void FaultProxy::SetPersistentFault(const Fault& fault) {
  absl::MutexLock lock(&mu_);
  persistent_ = true;
  persistent_fault_ = fault;
}

void FaultProxy::ClearFaults() {
  absl::MutexLock lock(&mu_);
  persistent_ = false;
  queued_.clear();
}

void FaultProxy::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    ++connections_;
    Fault fault;
    bool faulty = false;
    absl::MutexLock lock(&mu_);
    if (!queued_.empty()) {
      fault = queued_.front();
      queued_.pop_front();
      faulty = true;
    } else if (persistent_) {
      fault = persistent_fault_;
      faulty = true;
    }
    workers_.emplace_back([this, client, fault, faulty] { Serve(client, fault, faulty); });
  }
}

void FaultProxy::Serve(int client, Fault fault, bool faulty) {
  if (faulty && fault.kind == FaultKind::kRefuse) {
    ::close(client);
    return;
  }
  if (faulty && fault.kind == FaultKind::kStatus) {
    ReadRequestHead(client);
    const std::string code = fault.http_status == 503 ? "SlowDown" : "InternalError";
    const std::string body = absl::StrCat(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>", code,
        "</Code><Message>injected by the test's fault proxy</Message></Error>");
    const std::string answer =
        absl::StrCat("HTTP/1.1 ", fault.http_status, " Injected\r\nContent-Type: application/xml\r\n",
                     "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
    WriteAll(client, answer.data(), answer.size());
    ::shutdown(client, SHUT_WR);
    // Let the client read the answer before the close resets the connection.
    char sink[4096];
    pollfd p{client, POLLIN, 0};
    while (::poll(&p, 1, 200) > 0 && ::recv(client, sink, sizeof(sink), 0) > 0) {
    }
    ::close(client);
    return;
  }
  const int server = ConnectLoopback(target_port_);
  if (server < 0) {
    ::close(client);
    return;
  }
  int64_t forwarded_up = 0;
  bool delayed = false;
  char buf[1 << 16];
  bool open = true;
  while (open && !stopping_) {
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    if (::poll(fds, 2, 100) <= 0) continue;
    for (int i = 0; i < 2 && open; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const int from = fds[i].fd;
      const int to = i == 0 ? server : client;
      ssize_t n = ::recv(from, buf, sizeof(buf), 0);
      if (n <= 0) {
        open = false;
        break;
      }
      if (i == 0 && faulty && fault.kind == FaultKind::kDrop &&
          forwarded_up + n >= fault.after_bytes) {
        n = static_cast<ssize_t>(fault.after_bytes - forwarded_up);
        if (n > 0) WriteAll(to, buf, static_cast<size_t>(n));
        open = false;
        break;
      }
      if (i == 1 && faulty && fault.kind == FaultKind::kDelay && !delayed) {
        absl::SleepFor(fault.delay);
        delayed = true;
      }
      if (i == 0) forwarded_up += n;
      if (!WriteAll(to, buf, static_cast<size_t>(n))) open = false;
    }
  }
  ::close(server);
  ::close(client);
}

}  // namespace sluice::s3::testing
