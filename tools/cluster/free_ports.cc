#include "tools/cluster/free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace cluster {
namespace {

constexpr int kLowestPort = 10000;
constexpr int kAttempts = 200;

std::mt19937& Rng() {
  static thread_local std::mt19937 rng(std::random_device{}());
  return rng;
}

}  // namespace

std::pair<int, int> StablePortRange() {
  int ephemeral_low = 32768;
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (in >> low >> high && low > kLowestPort + 1000) ephemeral_low = low;
  return {kLowestPort, ephemeral_low};
}

bool PortIsFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sin.sin_port = htons(static_cast<uint16_t>(port));
  // No SO_REUSEADDR: a port in TIME_WAIT would make a server's bind fail too
  // unless it sets the option, so count it as taken.
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)) == 0;
  close(fd);
  return free;
}

absl::StatusOr<std::vector<int>> PickStablePorts(int count) {
  if (count < 0) return absl::InvalidArgumentError("count must be >= 0");
  const auto [low, high] = StablePortRange();
  std::uniform_int_distribution<int> pick(low, high - 1);
  std::set<int> chosen;
  for (int attempt = 0; static_cast<int>(chosen.size()) < count; ++attempt) {
    if (attempt >= kAttempts * count) {
      return absl::UnavailableError(absl::StrCat("found only ", chosen.size(), " of ", count,
                                                 " free ports in [", low, ", ", high, ")"));
    }
    const int port = pick(Rng());
    if (!chosen.count(port) && PortIsFree(port)) chosen.insert(port);
  }
  std::vector<int> ports(chosen.begin(), chosen.end());
  std::shuffle(ports.begin(), ports.end(), Rng());
  return ports;
}

absl::StatusOr<int> PickStablePortRun(int count) {
  if (count < 1) return absl::InvalidArgumentError("count must be >= 1");
  const auto [low, high] = StablePortRange();
  if (high - low < count) return absl::InvalidArgumentError("count exceeds the port range");
  std::uniform_int_distribution<int> pick(low, high - count);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const int first = pick(Rng());
    bool all_free = true;
    for (int i = 0; i < count && all_free; ++i) all_free = PortIsFree(first + i);
    if (all_free) return first;
  }
  return absl::UnavailableError(
      absl::StrCat("no run of ", count, " free ports found in [", low, ", ", high, ")"));
}

}  // namespace cluster
}  // namespace sluice
