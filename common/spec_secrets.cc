#include "common/spec_secrets.h"

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
    value = *kept;
  }
  return absl::OkStatus();
}

}  // namespace sluice
