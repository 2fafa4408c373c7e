#include "common/kafka/auth_failure.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/kafka/errors.h"

namespace sluice::kafka {
namespace {

std::string Protocol(const KafkaProperties& properties) {
  return absl::AsciiStrToUpper(PropertyOr(properties, "security.protocol", "PLAINTEXT"));
}

// TLS alerts (RFC 8446 6.2) a server sends about the client's certificate,
// as OpenSSL words them in librdkafka's reason ("SSL alert number 42").
constexpr int kCertificateAlerts[] = {42, 43, 44, 45, 46, 48, 116};

bool IsCertificateAlert(absl::string_view reason) {
  for (int alert : kCertificateAlerts) {
    const std::string text = absl::StrCat("SSL alert number ", alert);
    for (size_t at = reason.find(text); at != absl::string_view::npos;
         at = reason.find(text, at + 1)) {
      const size_t end = at + text.size();
      if (end == reason.size() || !absl::ascii_isdigit(static_cast<unsigned char>(reason[end]))) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::string AuthMechanism(const KafkaProperties& properties) {
  const std::string protocol = Protocol(properties);
  if (protocol == "SSL") return "SSL";
  if (!absl::StartsWith(protocol, "SASL_")) return "";
  std::string mechanism = PropertyOr(properties, "sasl.mechanism", "");
  if (mechanism.empty()) mechanism = PropertyOr(properties, "sasl.mechanisms", "GSSAPI");
  return absl::AsciiStrToUpper(absl::StripAsciiWhitespace(mechanism));
}

std::string DescribeAuthentication(const KafkaProperties& properties) {
  const std::string protocol = Protocol(properties);
  const std::string mechanism = AuthMechanism(properties);
  if (mechanism.empty()) return protocol;
  if (mechanism == "SSL") return absl::StrCat("TLS client certificate over ", protocol);
  return absl::StrCat("SASL ", mechanism, " over ", protocol);
}

bool IsAuthFailureError(rd_kafka_resp_err_t err, absl::string_view reason) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
    case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
      return true;
    case RD_KAFKA_RESP_ERR__TRANSPORT:
      return IsCertificateAlert(reason);
    default:
      return false;
  }
}

absl::Status AuthFailureStatus(rd_kafka_resp_err_t err, absl::string_view context,
                               absl::string_view reason, const KafkaProperties& properties) {
  // librdkafka's reason starts with the broker ("sasl_ssl://host:port/bootstrap: ").
  if (size_t at = reason.find("/bootstrap: "); at != absl::string_view::npos) {
    reason.remove_prefix(at + 12);
  }
  const std::string detail = absl::StrCat(kAuthFailedText, " (", DescribeAuthentication(properties),
                                          "): ", ScrubSecrets(reason, properties));
  const absl::Status status = KafkaErrorToStatus(err, context, detail);
  return absl::PermissionDeniedError(status.message());
}

bool IsAuthFailure(const absl::Status& status, std::string* mechanism) {
  if (!absl::IsPermissionDenied(status)) return false;
  const absl::string_view message = status.message();
  const size_t at = message.find(kAuthFailedText);
  if (at == absl::string_view::npos) return false;
  if (mechanism != nullptr) {
    mechanism->clear();
    absl::string_view how = message.substr(at + sizeof(kAuthFailedText) - 1);
    if (absl::ConsumePrefix(&how, " (")) {
      how = how.substr(0, how.find(')'));
      if (absl::ConsumePrefix(&how, "SASL ")) {
        *mechanism = std::string(how.substr(0, how.find(' ')));
      } else if (absl::StartsWith(how, "TLS client certificate")) {
        *mechanism = "SSL";
      }
    }
  }
  return true;
}

std::string ScrubSecrets(absl::string_view text, const KafkaProperties& properties) {
  std::vector<std::pair<absl::string_view, absl::string_view>> replacements;
  for (const auto& [name, value] : properties) {
    // A secret of 1-3 characters would scrub ordinary words; such a secret
    // is no secret anyway.
    if (IsSecretProperty(name) && value.size() >= 4) replacements.push_back({value, "***"});
  }
  return absl::StrReplaceAll(text, replacements);
}

}  // namespace sluice::kafka
