// Starting a gRPC server the way every sluice binary does: bound address
// (port 0 picks a free port, read back after binding), the standard health
// service (grpc.health.v1, NOT_SERVING until SetServing(true)), server
// reflection (grpc.reflection.v1alpha, for grpcurl), and bounds that hold
// before any caller is authenticated (handlers authorize, so gRPC receives
// and decodes a request before its caller is known):
//   - a request message is at most max_request_bytes (RESOURCE_EXHAUSTED
//     beyond, refused before it is decoded); answers may be larger;
//   - at most max_threads threads serve calls; a call that finds them all
//     busy (e.g. held by open reflection or health-watch streams) is refused
//     with RESOURCE_EXHAUSTED instead of starting another thread;
//   - at most max_streams_per_connection calls open on one connection.
#ifndef SLUICE_COMMON_GRPC_SERVER_H_
#define SLUICE_COMMON_GRPC_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/metrics/registry.h"

namespace sluice {

struct GrpcServerOptions {
  // host:port; port 0 picks a free one.
  std::string listen_address = "127.0.0.1:0";
  // Null: plaintext.
  std::shared_ptr<grpc::ServerCredentials> credentials;
  // Registered in this order; not owned (they must outlive the server).
  std::vector<grpc::Service*> services;
  // The largest request message accepted. The contract's requests are far
  // smaller (strings of at most 64 KiB, lists bounded by common/request_limits.h
  // and proto/sluice/v1/limits.proto).
  int max_request_bytes = 4 << 20;
  // The largest answer sent (segment listings can be long).
  int max_response_bytes = 64 << 20;
  // Threads serving calls, and calls open at once on one connection.
  int max_threads = 128;
  int max_streams_per_connection = 64;
  // Not null: every RPC is counted in it (sluice_grpc_server_handled_total,
  // sluice_grpc_server_handling_seconds). Not owned; must outlive the server.
  metrics::Registry* metrics = nullptr;
};

class GrpcServer {
 public:
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(GrpcServerOptions options);
  ~GrpcServer();

  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  int port() const { return port_; }
  // host:port as bound (the host of listen_address, the actual port).
  const std::string& address() const { return address_; }

  // Health status of the server and of every registered service.
  void SetServing(bool serving);
  // Health status of one service (e.g. "sluice.v1.SupervisorService"), apart
  // from the server's (""): a standby supervisor is alive ("" SERVING) but
  // not ready (its service NOT_SERVING), so a readiness probe naming the
  // service routes traffic to the leader only.
  void SetServiceServing(const std::string& service, bool serving);

  // Stops accepting calls, waits up to `grace` for running calls, then
  // cancels the rest. Idempotent.
  void Shutdown(absl::Duration grace);

  grpc::Server* server() { return server_.get(); }

 private:
  GrpcServer(std::unique_ptr<grpc::Server> server, int port, std::string address);

  std::unique_ptr<grpc::Server> server_;
  int port_;
  std::string address_;
  bool shut_down_ = false;
};

// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts
// afterwards. Call first thing in main, before any thread exists.
void BlockShutdownSignals();

// Waits for SIGTERM or SIGINT (blocked by BlockShutdownSignals) and returns
// the signal number.
int WaitForShutdownSignal();

}  // namespace sluice

#endif  // SLUICE_COMMON_GRPC_SERVER_H_
