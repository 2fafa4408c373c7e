// Kafka properties from a spec are data, not code. A spec's
// consumerProperties go to librdkafka, several of whose properties run a
// command, load a shared library, open a file or fetch a URL. This is the one
// check, run by the supervisor at submit and by the worker before it creates
// a consumer (docs/operations.md, "Spec properties and secrets", lists every
// rule):
//
// - refused, whatever the value: properties that run a command or load code
//   (sasl.kerberos.kinit.cmd, plugin.library.paths, ssl.engine.*,
//   ssl.providers, interceptor settings, callbacks), Kerberos (GSSAPI: its
//   kinit command line is built from spec values), ssl.keylog.filename, and
//   any name the operator adds (--kafka_denied_properties);
// - file paths (ssl.*.location, *.keystore.location, *.keytab) only inside
//   the operator's --kafka_files_dir (resolved, no symlink or ".." escape);
// - OAUTHBEARER/OIDC token endpoints only when the operator allows them;
// - every other property is set on a scratch librdkafka configuration, so an
//   unknown name or a bad value is refused with librdkafka's message.
//
// Secrets: values of secret properties (IsSecretProperty) may be references,
// resolved only where the connection is made (ResolveSecretReferences):
//   ${env:NAME}   the environment variable NAME, which must start with the
//                 operator's prefix (default SLUICE_SECRET_)
//   ${file:PATH}  the contents of PATH (trailing newline trimmed), which must
//                 lie inside --kafka_files_dir
// and only towards the servers the operator bound the reference to
// (--kafka_secret_destinations_file, secret_destinations.h): every server of
// bootstrap.servers / metadata.broker.list (and the OAUTHBEARER token
// endpoint, when set) must be allowed for it. A reference the operator did not
// bind is refused, so without that file no reference resolves. Both checks
// run at submit (CheckProperties) and again before each connection.
#ifndef SLUICE_COMMON_KAFKA_PROPERTY_POLICY_H_
#define SLUICE_COMMON_KAFKA_PROPERTY_POLICY_H_

#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kafka/config.h"
#include "common/kafka/secret_destinations.h"

namespace sluice::kafka {

struct PropertyPolicyOptions {
  // Directory holding the key stores, certificates and secret files specs may
  // name; empty: no property may name a file.
  std::string files_dir;
  // Further property names to refuse (operator's list).
  std::set<std::string> denied;
  // Allow sasl.oauthbearer.method=oidc and its token endpoint URL.
  bool allow_oidc_token_endpoint = false;
  // ${env:NAME} references must name a variable with this prefix.
  std::string secret_env_prefix = "SLUICE_SECRET_";
  // Where each ${env:} / ${file:} reference may be sent. Null: no reference
  // is bound to any server, so every reference is refused.
  std::shared_ptr<const SecretDestinations> secret_destinations;
};

// The value shown instead of a secret in every answer and log line.
inline constexpr char kRedacted[] = "***";

// IsSecretProperty (config.h): the properties whose values are secrets.

// True for "${env:...}" and "${file:...}" values.
bool IsSecretReference(absl::string_view value);

// The check above. INVALID_ARGUMENT names the property ("ioConfig.
// consumerProperties.\"<name>\" ...") and why (for a reference: the
// reference, and the server it may not be sent to; never a value).
absl::Status CheckProperties(const KafkaProperties& properties,
                             const PropertyPolicyOptions& options);

// The properties with every ${env:} / ${file:} reference replaced by its
// value. INVALID_ARGUMENT for a reference outside the policy (including one
// not bound to every destination of `properties`), checked before anything
// is read; NOT_FOUND for an unset variable or a missing file (the name, never
// a value, in messages).
absl::StatusOr<KafkaProperties> ResolveSecretReferences(const KafkaProperties& properties,
                                                        const PropertyPolicyOptions& options);

// The properties with secret values (not references) replaced by kRedacted.
KafkaProperties Redacted(const KafkaProperties& properties);

}  // namespace sluice::kafka

#endif  // SLUICE_COMMON_KAFKA_PROPERTY_POLICY_H_
