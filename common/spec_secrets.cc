#include "common/spec_secrets.h"

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/property_policy.h"

namespace sluice {
namespace {

void RedactMap(google::protobuf::Map<std::string, std::string>* properties) {
  for (auto& [name, value] : *properties) {
    if (kafka::IsSecretProperty(name) && !kafka::IsSecretReference(value)) {
      value = kafka::kRedacted;
    }
  }
}

// Where and how the consumer connects: the brokers, the protocol, and every
// SASL and TLS setting that is not itself a secret.
bool IsDestinationProperty(absl::string_view name) {
  if (kafka::IsSecretProperty(name)) return false;
  const std::string lower = absl::AsciiStrToLower(name);
  return lower == "bootstrap.servers" || lower == "metadata.broker.list" ||
         lower == "security.protocol" || lower == "client.dns.lookup" ||
         absl::StartsWith(lower, "sasl.") || absl::StartsWith(lower, "ssl.");
}

// The first destination property whose value differs between the two specs
// (present in one only counts), or "" when they connect the same way.
std::string ChangedDestination(const v1::SupervisorSpec& submitted,
                               const v1::SupervisorSpec& stored) {
  const auto& now = submitted.io_config().consumer_properties();
  const auto& before = stored.io_config().consumer_properties();
  std::set<std::string> names;
  for (const auto& [name, value] : now) {
    if (IsDestinationProperty(name)) names.insert(name);
  }
  for (const auto& [name, value] : before) {
    if (IsDestinationProperty(name)) names.insert(name);
  }
  for (const std::string& name : names) {
    auto a = now.find(name);
    auto b = before.find(name);
    const bool same = (a == now.end()) == (b == before.end()) &&
                      (a == now.end() || a->second == b->second);
    if (!same) return name;
  }
  return "";
}

}  // namespace

v1::SupervisorSpec RedactedSpec(v1::SupervisorSpec spec) {
  RedactMap(spec.mutable_io_config()->mutable_consumer_properties());
  return spec;
}

v1::TaskSpec RedactedTaskSpec(v1::TaskSpec spec) {
  RedactMap(spec.mutable_consumer_properties());
  return spec;
}

absl::Status KeepStoredSecrets(v1::SupervisorSpec* submitted, const v1::SupervisorSpec* stored) {
  for (auto& [name, value] : *submitted->mutable_io_config()->mutable_consumer_properties()) {
    if (value != kafka::kRedacted || !kafka::IsSecretProperty(name)) continue;
    const std::string* kept = nullptr;
    if (stored != nullptr) {
      auto it = stored->io_config().consumer_properties().find(name);
      if (it != stored->io_config().consumer_properties().end()) kept = &it->second;
    }
    if (kept == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ioConfig.consumerProperties.\"", name,
          "\" is \"***\" (keep the stored secret) but no stored spec has it; give the value "
          "or a ${env:NAME} / ${file:PATH} reference"));
    }
    // A stored secret goes only where it was given for: to another broker or
    // over other security settings it must be given again.
    const std::string changed = ChangedDestination(*submitted, *stored);
    if (!changed.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ioConfig.consumerProperties.\"", name,
          "\" is \"***\" (keep the stored secret) but ioConfig.consumerProperties.\"", changed,
          "\" changed: a stored secret is kept only for the brokers and security settings it "
          "was given with; give the value or a reference again"));
    }
    value = *kept;
  }
  return absl::OkStatus();
}

}  // namespace sluice
