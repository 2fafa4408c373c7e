// sluicectl reset-offsets --to_time: the time argument, the Kafka connection
// built from the datasource's spec (as `sluicectl verify` builds it), the
// per-partition lookup (Kafka's offsetsForTimes) and the preview shown before
// anything is reset.
//
//   SLUICE_ASSIGN_OR_RETURN(int64_t time_ms, ParseResetTime("2026-12-06T00:00:00Z"));
//   SLUICE_ASSIGN_OR_RETURN(auto props, SpecKafkaProperties(spec, bootstrap, kind, policy));
//   SLUICE_ASSIGN_OR_RETURN(auto plan, LookUpOffsetsForTime(props, topic, time_ms, committed,
//                                                           absl::Seconds(30)));
//   std::cout << FormatResetPreview(datasource, topic, time_ms, plan);
#ifndef SLUICE_TOOLS_CLI_RESET_TO_TIME_H_
#define SLUICE_TOOLS_CLI_RESET_TO_TIME_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/kafka/config.h"
#include "common/kafka/consumer_settings.h"
#include "common/kafka/metadata_client.h"
#include "common/kafka/property_policy.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice {
namespace sluicectl {

// An ISO-8601 instant (2026-12-06T00:00:00Z; no zone means UTC; see
// ParseIsoInstantMillis) or epoch milliseconds (digits only) -> epoch millis.
// INVALID_ARGUMENT for anything else or a time before 1970.
absl::StatusOr<int64_t> ParseResetTime(absl::string_view text);

// The consumer properties to reach the datasource's Kafka with: the spec's
// ioConfig.consumerProperties (security settings included; redacted values
// left out), bootstrap.servers replaced by `bootstrap` when not empty, secret
// references resolved under `policy` when given, the consumer defaults of
// `kind` under them. FAILED_PRECONDITION without an address or when a
// reference cannot be resolved here.
absl::StatusOr<kafka::KafkaProperties> SpecKafkaProperties(
    const v1::SupervisorSpec& spec, absl::string_view bootstrap, kafka::ClusterKind kind,
    const std::optional<kafka::PropertyPolicyOptions>& policy);

// One partition of the reset: where the datasource stands and where it goes.
struct PartitionReset {
  int32_t partition = 0;
  // The committed offset (the next record to read); unset: none yet.
  std::optional<int64_t> committed;
  int64_t new_offset = 0;
  kafka::OffsetForTimeSource source = kafka::OffsetForTimeSource::kRecordAtOrAfter;

  // Records skipped (> 0) or read again (< 0) compared with the committed
  // offset; 0 without one.
  int64_t change() const { return committed.has_value() ? new_offset - *committed : 0; }
};

// Every partition of `topic` with its offset for `time_ms` (from Kafka) and
// its committed offset (`committed`, partition -> offset, as the status
// shows it), ascending by partition.
absl::StatusOr<std::vector<PartitionReset>> LookUpOffsetsForTime(
    const kafka::KafkaProperties& properties, absl::string_view topic, int64_t time_ms,
    const std::map<int32_t, int64_t>& committed, absl::Duration timeout);

// The preview table: per partition the committed offset, the new one, what
// the change skips or reads again, and a note for a time past the end of a
// partition (reset to its latest offset).
std::string FormatResetPreview(absl::string_view datasource, absl::string_view topic,
                               int64_t time_ms, const std::vector<PartitionReset>& plan);

// The partitions whose offset changes (or that have none committed yet):
// what the ResetOffsets request carries.
std::map<int32_t, int64_t> ChangedOffsets(const std::vector<PartitionReset>& plan);

}  // namespace sluicectl
}  // namespace sluice

#endif  // SLUICE_TOOLS_CLI_RESET_TO_TIME_H_
