// Internal state shared by fixed_ports.cc and the bind() interposer
// (bind_interposer.cc). Use FixedPortScope, not this.
#ifndef SLUICE_TOOLS_DEVBROKER_BIND_INTERPOSER_H_
#define SLUICE_TOOLS_DEVBROKER_BIND_INTERPOSER_H_

#include <pthread.h>
#include <sys/socket.h>

#include <atomic>

namespace sluice {
namespace devbroker {
namespace internal {

struct BindRewrite {
  // Fast path: false almost always.
  std::atomic<bool> armed{false};
  // Set before `armed` becomes true, read only by the owner thread after.
  pthread_t owner{};
  int next_port = 0;
  int last_port = 0;
  std::atomic<int> rewritten{0};
};

BindRewrite& GlobalBindRewrite();

// The bind() the interposer forwards to (libc's), for probing without
// rewriting.
int RealBind(int fd, const sockaddr* addr, socklen_t len);

}  // namespace internal
}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_BIND_INTERPOSER_H_
