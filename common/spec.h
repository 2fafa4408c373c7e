// Supervisor spec defaults and validation.
//
// A submitted spec goes through NormalizeSpec: defaults are filled in (so the
// stored and returned spec shows every effective value) and every field is
// checked. Errors are INVALID_ARGUMENT and name the field in the JSON form the
// user wrote, e.g. "ioConfig.taskCount must be at least 1 (got 0)".
#ifndef SLUICE_COMMON_SPEC_H_
#define SLUICE_COMMON_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sluice/v1/spec.pb.h"

namespace sluice {

// Defaults (Druid's, except where sluice differs and says so).
inline constexpr int64_t kDefaultMaxRowsInMemory = 150000;
inline constexpr int64_t kDefaultMaxBytesInMemory = 128LL << 20;
inline constexpr int64_t kDefaultMaxRowsPerSegment = 5000000;
inline constexpr int64_t kDefaultMaxTotalRows = 20000000;
inline constexpr int32_t kDefaultMaxSavedParseExceptions = 20;
inline constexpr int32_t kDefaultChatRetries = 8;

// The END_OF_PARTITION marker: an end offset meaning "read until told".
inline constexpr int64_t kEndOfPartition = INT64_MAX;

// icebergTable's defaults: namespace "sluice", table the datasource's name
// with every character outside [A-Za-z0-9_] replaced by "_" (a datasource
// whose name does not start with a letter must name its table).
inline constexpr char kDefaultIcebergNamespace[] = "sluice";
std::string DefaultIcebergTableName(absl::string_view datasource);

// compaction's defaults (Druid's where it has the same field).
inline constexpr int64_t kDefaultCompactionTargetRows = 5000000;
inline constexpr int32_t kDefaultCompactionMaxInputSegments = 100;

// A datasource's compaction config, parsed (spec.proto CompactionConfig).
struct CompactionPolicy {
  int64_t target_rows_per_segment = kDefaultCompactionTargetRows;
  absl::Duration skip_offset_from_latest = absl::Hours(24);
  int32_t max_input_segments = kDefaultCompactionMaxInputSegments;
  absl::Duration period = absl::Minutes(1);
  absl::Duration snapshot_retention = absl::Hours(24 * 7);
  int32_t snapshots_to_keep = 10;
};

// Fills every unset field with its default. Idempotent.
void ApplySpecDefaults(v1::SupervisorSpec* spec);

// The defaults of ioConfig.inputFormat (spec.proto): type "json"; for
// "kafka", valueFormat {"type": "json"}, keyColumnName "kafka.key",
// headerColumnPrefix "kafka.header.", headerFormat {"type": "string",
// "encoding": "UTF-8"}, timestampColumnName "kafka.timestamp",
// topicColumnName "kafka.topic". Idempotent.
void ApplyInputFormatDefaults(v1::InputFormat* format);

// Checks a spec whose defaults are filled in.
absl::Status ValidateSpec(const v1::SupervisorSpec& spec);

// ApplySpecDefaults + ValidateSpec.
absl::StatusOr<v1::SupervisorSpec> NormalizeSpec(v1::SupervisorSpec spec);

// The durations and instants of a normalized spec, parsed.
struct SpecTimings {
  absl::Duration task_duration;
  absl::Duration start_delay;
  absl::Duration period;
  absl::Duration completion_timeout;
  absl::Duration poll_timeout;
  // Unset: no rejection window on that side.
  std::optional<absl::Duration> late_message_rejection_period;
  std::optional<int64_t> late_message_rejection_start_ms;
  std::optional<absl::Duration> early_message_rejection_period;
  absl::Duration intermediate_persist_period;
  // absl::InfiniteDuration() when never.
  absl::Duration intermediate_handoff_period;
  // absl::InfiniteDuration() for "wait forever" (PT0S).
  absl::Duration handoff_condition_timeout;
  absl::Duration checkpoint_retry_period;
  absl::Duration chat_timeout;
};

// Parses the duration fields of a normalized spec (INVALID_ARGUMENT if one
// does not parse, which NormalizeSpec already rules out).
absl::StatusOr<SpecTimings> ParseSpecTimings(const v1::SupervisorSpec& spec);

// The compaction config of a normalized spec, parsed; with no config, the
// defaults (what CompactDataSource uses for a spec without one).
absl::StatusOr<CompactionPolicy> ParseCompactionPolicy(const v1::SupervisorSpec& spec);

// Same, for the tuning part only (what a task carries).
absl::StatusOr<SpecTimings> ParseTuningTimings(const v1::TuningConfig& tuning);

}  // namespace sluice

#endif  // SLUICE_COMMON_SPEC_H_
