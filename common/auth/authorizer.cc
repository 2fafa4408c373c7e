#include "common/auth/authorizer.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace sluice::auth {
namespace {

std::string RoleList(const std::set<v1::Role>& roles) {
  std::vector<std::string> names;
  for (v1::Role role : roles) names.push_back(RoleName(role));
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Authorizer>> Authorizer::Create(
    const AuthOptions& options, const std::vector<std::string>& services) {
  SLUICE_ASSIGN_OR_RETURN(MethodRoles methods, MethodRoles::ForServices(services));
  if (options.insecure_no_auth) {
    return std::unique_ptr<Authorizer>(
        new Authorizer(std::move(methods), std::nullopt, Policy(), options));
  }
  if (options.tokens_file.empty() && !options.client_certificates) {
    return absl::FailedPreconditionError(
        "authentication is not configured: give --auth_tokens_file (bearer tokens) and/or "
        "--tls_ca with --tls_cert/--tls_key (client certificates), with --auth_policy_file; "
        "or run without authentication with --insecure_no_auth (loopback demos and tests only)");
  }
  if (options.policy_file.empty()) {
    return absl::FailedPreconditionError(
        "--auth_policy_file is required with authentication (it maps principals to roles)");
  }
  std::optional<TokenStore> tokens;
  if (!options.tokens_file.empty()) {
    SLUICE_ASSIGN_OR_RETURN(tokens, TokenStore::Load(options.tokens_file));
  }
  SLUICE_ASSIGN_OR_RETURN(Policy policy, Policy::Load(options.policy_file));
  return std::unique_ptr<Authorizer>(
      new Authorizer(std::move(methods), std::move(tokens), std::move(policy), options));
}

absl::StatusOr<std::string> Authorizer::Authenticate(const CallIdentity& identity) const {
  if (!identity.authorization.empty()) {
    absl::string_view value = identity.authorization;
    if (!absl::ConsumePrefix(&value, "Bearer ") && !absl::ConsumePrefix(&value, "bearer ")) {
      return absl::UnauthenticatedError(
          "the authorization metadata is not \"Bearer <token>\"");
    }
    if (!tokens_) {
      return absl::UnauthenticatedError("this server accepts no bearer tokens");
    }
    std::optional<std::string> name = tokens_->Lookup(value);
    if (!name) return absl::UnauthenticatedError("unknown bearer token");
    return absl::StrCat("token:", *name);
  }
  if (client_certificates_ && !identity.certificate_principal.empty()) {
    return absl::StrCat("cert:", identity.certificate_principal);
  }
  return absl::UnauthenticatedError(
      "authentication required: send \"authorization: Bearer <token>\" metadata or a client "
      "certificate");
}

absl::StatusOr<Caller> Authorizer::Authorize(const CallIdentity& identity,
                                             absl::string_view method) const {
  const std::set<v1::Role>* allowed = methods_.Find(method);
  if (allowed == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("method ", method, " is not in this server's role table"));
  }
  return Admit(identity, *allowed, absl::StrCat("call ", method));
}

absl::StatusOr<Caller> Authorizer::AuthorizeRoles(const CallIdentity& identity,
                                                  const std::set<v1::Role>& roles,
                                                  absl::string_view what) const {
  return Admit(identity, roles, absl::StrCat("read ", what));
}

absl::StatusOr<Caller> Authorizer::Admit(const CallIdentity& identity,
                                         const std::set<v1::Role>& allowed,
                                         absl::string_view action) const {
  if (insecure_) return Caller::Anonymous();
  SLUICE_ASSIGN_OR_RETURN(std::string principal, Authenticate(identity));
  const Grant* grant = policy_.Find(principal);
  if (grant == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("principal ", principal, " has no role on this server"));
  }
  for (v1::Role role : grant->roles) {
    if (allowed.count(role)) {
      if (role == v1::ROLE_SUPERVISOR && !server_worker_id_.empty()) {
        SLUICE_RETURN_IF_ERROR(CheckSupervisorBinding(principal, *grant));
      }
      Caller caller;
      caller.principal = std::move(principal);
      caller.roles = grant->roles;
      caller.worker_id = grant->worker_id;
      caller.worker_address_pattern = grant->address_pattern;
      caller.max_capacity = grant->max_capacity;
      caller.authenticated = true;
      return caller;
    }
  }
  return absl::PermissionDeniedError(absl::StrCat("principal ", principal, " (role ",
                                                  RoleList(grant->roles), ") may not ", action,
                                                  "; it needs: ", RoleList(allowed)));
}

absl::Status Authorizer::CheckSupervisorBinding(const std::string& principal,
                                                const Grant& grant) const {
  if (grant.worker_id.empty()) {
    if (absl::StartsWith(principal, "cert:")) return absl::OkStatus();
    return absl::PermissionDeniedError(absl::StrCat(
        "supervisor principal ", principal, " is not bound to a worker; worker ",
        server_worker_id_, " accepts only a supervisor token bound to it (policy line \"",
        principal, " supervisor ", server_worker_id_, "\")"));
  }
  if (grant.worker_id != server_worker_id_) {
    return absl::PermissionDeniedError(absl::StrCat("supervisor principal ", principal,
                                                    " is bound to worker ", grant.worker_id,
                                                    "; this is worker ", server_worker_id_));
  }
  return absl::OkStatus();
}

bool IsLoopbackAddress(absl::string_view host_port) {
  absl::string_view host = host_port;
  const size_t colon = host.rfind(':');
  if (colon != absl::string_view::npos) host = host.substr(0, colon);
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace sluice::auth
