// Ports for processes that must keep their address across restarts.
//
// The kernel hands out ephemeral ports (the range in
// /proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default) both to
// bind(port 0) and to every outgoing connection. A port picked from that range
// and left unbound until a process is restarted can meanwhile become the local
// port of some client connection (Kafka clients open many), and the restart
// fails with "address in use". These helpers pick ports *below* the ephemeral
// range instead, which the kernel never assigns on its own, and check that
// each is free when picked.
//
//   SLUICE_ASSIGN_OR_RETURN(std::vector<int> ports,
//   cluster::PickStablePorts(3)); SLUICE_ASSIGN_OR_RETURN(int first,
//   cluster::PickStablePortRun(2));  // first, first + 1
#ifndef SLUICE_TOOLS_CLUSTER_FREE_PORTS_H_
#define SLUICE_TOOLS_CLUSTER_FREE_PORTS_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {
namespace cluster {

// [low, high) of the ports the kernel never picks by itself: from 10000 up to
// the start of the ephemeral range (read from /proc; 32768 if unreadable).
std::pair<int, int> StablePortRange();

// True when nothing is bound to 127.0.0.1:`port` (checked by binding it).
bool PortIsFree(int port);

// `count` distinct ports of StablePortRange() that were free when asked,
// chosen at random (so parallel test runs rarely collide). UNAVAILABLE when
// no such ports are found.
absl::StatusOr<std::vector<int>> PickStablePorts(int count);

// The first of `count` consecutive free ports of StablePortRange().
absl::StatusOr<int> PickStablePortRun(int count);

}  // namespace cluster
}  // namespace sluice

#endif  // SLUICE_TOOLS_CLUSTER_FREE_PORTS_H_
