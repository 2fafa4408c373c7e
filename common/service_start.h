// What each sluice binary does first once its flags are parsed, the same way
// in every main: arm the fault points given by --fault_points, and serve the
// Prometheus endpoint when --metrics_listen is set. No flags here: the values
// come in as arguments (common/service_flags.h reads the shared flags and
// calls this for both mains).
#ifndef SLUICE_COMMON_SERVICE_START_H_
#define SLUICE_COMMON_SERVICE_START_H_

#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/auth/authorizer.h"
#include "common/kafka/property_policy.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"

namespace sluice {

// Sets the umask to 077 first (data dirs 0700, metadata and segment files
// 0600: nothing a sluice process writes is readable by other users), then arms
// `fault_points` (INVALID_ARGUMENT naming the bad entry) and, when
// `metrics_listen` is not empty, starts the metrics endpoint on `registry`
// (which must outlive it) and logs its port under `component` ("[worker]").
// Returns the endpoint, or null when metrics are off.
//
// The endpoint checks the server's own credentials (`auth`, as the gRPC
// server gets them): unless auth.insecure_no_auth, every path but /healthz
// needs "Authorization: Bearer <token>" for a principal with the reader or
// admin role (MetricsRoles()); errors of the token and policy files as
// Authorizer::Create gives them. `routes` (may be null; must outlive the
// endpoint): more paths the endpoint serves under the same check
// (metrics/http_routes.h), e.g. the supervisor's Iceberg REST catalog.
absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> StartServiceBasics(
    absl::string_view component, const std::string& fault_points,
    const std::string& metrics_listen, metrics::Registry* registry,
    const auth::AuthOptions& auth, metrics::HttpRoutes* routes = nullptr);

// The roles that may read the HTTP endpoint's /metrics (and any path but
// /healthz) when authentication is on.
inline const std::set<v1::Role>& MetricsRoles() {
  static const std::set<v1::Role>* roles = new std::set<v1::Role>{v1::ROLE_READER, v1::ROLE_ADMIN};
  return *roles;
}

// The security flags both binaries take, as given.
struct SecurityFlags {
  std::string auth_tokens_file;
  std::string auth_policy_file;
  bool insecure_no_auth = false;
  // This process's own bearer token, for the calls it makes.
  std::string auth_token_file;
  std::string kafka_files_dir;
  // Comma-separated property names.
  std::string kafka_denied_properties;
  bool kafka_allow_oidc_token_endpoint = false;
  std::string kafka_secret_env_prefix;
  // Where each secret reference may be sent (kafka/secret_destinations.h);
  // empty: nowhere, so specs cannot use references.
  std::string kafka_secret_destinations_file;
};

struct SecurityOptions {
  auth::AuthOptions auth;
  auth::ClientAuth client_auth;
  kafka::PropertyPolicyOptions kafka_policy;
};

// Reads the token file and builds the settings; errors name the flag.
absl::StatusOr<SecurityOptions> LoadSecurityOptions(const SecurityFlags& flags);

}  // namespace sluice

#endif  // SLUICE_COMMON_SERVICE_START_H_
