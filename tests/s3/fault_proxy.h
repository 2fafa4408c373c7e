// A TCP proxy on loopback between an S3 client and the S3 server, which
// misbehaves on command, one connection at a time. The S3 client opens a new
// connection per request, so a fault queued here hits one request:
//
//   FaultProxy proxy(server_port);          // listens on proxy.port()
//   proxy.Queue({FaultKind::kStatus, 503}); // the next request gets a 503
//   proxy.Queue({FaultKind::kDrop, 0, absl::ZeroDuration(), 200000});
//
// Connections with no fault queued pass through untouched.
#ifndef SLUICE_TESTS_S3_FAULT_PROXY_H_
#define SLUICE_TESTS_S3_FAULT_PROXY_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sluice::s3::testing {

enum class FaultKind {
  // Forward untouched (to let a given request through before later faults).
  kPass,
  // Read the request head, answer `http_status` (an S3 error document with
  // SlowDown for 503, InternalError otherwise) and close; the server never
  // sees the request.
  kStatus,
  // Forward, but wait `delay` before passing the server's answer on (a slow
  // server).
  kDelay,
  // Forward `after_bytes` of the request, then close both sides: the server
  // went away mid-request (the client sees a reset or an empty answer).
  kDrop,
  // Accept and close at once (a server that is down behind a balancer).
  kRefuse,
};

struct Fault {
  FaultKind kind = FaultKind::kStatus;
  int http_status = 503;
  absl::Duration delay = absl::ZeroDuration();
  int64_t after_bytes = 0;
};

class FaultProxy {
 public:
  // Listens on a free loopback port and forwards to 127.0.0.1:target_port.
  static absl::StatusOr<std::unique_ptr<FaultProxy>> Start(int target_port);
  ~FaultProxy();

  int port() const { return port_; }
  // http://127.0.0.1:<port>
  std::string endpoint() const;

  // Faults for the next connections, in order.
  void Queue(const Fault& fault, int times = 1);
  // Every connection from now on gets `fault` (until ClearFaults).
  void SetPersistentFault(const Fault& fault);
  void ClearFaults();

  // Connections accepted so far.
  int connections() const { return connections_.load(); }

 private:
  FaultProxy() = default;
  void AcceptLoop();
  void Serve(int client_fd, Fault fault, bool faulty);

  int listen_fd_ = -1;
  int port_ = 0;
  int target_port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread acceptor_;

  absl::Mutex mu_;
  std::deque<Fault> queued_ ABSL_GUARDED_BY(mu_);
  bool persistent_ ABSL_GUARDED_BY(mu_) = false;
  Fault persistent_fault_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::s3::testing

#endif  // SLUICE_TESTS_S3_FAULT_PROXY_H_
