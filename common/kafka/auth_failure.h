// Kafka authentication failures, told apart from other connection trouble:
// which librdkafka errors mean the cluster refused who the client says it is
// (a wrong SASL password, a mechanism the listener does not offer, a client
// certificate refused or expired, a server certificate the client does not
// trust), and which mechanism failed, for the status, a metric and the logs.
// Never the secret: every message is scrubbed of the secret values of the
// connection's properties.
//
//   if (IsAuthFailureError(err, reason)) {
//     status = AuthFailureStatus(err, "list partitions of topic \"wiki\"", reason, props);
//     // PERMISSION_DENIED: list partitions of topic "wiki": Kafka authentication
//     // failed (SASL SCRAM-SHA-512 over SASL_SSL): SASL authentication error:
//     // Authentication failed during authentication due to invalid credentials
//     // with SASL mechanism SCRAM-SHA-512 (_AUTHENTICATION)
//   }
//   std::string mechanism;
//   if (IsAuthFailure(status, &mechanism)) counter(mechanism)->Increment();
#ifndef SLUICE_COMMON_KAFKA_AUTH_FAILURE_H_
#define SLUICE_COMMON_KAFKA_AUTH_FAILURE_H_

#include <librdkafka/rdkafka.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/kafka/config.h"

namespace sluice::kafka {

// The words every authentication failure's message holds.
inline constexpr char kAuthFailedText[] = "Kafka authentication failed";

// What the connection `properties` describe authenticates with: the SASL
// mechanism ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", upper
// case as given; librdkafka's default "GSSAPI" when a SASL protocol names
// none) for SASL_PLAINTEXT and SASL_SSL, "SSL" for security.protocol SSL
// (TLS, with a client certificate when the listener wants one), "" for
// PLAINTEXT. A metric label: one of a handful of values.
std::string AuthMechanism(const KafkaProperties& properties);

// "SASL SCRAM-SHA-512 over SASL_SSL", "TLS client certificate over SSL",
// "PLAINTEXT" (for messages).
std::string DescribeAuthentication(const KafkaProperties& properties);

// Whether librdkafka's error `err` (an error event, a failed request) with
// `reason` means the cluster refused the client's identity: _AUTHENTICATION,
// _SSL, SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM,
// ILLEGAL_SASL_STATE, and a transport error whose reason is a TLS alert the
// broker sent about the client's certificate (bad, unsupported, revoked,
// expired, unknown, unknown CA, required: what a broker with
// ssl.client.auth=required answers a refused or missing certificate with).
bool IsAuthFailureError(rd_kafka_resp_err_t err, absl::string_view reason);

// PERMISSION_DENIED "<context>: Kafka authentication failed (<how>):
// <reason> (<ERROR_NAME>)", <how> from DescribeAuthentication, the reason
// without librdkafka's broker prefix ("sasl_ssl://host:port/bootstrap: ")
// and scrubbed (ScrubSecrets).
absl::Status AuthFailureStatus(rd_kafka_resp_err_t err, absl::string_view context,
                               absl::string_view reason, const KafkaProperties& properties);

// True for a status AuthFailureStatus made (PERMISSION_DENIED naming
// kAuthFailedText); `mechanism` gets the AuthMechanism it names ("" if it
// names none).
bool IsAuthFailure(const absl::Status& status, std::string* mechanism = nullptr);

// `text` with the value of every secret property (IsSecretProperty) of
// `properties` that is at least 4 characters long replaced by "***".
std::string ScrubSecrets(absl::string_view text, const KafkaProperties& properties);

}  // namespace sluice::kafka

#endif  // SLUICE_COMMON_KAFKA_AUTH_FAILURE_H_
