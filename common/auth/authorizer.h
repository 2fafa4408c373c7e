// Authentication and role checks for one server, in plain C++: a call's
// presented identity (bearer token, TLS client certificate) -> a principal ->
// its roles from the policy, checked against the method's roles.
//
//   SLUICE_ASSIGN_OR_RETURN(auto authz, Authorizer::Create(options, {v1::SupervisorService::descriptor()}));
//   absl::StatusOr<Caller> caller = authz->Authorize(identity, "/sluice.v1.SupervisorService/ListSegments");
//
// Outcomes: UNAUTHENTICATED (no credential, an unknown or malformed token),
// PERMISSION_DENIED (authenticated, but no grant or no role for the method),
// else the Caller. With insecure_no_auth every call is Caller::Anonymous().
#ifndef SLUICE_COMMON_AUTH_AUTHORIZER_H_
#define SLUICE_COMMON_AUTH_AUTHORIZER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/auth/identity.h"
#include "common/auth/method_roles.h"
#include "common/auth/policy.h"
#include "common/auth/token_store.h"

namespace sluice::auth {

struct AuthOptions {
  // Hashed bearer tokens (token_store.h); empty: tokens are not accepted.
  std::string tokens_file;
  // Principal -> roles (policy.h); required unless insecure_no_auth.
  std::string policy_file;
  // The server verifies client certificates (mutual TLS is configured), so a
  // certificate principal can be trusted.
  bool client_certificates = false;
  // Every caller is Caller::Anonymous(). An explicit choice, for the demo and
  // tests on loopback.
  bool insecure_no_auth = false;
  // A task worker's server: its worker id. A supervisor principal is then
  // accepted only when bound to this worker (a token must be bound; a
  // certificate may be unbound).
  std::string server_worker_id;
};

class Authorizer {
 public:
  // FAILED_PRECONDITION unless authentication is configured (tokens or client
  // certificates, and a policy) or explicitly off, or when a method of
  // `services` has no roles; errors of the files.
  static absl::StatusOr<std::unique_ptr<Authorizer>> Create(
      const AuthOptions& options, const std::vector<std::string>& services);

  absl::StatusOr<Caller> Authorize(const CallIdentity& identity, absl::string_view method) const;

  // The same for what is not a gRPC method (e.g. the HTTP metrics endpoint):
  // the caller needs one of `roles`; `what` names the resource in messages.
  absl::StatusOr<Caller> AuthorizeRoles(const CallIdentity& identity,
                                        const std::set<v1::Role>& roles,
                                        absl::string_view what) const;

  bool enabled() const { return !insecure_; }
  const MethodRoles& methods() const { return methods_; }

 private:
  Authorizer(MethodRoles methods, std::optional<TokenStore> tokens, Policy policy,
             const AuthOptions& options)
      : methods_(std::move(methods)),
        tokens_(std::move(tokens)),
        policy_(std::move(policy)),
        insecure_(options.insecure_no_auth),
        client_certificates_(options.client_certificates),
        server_worker_id_(options.server_worker_id) {}

  // The caller, if it has one of `allowed`; refusals say it may not `action`.
  absl::StatusOr<Caller> Admit(const CallIdentity& identity, const std::set<v1::Role>& allowed,
                               absl::string_view action) const;

  // On a worker's server: PERMISSION_DENIED unless a supervisor principal is
  // bound to this worker (or is an unbound certificate).
  absl::Status CheckSupervisorBinding(const std::string& principal, const Grant& grant) const;

  // The principal of the call (token first), or UNAUTHENTICATED.
  absl::StatusOr<std::string> Authenticate(const CallIdentity& identity) const;

  const MethodRoles methods_;
  const std::optional<TokenStore> tokens_;
  const Policy policy_;
  const bool insecure_;
  const bool client_certificates_;
  const std::string server_worker_id_;
};

// True for a listen address on the loopback interface (127.0.0.0/8, [::1],
// localhost). A server with insecure_no_auth listening elsewhere logs a
// warning at start.
bool IsLoopbackAddress(absl::string_view host_port);

}  // namespace sluice::auth

#endif  // SLUICE_COMMON_AUTH_AUTHORIZER_H_
