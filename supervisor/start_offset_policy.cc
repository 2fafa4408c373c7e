#include "supervisor/start_offset_policy.h"

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {

std::vector<int32_t> PartitionsNeedingWatermarks(const std::vector<int32_t>& partitions,
                                                 const OffsetMap& next_offsets) {
  std::vector<int32_t> out;
  for (int32_t p : partitions) {
    if (!next_offsets.count(p)) out.push_back(p);
  }
  return out;
}

StartOffsetDecision DecideStartOffsets(const StartOffsetInputs& in) {
  StartOffsetDecision out;
  for (int32_t p : in.partitions) {
    if (auto next = in.next_offsets.find(p); next != in.next_offsets.end()) {
      out.start[p] = next->second;
      out.sources.push_back(absl::StrCat(p, ":previous group"));
      continue;
    }
    PartitionWatermarks mark;
    if (auto it = in.watermarks.find(p); it != in.watermarks.end()) mark = it->second;
    if (auto stored = in.committed.find(p); stored != in.committed.end()) {
      if (stored->second < mark.earliest) {
        if (!in.reset_offset_automatically) {
          out.unavailable = absl::StrCat(
              "stored offset ", stored->second, " of partition ", p,
              " is no longer available in Kafka (earliest ", mark.earliest,
              "); reset the supervisor or its offsets, or set resetOffsetAutomatically");
          return out;
        }
        out.auto_reset[p] = mark.earliest;
        out.start[p] = mark.earliest;
        out.sources.push_back(absl::StrCat(p, ":auto-reset to earliest"));
        continue;
      }
      out.start[p] = stored->second;
      out.sources.push_back(absl::StrCat(p, ":stored"));
      continue;
    }
    const bool earliest = in.use_earliest_offset || !in.first_partitions.count(p);
    out.start[p] = earliest ? mark.earliest : mark.latest;
    out.sources.push_back(absl::StrCat(p, earliest ? ":earliest" : ":latest"));
  }
  return out;
}

MessageTimeBounds GroupMessageTimeBounds(const SpecTimings& timings, int64_t now_ms) {
  MessageTimeBounds bounds;
  if (timings.late_message_rejection_start_ms) {
    bounds.min_ms = *timings.late_message_rejection_start_ms;
  } else if (timings.late_message_rejection_period) {
    bounds.min_ms = now_ms - absl::ToInt64Milliseconds(*timings.late_message_rejection_period);
  }
  if (timings.early_message_rejection_period) {
    bounds.max_ms = now_ms + absl::ToInt64Milliseconds(timings.task_duration) +
                    absl::ToInt64Milliseconds(*timings.early_message_rejection_period);
  }
  return bounds;
}

}  // namespace sluice::supervisor
