#include "supervisor/stream_health.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice::supervisor {

bool IsUnreachable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

StreamVerdict CheckStoredOffsets(const OffsetMap& stored,
                                 const std::map<int32_t, PartitionWatermarks>& marks,
                                 const std::set<int32_t>& idle, bool reset_automatically) {
  std::vector<std::string> past_end;
  std::vector<std::string> unavailable;
  for (const auto& [partition, offset] : stored) {
    auto mark = marks.find(partition);
    if (mark == marks.end()) continue;
    if (offset > mark->second.latest) {
      past_end.push_back(
          absl::StrCat(partition, ": stored ", offset, " > latest ", mark->second.latest));
    } else if (offset < mark->second.earliest && idle.count(partition) && !reset_automatically) {
      unavailable.push_back(
          absl::StrCat(partition, ": stored ", offset, " < earliest ", mark->second.earliest));
    }
  }
  if (!past_end.empty()) {
    return {StreamProblem::kStoredOffsetsPastEnd,
            absl::StrCat("stored offsets past the end of their partitions (",
                         absl::StrJoin(past_end, ", "),
                         "): the topic was recreated or the offsets reset beyond the end; "
                         "reset the supervisor or its offsets")};
  }
  if (!unavailable.empty()) {
    return {StreamProblem::kStoredOffsetsUnavailable,
            absl::StrCat("stored offsets no longer available in Kafka (",
                         absl::StrJoin(unavailable, ", "),
                         "); reset the supervisor or its offsets, or set "
                         "resetOffsetAutomatically")};
  }
  return {};
}

}  // namespace sluice::supervisor
