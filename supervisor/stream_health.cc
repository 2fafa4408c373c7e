#include "supervisor/stream_health.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kafka/auth_failure.h"

namespace sluice::supervisor {

bool IsUnreachable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
         kafka::IsAuthFailure(status);
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

OutOfRangeJudgement JudgeOutOfRangeReport(const std::string& task_id, const OffsetMap& wanted,
                                          const OffsetMap& committed,
                                          const std::map<int32_t, PartitionWatermarks>& marks) {
  OutOfRangeJudgement out;
  for (const auto& [p, n] : wanted) {
    const std::string reported =
        absl::StrCat("task ", task_id, " reported offset ", n, " of partition ", p, " out of range");
    auto mark = marks.find(p);
    if (mark == marks.end()) {
      out.findings.push_back(
          absl::StrCat(reported, ", but Kafka gave no watermarks for it: not reset"));
      continue;
    }
    const int64_t earliest = mark->second.earliest;
    const int64_t latest = mark->second.latest;
    auto stored = committed.find(p);
    const bool has_committed = stored != committed.end();
    const int64_t c = has_committed ? stored->second : n;
    const std::string holds = absl::StrCat("Kafka holds [", earliest, ", ", latest, "]");
    const std::string committed_text =
        has_committed ? absl::StrCat(" (committed ", c, ")") : std::string();
    if (n >= earliest && n <= latest) {
      out.task_suspect = true;
      out.findings.push_back(
          absl::StrCat(reported, ", but ", holds, committed_text, ": not reset"));
    } else if (c >= earliest && c <= latest) {
      if (n < earliest) {
        out.task_suspect = true;
        out.findings.push_back(absl::StrCat(reported, ": it is before the committed offset ", c,
                                            ", which ", holds, ": not reset"));
      } else {
        out.findings.push_back(absl::StrCat(reported, ": past the latest offset (", holds,
                                            committed_text,
                                            "), the records may not exist yet: not reset"));
      }
    } else if (c < earliest) {
      if (n < earliest) {
        out.reset[p] = earliest;
        out.lost[p] = earliest - c;
        out.findings.push_back(absl::StrCat(
            reported, "; ", holds, committed_text, ": retention deleted offsets [", c, ", ",
            earliest, ") before they were ingested, ", earliest - c,
            " records lost; reset to ", earliest));
      } else {
        out.findings.push_back(absl::StrCat(reported, ": past the latest offset (", holds,
                                            committed_text,
                                            "), the records may not exist yet: not reset"));
      }
    } else {
      // c > latest: Kafka holds nothing from the committed offset on.
      if (n < earliest) out.task_suspect = true;
      out.findings.push_back(absl::StrCat(
          reported, "; ", holds, " and the committed offset ", c,
          " is past it (topic recreated or truncated?): no committed record was lost; not reset "
          "automatically (that would move the offset back): reset the offsets to read on"));
    }
  }
  return out;
}

}  // namespace sluice::supervisor
