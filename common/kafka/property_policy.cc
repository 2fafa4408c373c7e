#include "common/kafka/property_policy.h"

#include <limits.h>
#include <stdlib.h>

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice::kafka {
namespace {

// Properties that run a command, load code or write files, whatever their value.
constexpr const char* kAlwaysDenied[] = {
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.keytab",
    "sasl.kerberos.principal",
    "sasl.kerberos.service.name",
    "sasl.kerberos.min.time.before.relogin",
    "plugin.library.paths",
    "ssl.engine.location",
    "ssl.engine.id",
    "ssl_engine_callback_data",
    "ssl.providers",
    "ssl.keylog.filename",
    "ssl.ca.certificate.stores",
    "opaque",
    "default_topic_conf",
};

// The SASL mechanisms a spec may name (GSSAPI is refused above).
constexpr const char* kSaslMechanisms[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
                                           "OAUTHBEARER"};

// Properties whose value is a path the client opens.
constexpr const char* kFileProperties[] = {
    "ssl.key.location",      "ssl.certificate.location", "ssl.ca.location",
    "ssl.crl.location",      "ssl.keystore.location",
};

bool IsFileProperty(absl::string_view name) {
  for (const char* p : kFileProperties) {
    if (name == p) return true;
  }
  return absl::EndsWith(name, ".location") || absl::EndsWith(name, ".keytab");
}

std::string Field(absl::string_view name) {
  return absl::StrCat("ioConfig.consumerProperties.\"", name, "\"");
}

absl::Status Refuse(absl::string_view name, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(Field(name), " ", why));
}

// The resolved path if it lies inside files_dir.
absl::StatusOr<std::string> InsideFilesDir(absl::string_view name, absl::string_view path,
                                           const PropertyPolicyOptions& options) {
  if (options.files_dir.empty()) {
    return Refuse(name, "names a file, and this cluster allows none (the operator sets "
                        "--kafka_files_dir to allow files inside one directory)");
  }
  char dir[PATH_MAX];
  if (realpath(options.files_dir.c_str(), dir) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("--kafka_files_dir ", options.files_dir, " cannot be resolved"));
  }
  char resolved[PATH_MAX];
  const std::string wanted(path);
  if (realpath(wanted.c_str(), resolved) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        Field(name), " names ", wanted, ", which does not exist or cannot be resolved"));
  }
  const std::string prefix = absl::StrCat(dir, "/");
  if (!absl::StartsWith(resolved, prefix)) {
    return Refuse(name, absl::StrCat("names ", wanted, ", outside --kafka_files_dir ",
                                     options.files_dir));
  }
  return std::string(resolved);
}

// OK when the operator bound `reference` to every server the connection
// `properties` describe sends to.
absl::Status CheckBoundDestinations(absl::string_view name, absl::string_view reference,
                                    const KafkaProperties& properties,
                                    const PropertyPolicyOptions& options) {
  if (options.secret_destinations == nullptr || !options.secret_destinations->Declares(reference)) {
    return Refuse(name, absl::StrCat("references ", reference,
                                     ", which this cluster's operator has not bound to any Kafka "
                                     "server: a secret reference resolves only towards the "
                                     "servers --kafka_secret_destinations_file lists for it"));
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> destinations,
                          ConnectionDestinations(properties));
  if (destinations.empty()) {
    return Refuse(name, absl::StrCat("references ", reference,
                                     ", but the connection names no bootstrap.servers to check "
                                     "where it would be sent"));
  }
  for (const std::string& server : destinations) {
    if (!options.secret_destinations->Allows(reference, server)) {
      return Refuse(name, absl::StrCat("references ", reference, ", which may not be sent to ",
                                       server, ": --kafka_secret_destinations_file allows it only "
                                       "to ",
                                       absl::StrJoin(options.secret_destinations->ServersOf(
                                                         reference),
                                                     ", ")));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsSecretReference(absl::string_view value) {
  return (absl::StartsWith(value, "${env:") || absl::StartsWith(value, "${file:")) &&
         absl::EndsWith(value, "}");
}

absl::Status CheckProperties(const KafkaProperties& properties,
                             const PropertyPolicyOptions& options) {
  KafkaProperties scratch;
  for (const auto& [name, value] : properties) {
    const std::string lower = absl::AsciiStrToLower(name);
    for (const char* denied : kAlwaysDenied) {
      if (lower == denied) {
        return Refuse(name, "is not allowed in a spec: it can make the process run a command, "
                            "load code or write a file");
      }
    }
    if (options.denied.count(name) || options.denied.count(lower)) {
      return Refuse(name, "is refused by this cluster's operator (--kafka_denied_properties)");
    }
    if (absl::StartsWith(lower, "interceptor") || absl::StrContains(lower, ".interceptor") ||
        absl::EndsWith(lower, "_cb") || absl::StrContains(lower, "callback")) {
      return Refuse(name, "is not allowed in a spec: interceptors and callbacks are code");
    }
    if ((lower == "sasl.mechanisms" || lower == "sasl.mechanism") &&
        absl::StrContains(absl::AsciiStrToUpper(value), "GSSAPI")) {
      return Refuse(name, "GSSAPI (Kerberos) is not supported from a spec: librdkafka builds "
                          "its kinit command line from spec values");
    }
    if (lower == "sasl.mechanisms" || lower == "sasl.mechanism") {
      // librdkafka takes any text here and only refuses it when the client
      // is created, far from the submit: refused now, naming what works.
      const std::string mechanism =
          absl::AsciiStrToUpper(absl::StripAsciiWhitespace(value));
      bool known = false;
      for (const char* m : kSaslMechanisms) known = known || mechanism == m;
      if (!known) {
        return Refuse(name, absl::StrCat("names SASL mechanism \"", value,
                                         "\", which is not one of ",
                                         absl::StrJoin(kSaslMechanisms, ", ")));
      }
    }
    if (lower == "sasl.oauthbearer.method" && absl::AsciiStrToLower(value) == "oidc" &&
        !options.allow_oidc_token_endpoint) {
      return Refuse(name, "oidc fetches tokens from a URL; the operator must allow it "
                          "(--kafka_allow_oidc_token_endpoint)");
    }
    if (lower == "sasl.oauthbearer.token.endpoint.url" && !options.allow_oidc_token_endpoint) {
      return Refuse(name, "is a URL the client would fetch; the operator must allow it "
                          "(--kafka_allow_oidc_token_endpoint)");
    }
    std::string effective = value;
    if (IsFileProperty(lower)) {
      if (!(lower == "ssl.ca.location" && value == "probe")) {
        SLUICE_ASSIGN_OR_RETURN(effective, InsideFilesDir(name, value, options));
      }
    } else if (IsSecretReference(value)) {
      if (!IsSecretProperty(name)) {
        return Refuse(name, "is not a secret property; ${env:} and ${file:} references are "
                            "only for secrets (passwords, secrets, ssl.key.pem)");
      }
      // Checked for policy here; resolved where the connection is made.
      KafkaProperties one{{name, value}};
      for (const char* destination : {"bootstrap.servers", "metadata.broker.list",
                                      "sasl.oauthbearer.token.endpoint.url"}) {
        if (auto it = properties.find(destination); it != properties.end()) one.insert(*it);
      }
      absl::StatusOr<KafkaProperties> resolved = ResolveSecretReferences(one, options);
      if (absl::IsInvalidArgument(resolved.status())) return resolved.status();
      effective = "placeholder";
    }
    scratch[name] = effective;
  }
  // librdkafka itself: unknown names and bad values, with its message. Only
  // properties that passed the rules above reach it.
  absl::StatusOr<ConfPtr> conf = BuildConf(scratch, "spec-check");
  if (!conf.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ioConfig.consumerProperties: ", conf.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<KafkaProperties> ResolveSecretReferences(const KafkaProperties& properties,
                                                        const PropertyPolicyOptions& options) {
  KafkaProperties out = properties;
  for (auto& [name, value] : out) {
    if (!IsSecretReference(value)) continue;
    absl::string_view ref = value;
    ref.remove_suffix(1);
    if (absl::ConsumePrefix(&ref, "${env:")) {
      const std::string var(ref);
      if (var.empty() || !absl::StartsWith(var, options.secret_env_prefix)) {
        return Refuse(name, absl::StrCat("references environment variable \"", var,
                                         "\"; only names starting with \"",
                                         options.secret_env_prefix, "\" may be referenced"));
      }
      SLUICE_RETURN_IF_ERROR(CheckBoundDestinations(name, value, properties, options));
      const char* env = std::getenv(var.c_str());
      if (env == nullptr) {
        return absl::NotFoundError(absl::StrCat(Field(name), " references environment variable ",
                                                var, ", which is not set in this process"));
      }
      value = env;
    } else if (absl::ConsumePrefix(&ref, "${file:")) {
      SLUICE_ASSIGN_OR_RETURN(std::string path, InsideFilesDir(name, ref, options));
      SLUICE_RETURN_IF_ERROR(CheckBoundDestinations(name, value, properties, options));
      absl::StatusOr<std::string> contents = ReadFile(path);
      if (!contents.ok()) {
        return absl::Status(contents.status().code(),
                            absl::StrCat(Field(name), " references file ", path,
                                         ", which cannot be read"));
      }
      std::string text = *std::move(contents);
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      value = std::move(text);
    }
  }
  return out;
}

KafkaProperties Redacted(const KafkaProperties& properties) {
  KafkaProperties out = properties;
  for (auto& [name, value] : out) {
    if (IsSecretProperty(name) && !IsSecretReference(value)) value = kRedacted;
  }
  return out;
}

}  // namespace sluice::kafka
