#include "supervisor/spec_admission.h"

#include <google/protobuf/util/message_differencer.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/spec.h"
#include "common/spec_secrets.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

absl::StatusOr<v1::SupervisorSpec> AdmitSpec(const v1::SupervisorSpec& submitted,
                                             const v1::SupervisorSpec* stored,
                                             const kafka::PropertyPolicyOptions& policy) {
  // "***" for a secret keeps the stored value (answers never show secrets).
  v1::SupervisorSpec with_secrets = submitted;
  SLUICE_RETURN_IF_ERROR(KeepStoredSecrets(&with_secrets, stored));
  SLUICE_ASSIGN_OR_RETURN(v1::SupervisorSpec spec, NormalizeSpec(std::move(with_secrets)));
  const kafka::KafkaProperties properties(spec.io_config().consumer_properties().begin(),
                                          spec.io_config().consumer_properties().end());
  SLUICE_RETURN_IF_ERROR(kafka::CheckProperties(properties, policy));
  return spec;
}

absl::Status CheckTopicSwitch(const std::string& datasource,
                              const std::optional<std::string>& commit_topic,
                              const OffsetMap& committed, const std::string& topic) {
  if (commit_topic && *commit_topic != topic && !committed.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("datasource ", datasource, " has stored offsets for topic \"", *commit_topic,
                     "\", not \"", topic, "\"; reset the supervisor before switching topics"));
  }
  return absl::OkStatus();
}

bool SameSpecButSuspended(v1::SupervisorSpec a, v1::SupervisorSpec b) {
  a.set_suspended(false);
  b.set_suspended(false);
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

absl::Status CheckPartitionsExist(const v1::SupervisorStatus& status,
                                  const google::protobuf::Map<int32_t, int64_t>& offsets) {
  if (status.latest_offsets().empty()) {
    return absl::UnavailableError(absl::StrCat(
        "the partitions of topic \"", status.topic(),
        "\" are not known yet (Kafka not reached); try again once the status shows them"));
  }
  std::set<int32_t> missing;
  for (const auto& [p, unused] : offsets) {
    if (!status.latest_offsets().contains(p)) missing.insert(p);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("topic \"", status.topic(), "\" has no partition ", absl::StrJoin(missing, ", "),
                   " (it has ", status.latest_offsets().size(), ": 0 to ",
                   status.latest_offsets().size() - 1, "); nothing was reset"));
}

}  // namespace sluice::supervisor
