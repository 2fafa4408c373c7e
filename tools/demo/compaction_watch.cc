#include "tools/demo/compaction_watch.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace sluice {
namespace demo {

std::vector<IntervalSegments> GroupUsedByInterval(
    const std::vector<v1::SegmentDescriptor>& segments) {
  std::map<std::pair<int64_t, int64_t>, IntervalSegments> by_interval;
  for (const v1::SegmentDescriptor& s : segments) {
    if (!s.used()) continue;
    IntervalSegments& entry = by_interval[{s.interval().start_ms(), s.interval().end_ms()}];
    entry.start_ms = s.interval().start_ms();
    entry.end_ms = s.interval().end_ms();
    ++entry.segments;
    entry.rows += s.num_rows();
    entry.not_handed_off += s.handoff_state() != v1::HANDOFF_STATE_HANDED_OFF;
  }
  std::vector<IntervalSegments> out;
  out.reserve(by_interval.size());
  for (auto& [key, entry] : by_interval) out.push_back(entry);
  return out;
}

int64_t CompactionCutoffMs(const std::vector<IntervalSegments>& intervals, int64_t now_ms,
                           int64_t skip_offset_ms) {
  if (intervals.empty()) return std::numeric_limits<int64_t>::min();
  int64_t newest_end = intervals.front().end_ms;
  for (const IntervalSegments& i : intervals) newest_end = std::max(newest_end, i.end_ms);
  return std::min(now_ms, newest_end) - skip_offset_ms;
}

std::vector<IntervalSegments> NotCompacted(const std::vector<IntervalSegments>& intervals,
                                           int64_t cutoff_ms, int max_segments) {
  std::vector<IntervalSegments> out;
  for (const IntervalSegments& i : intervals) {
    if (i.end_ms > cutoff_ms) continue;
    if (i.segments > max_segments || i.not_handed_off > 0) out.push_back(i);
  }
  return out;
}

void CompactionTally::Add(const v1::CompactionStatus& status) {
  for (const v1::CompactionRecord& r : status.recent()) {
    const auto key = std::make_tuple(r.committed_at_ms(), r.interval().start_ms(),
                                     r.snapshot_id(), r.rows());
    if (!seen_.insert(key).second) continue;
    rows_ += r.rows();
    duration_ms_ += r.duration_ms();
    input_segments_ += r.input_segments();
  }
  last_ = status;
}

}  // namespace demo
}  // namespace sluice
