#include "task/task_spec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/names.h"
#include "common/status_macros.h"

namespace sluice::task {

absl::StatusOr<TaskSettings> CheckTaskSpec(const v1::TaskSpec& spec) {
  SLUICE_RETURN_IF_ERROR(ValidateTaskId(spec.task_id()));
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(spec.datasource()));
  SLUICE_RETURN_IF_ERROR(
      ValidateName("base sequence name", spec.base_sequence_name(), kMaxTaskIdLength));
  if (spec.topic().empty() == spec.topic_pattern().empty()) {
    return absl::InvalidArgumentError("the task spec needs a topic or a topic pattern, not both");
  }
  const auto bootstrap = spec.consumer_properties().find("bootstrap.servers");
  if (bootstrap == spec.consumer_properties().end() || bootstrap->second.empty()) {
    return absl::InvalidArgumentError("consumer_properties must set \"bootstrap.servers\"");
  }
  if (spec.group_id() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("group_id ", spec.group_id(), " is negative"));
  }
  TaskSettings settings;
  const OffsetMap start = FromProto(spec.start_offsets());
  if (start.empty()) return absl::InvalidArgumentError("the task spec has no start_offsets");
  for (const auto& [p, o] : start) {
    if (p < 0 || o < 0 || o == kEndOfPartition) {
      return absl::InvalidArgumentError(
          absl::StrCat("start offset ", o, " of partition ", p, " is not valid"));
    }
    settings.partitions.push_back(p);
  }
  if (!spec.topic_pattern().empty()) {
    SLUICE_ASSIGN_OR_RETURN(settings.stream_partitions,
                            StreamPartitionMap::Create(spec.stream_partitions()));
    for (int32_t p : settings.partitions) {
      if (settings.stream_partitions.Find(p) == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "stream partition ", p, " has no topic and partition in stream_partitions"));
      }
    }
  } else if (!spec.stream_partitions().empty()) {
    return absl::InvalidArgumentError("stream_partitions are for topic-pattern tasks only");
  }
  if (spec.checkpoints().empty()) {
    settings.checkpoints.emplace_back(0, start);
  } else {
    for (const v1::Checkpoint& checkpoint : spec.checkpoints()) {
      OffsetMap offsets = FromProto(checkpoint.offsets());
      for (const auto& [p, o] : offsets) {
        const auto s = start.find(p);
        if (s != start.end() && o < s->second) {
          return absl::InvalidArgumentError(
              absl::StrCat("checkpoint ", checkpoint.sequence_id(), " starts partition ", p, " at ",
                           o, ", before the group's start offset ", s->second));
        }
      }
      settings.checkpoints.emplace_back(checkpoint.sequence_id(), std::move(offsets));
    }
  }
  if (spec.minimum_message_time_ms() != 0 && spec.maximum_message_time_ms() != 0 &&
      spec.minimum_message_time_ms() > spec.maximum_message_time_ms()) {
    return absl::InvalidArgumentError(
        absl::StrCat("minimum_message_time_ms ", spec.minimum_message_time_ms(),
                     " is after maximum_message_time_ms ", spec.maximum_message_time_ms()));
  }
  // Fill in the defaults the same way the supervisor does.
  v1::SupervisorSpec wrapper;
  *wrapper.mutable_data_schema() = spec.data_schema();
  *wrapper.mutable_tuning_config() = spec.tuning_config();
  ApplySpecDefaults(&wrapper);
  settings.tuning = wrapper.tuning_config();
  settings.data_schema = wrapper.data_schema();
  const v1::TuningConfig& t = settings.tuning;
  for (const auto& [name, value] : {std::make_pair("maxRowsInMemory", t.max_rows_in_memory()),
                                    std::make_pair("maxBytesInMemory", t.max_bytes_in_memory()),
                                    std::make_pair("maxRowsPerSegment", t.max_rows_per_segment()),
                                    std::make_pair("maxTotalRows", t.max_total_rows())}) {
    if (value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("tuningConfig.", name, " must be at least 1 (got ", value, ")"));
    }
  }
  if (t.has_max_parse_exceptions() && t.max_parse_exceptions() < 0) {
    return absl::InvalidArgumentError("tuningConfig.maxParseExceptions must not be negative");
  }
  SLUICE_ASSIGN_OR_RETURN(settings.timings, ParseTuningTimings(t));
  SLUICE_ASSIGN_OR_RETURN(
      settings.segment_granularity,
      Granularity::Parse(settings.data_schema.granularity_spec().segment_granularity()));
  if (settings.segment_granularity.unit() == Granularity::Unit::kNone) {
    return absl::InvalidArgumentError("segmentGranularity must not be NONE");
  }
  settings.poll_timeout =
      absl::Milliseconds(spec.poll_timeout_ms() > 0 ? spec.poll_timeout_ms() : 100);
  return settings;
}

bool CapMaxBytesInMemory(int64_t share, TaskSettings* settings) {
  if (share <= 0 || settings->tuning.max_bytes_in_memory() <= share) return false;
  settings->tuning.set_max_bytes_in_memory(share);
  return true;
}

}  // namespace sluice::task
