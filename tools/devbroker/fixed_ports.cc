#include "tools/devbroker/fixed_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "glog/logging.h"
#include "tools/devbroker/bind_interposer.h"

namespace sluice {
namespace devbroker {

absl::Status CheckPortsFree(int first_port, int count) {
  if (count < 1 || first_port < 1 || first_port + count - 1 > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ports ", first_port, "..", first_port + count - 1, " are not all within 1..65535"));
  }
  for (int port = first_port; port < first_port + count; ++port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(absl::StrCat("socket(): ", strerror(errno)));
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons(static_cast<uint16_t>(port));
    const int rc = internal::RealBind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin));
    const int err = errno;
    close(fd);
    if (rc != 0) {
      return absl::UnavailableError(
          absl::StrCat("port ", port, " on 127.0.0.1 is not free: ", strerror(err)));
    }
  }
  return absl::OkStatus();
}

namespace {

// Held by the live FixedPortScope: a second scope waits for the first.
absl::Mutex& ScopeMutex() {
  static absl::Mutex* mu = new absl::Mutex();
  return *mu;
}

}  // namespace

FixedPortScope::FixedPortScope(int first_port, int count) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  ScopeMutex().Lock();
  internal::BindRewrite& rewrite = internal::GlobalBindRewrite();
  CHECK(!rewrite.armed.load()) << "FixedPortScope armed twice";
  rewrite.owner = pthread_self();
  rewrite.next_port = first_port;
  rewrite.last_port = first_port + count - 1;
  rewrite.rewritten.store(0);
  rewrite.armed.store(true, std::memory_order_release);
}

FixedPortScope::~FixedPortScope() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  internal::GlobalBindRewrite().armed.store(false, std::memory_order_release);
  ScopeMutex().Unlock();
}

int FixedPortScope::rewritten() const { return internal::GlobalBindRewrite().rewritten.load(); }

}  // namespace devbroker
}  // namespace sluice
