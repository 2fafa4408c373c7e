#include "common/service_start.h"

#include <glog/logging.h>
#include <sys/stat.h>

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/auth/grpc_auth.h"
#include "common/fault_injection.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> StartServiceBasics(
    absl::string_view component, const std::string& fault_points,
    const std::string& metrics_listen, metrics::Registry* registry,
    const auth::AuthOptions& auth, metrics::HttpRoutes* routes) {
  ::umask(077);
  if (absl::Status faults = ConfigureFaultPoints(fault_points); !faults.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--fault_points: ", faults.message()));
  }
  std::function<absl::Status(const std::string&)> authorize;
  if (!metrics_listen.empty() && !auth.insecure_no_auth) {
    // The same tokens and policy as the gRPC server's. Plain HTTP carries no
    // client certificate: only bearer tokens get past this check.
    absl::StatusOr<std::unique_ptr<auth::Authorizer>> created = auth::Authorizer::Create(auth, {});
    if (!created.ok()) return created.status();
    if (auth.tokens_file.empty()) {
      LOG(WARNING) << component << " --auth_tokens_file is not set: only /healthz of the metrics "
                   << "endpoint answers (scrapes need a bearer token with the reader role)";
    }
    std::shared_ptr<const auth::Authorizer> authorizer = *std::move(created);
    authorize = [authorizer](const std::string& authorization) -> absl::Status {
      auth::CallIdentity identity;
      identity.authorization = authorization;
      return authorizer->AuthorizeRoles(identity, MetricsRoles(), "the metrics endpoint")
          .status();
    };
  }
  absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> http =
      metrics::MetricsHttpServer::StartIfListening(metrics_listen, registry, std::move(authorize),
                                                   routes);
  if (!http.ok()) {
    return absl::Status(http.status().code(),
                        absl::StrCat("cannot serve metrics: ", http.status().message()));
  }
  if (*http != nullptr) LOG(INFO) << component << " metrics on port " << (*http)->port();
  return http;
}

absl::StatusOr<SecurityOptions> LoadSecurityOptions(const SecurityFlags& flags) {
  SecurityOptions settings;
  settings.auth.tokens_file = flags.auth_tokens_file;
  settings.auth.policy_file = flags.auth_policy_file;
  settings.auth.insecure_no_auth = flags.insecure_no_auth;
  if (!flags.auth_token_file.empty()) {
    absl::StatusOr<std::string> token = auth::ReadTokenFile(flags.auth_token_file);
    if (!token.ok()) {
      return absl::Status(token.status().code(),
                          absl::StrCat("--auth_token_file: ", token.status().message()));
    }
    settings.client_auth.bearer_token = *std::move(token);
  }
  settings.kafka_policy.files_dir = flags.kafka_files_dir;
  for (absl::string_view name :
       absl::StrSplit(flags.kafka_denied_properties, ',', absl::SkipWhitespace())) {
    settings.kafka_policy.denied.insert(std::string(name));
  }
  settings.kafka_policy.allow_oidc_token_endpoint = flags.kafka_allow_oidc_token_endpoint;
  if (!flags.kafka_secret_env_prefix.empty()) {
    settings.kafka_policy.secret_env_prefix = flags.kafka_secret_env_prefix;
  }
  if (!flags.kafka_secret_destinations_file.empty()) {
    absl::StatusOr<kafka::SecretDestinations> destinations =
        kafka::SecretDestinations::Load(flags.kafka_secret_destinations_file);
    if (!destinations.ok()) {
      return absl::Status(destinations.status().code(),
                          absl::StrCat("--kafka_secret_destinations_file: ",
                                       destinations.status().message()));
    }
    settings.kafka_policy.secret_destinations =
        std::make_shared<const kafka::SecretDestinations>(*std::move(destinations));
  }
  return settings;
}

}  // namespace sluice
