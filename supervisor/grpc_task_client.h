// The gRPC implementation of TaskClient (task_client.h). Only the wiring
// (supervisor_server, test harnesses) depends on it; the core sees the
// interface.
#ifndef SLUICE_SUPERVISOR_GRPC_TASK_CLIENT_H_
#define SLUICE_SUPERVISOR_GRPC_TASK_CLIENT_H_

#include <grpcpp/security/credentials.h>

#include <memory>

#include "common/auth/identity.h"
#include "supervisor/task_client.h"

namespace sluice::supervisor {

// Channels are cached per address and use `credentials` (null: plaintext),
// e.g. tls::MakeChannelCredentials. With a bearer token in `auth` (the
// supervisor's key), every call presents the token derived from it for the
// worker registered at the address (options.worker_at; auth/worker_token.h):
// no worker gets a token another worker accepts.
std::unique_ptr<TaskClient> NewGrpcTaskClient(
    ChatOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr,
    auth::ClientAuth auth = {});

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_GRPC_TASK_CLIENT_H_
