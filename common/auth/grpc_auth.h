// The gRPC side of authentication: reading a call's identity from its
// metadata and TLS peer, the check every handler makes first, and client
// channels that present a bearer token on every call.
#ifndef SLUICE_COMMON_AUTH_GRPC_AUTH_H_
#define SLUICE_COMMON_AUTH_GRPC_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/auth/authorizer.h"

namespace sluice::auth {

// The bearer token and the verified client-certificate principal of a call.
CallIdentity IdentityOf(const grpc::ServerContext& context);

// Authorizes a call to `method` ("/sluice.v1.SupervisorService/ListSegments").
// On refusal the status to return (UNAUTHENTICATED / PERMISSION_DENIED), and
// a warning is logged with the principal and peer (never the token).
grpc::Status AuthorizeCall(const Authorizer& authorizer, const grpc::ServerContext& context,
                           absl::string_view method, Caller* caller);

// The first line of every handler: declares `caller` and returns the refusal
// from the handler. `path` is "/sluice.v1.<Service>/<Method>".
#define SLUICE_AUTHORIZE_CALL(authorizer, context, path)                         \
  ::sluice::auth::Caller caller;                                                 \
  if (::grpc::Status sluice_auth_denied =                                        \
          ::sluice::auth::AuthorizeCall(authorizer, *(context), path, &caller);  \
      !sluice_auth_denied.ok())                                                  \
  return sluice_auth_denied

// The token in a file (surrounding whitespace trimmed). INVALID_ARGUMENT for
// an empty file; errors of reading it name the path, never the contents.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// A channel whose every call carries `auth`.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& target,
                                          std::shared_ptr<grpc::ChannelCredentials> credentials,
                                          const ClientAuth& auth,
                                          const grpc::ChannelArguments& args = {});

}  // namespace sluice::auth

#endif  // SLUICE_COMMON_AUTH_GRPC_AUTH_H_
