// The checks a spec or an offset reset passes before the supervisor acts on
// it: pure functions of the request and what is stored (no I/O), used by the
// manager's admin operations (spec_lifecycle.h).
#ifndef SLUICE_SUPERVISOR_SPEC_ADMISSION_H_
#define SLUICE_SUPERVISOR_SPEC_ADMISSION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/property_policy.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "common/offsets.h"

namespace sluice::supervisor {

// The spec a SubmitSupervisor request carries, in sluice's form.
struct SubmittedSpec {
  v1::SupervisorSpec spec;
  // From a Druid spec: the fields ignored or mapped with a difference.
  std::vector<std::string> warnings;
};

// `spec` as it is, or `druid_spec_json` converted (common/druid/druid_spec.h,
// honoring allow_unsupported). INVALID_ARGUMENT when both or neither form is
// given, or when the Druid spec cannot be taken (the message names each
// field). The result still goes through AdmitSpec like any spec.
absl::StatusOr<SubmittedSpec> SpecOfSubmitRequest(const v1::SubmitSupervisorRequest& request);

// The spec a submission stands for: "***" secrets take the value of
// `stored` (the datasource's live spec; null: none), then NormalizeSpec,
// then the consumer properties must pass `policy`.
absl::StatusOr<v1::SupervisorSpec> AdmitSpec(const v1::SupervisorSpec& submitted,
                                             const v1::SupervisorSpec* stored,
                                             const kafka::PropertyPolicyOptions& policy);

// A datasource with stored offsets for another topic must be reset before it
// reads a new one (FAILED_PRECONDITION).
absl::Status CheckTopicSwitch(const std::string& datasource,
                              const std::optional<std::string>& commit_topic,
                              const OffsetMap& committed, const std::string& topic);

// A reset sets next offsets to read: END_OF_PARTITION (int64 max, the "read
// until told" end marker of TaskSpec end offsets) is not one, and stored it
// would put the partition's committed offset past any record forever.
// INVALID_ARGUMENT naming the partitions given it (with the partition's end
// as the supervisor last read it from Kafka, when known, to reset to instead).
absl::Status CheckNoEndMarker(const v1::SupervisorStatus& status,
                              const google::protobuf::Map<int32_t, int64_t>& offsets);

// A reset may only name partitions the topic has (as the supervisor last read
// them from Kafka, `status.latest_offsets`): a stored offset for a partition
// that does not exist would show in status and the commit log forever.
// UNAVAILABLE while the partitions are unknown, INVALID_ARGUMENT for a
// partition the topic does not have.
absl::Status CheckPartitionsExist(const v1::SupervisorStatus& status,
                                  const google::protobuf::Map<int32_t, int64_t>& offsets);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SPEC_ADMISSION_H_
