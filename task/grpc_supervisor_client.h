// SupervisorClient over a gRPC channel to sluice.v1.SupervisorService. Only
// the process wiring (worker_server, main, benchmarks) depends on this; the
// task core sees the plain interface in task/supervisor_client.h.
//
// Thread-safe.
#ifndef SLUICE_TASK_GRPC_SUPERVISOR_CLIENT_H_
#define SLUICE_TASK_GRPC_SUPERVISOR_CLIENT_H_

#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/auth/identity.h"
#include "task/supervisor_client.h"

namespace sluice::task {

struct GrpcSupervisorClientOptions {
  // host:port of the supervisor, or a comma-separated list of the supervisors
  // that elect a leader among them (--leader_election). With several, a call
  // answered UNAVAILABLE (a standby, or a supervisor that is down) goes to
  // the leader the answer names (trailing metadata sluice-leader-address,
  // when it is one of the list) or else to the next address, within the
  // call's deadline; later calls start at the last one that answered. In
  // Kubernetes one Service address (readiness-gated to the leader) is enough.
  std::string address;
  // Null: plaintext.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // The worker's bearer token, sent on every call (empty: none).
  auth::ClientAuth auth;
  // Deadline of every call but PublishSegments.
  absl::Duration call_timeout = absl::Seconds(10);
  // PublishSegments checks deep storage and commits a transaction.
  absl::Duration publish_timeout = absl::Seconds(60);
};

std::unique_ptr<SupervisorClient> NewGrpcSupervisorClient(GrpcSupervisorClientOptions options);

}  // namespace sluice::task

#endif  // SLUICE_TASK_GRPC_SUPERVISOR_CLIENT_H_
