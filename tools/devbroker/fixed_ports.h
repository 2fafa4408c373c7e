// Fixed listen ports for librdkafka's mock brokers.
//
// rd_kafka_mock_cluster_new() binds every broker to 127.0.0.1:0 and has no
// API to choose ports. While a FixedPortScope is alive, the bind() of this
// executable (an interposer over libc's, see bind_interposer.cc) turns the
// next `count` binds of an IPv4 socket to port 0 *on the thread that created
// the scope* into binds to first_port, first_port + 1, ... All other binds
// (other threads, other ports, IPv6) go straight to libc.
//
// librdkafka creates brokers 1..N in order in the calling thread, so broker i
// gets first_port + i - 1. Whether the interposer took effect is visible in
// the ports librdkafka reports afterwards (DevBroker checks them). A bind failure inside
// rd_kafka_mock_cluster_new aborts the process, so check the ports with CheckPortsFree() first
// (there is still a window in which another process can take one).
#ifndef SLUICE_TOOLS_DEVBROKER_FIXED_PORTS_H_
#define SLUICE_TOOLS_DEVBROKER_FIXED_PORTS_H_

#include "absl/status/status.h"

namespace sluice {
namespace devbroker {

// OK when each of first_port .. first_port+count-1 can be bound on 127.0.0.1
// (with SO_REUSEADDR, as librdkafka does). INVALID_ARGUMENT for ports out of
// 1..65535; UNAVAILABLE naming the first port in use.
absl::Status CheckPortsFree(int first_port, int count);

// Arms the interposer for the current thread. One scope at a time in the
// process: a second one (on another thread) waits until the first is gone.
// Keep it only around rd_kafka_mock_cluster_new(). Not copyable or movable.
class FixedPortScope {
 public:
  FixedPortScope(int first_port, int count);
  ~FixedPortScope();
  FixedPortScope(const FixedPortScope&) = delete;
  FixedPortScope& operator=(const FixedPortScope&) = delete;

  // How many binds were rewritten so far.
  int rewritten() const;
};

}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_FIXED_PORTS_H_
