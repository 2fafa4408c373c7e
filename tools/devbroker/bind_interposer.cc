// An interposer over libc's bind(): see fixed_ports.h. This object must be
// linked into the executable (the BUILD target is alwayslink) so that the
// dynamic linker resolves librdkafka's bind() calls to it.
#include "tools/devbroker/bind_interposer.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace sluice {
namespace devbroker {
namespace internal {
namespace {

using BindFn = int (*)(int, const struct sockaddr*, socklen_t);

BindFn LibcBind() {
  // dlsym is thread-safe; a static initializer guarded by the compiler.
  static const BindFn fn = reinterpret_cast<BindFn>(dlsym(RTLD_NEXT, "bind"));
  return fn;
}

}  // namespace

BindRewrite& GlobalBindRewrite() {
  static BindRewrite* rewrite = new BindRewrite();  // Never destroyed.
  return *rewrite;
}

int RealBind(int fd, const sockaddr* addr, socklen_t len) {
  BindFn fn = LibcBind();
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return fn(fd, addr, len);
}

}  // namespace internal
}  // namespace devbroker
}  // namespace sluice

extern "C" int bind(int fd, const struct sockaddr* addr, socklen_t len) {
  using sluice::devbroker::internal::BindRewrite;
  using sluice::devbroker::internal::GlobalBindRewrite;
  BindRewrite& rewrite = GlobalBindRewrite();
  if (rewrite.armed.load(std::memory_order_acquire) && addr != nullptr &&
      addr->sa_family == AF_INET && len >= sizeof(sockaddr_in) &&
      pthread_equal(rewrite.owner, pthread_self())) {
    sockaddr_in sin;
    memcpy(&sin, addr, sizeof(sin));
    if (sin.sin_port == 0 && rewrite.next_port <= rewrite.last_port) {
      sin.sin_port = htons(static_cast<uint16_t>(rewrite.next_port++));
      rewrite.rewritten.fetch_add(1, std::memory_order_relaxed);
      return sluice::devbroker::internal::RealBind(fd, reinterpret_cast<const sockaddr*>(&sin),
                                                   sizeof(sin));
    }
  }
  return sluice::devbroker::internal::RealBind(fd, addr, len);
}
