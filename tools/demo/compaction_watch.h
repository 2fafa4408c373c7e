// What the demo checks and measures of compaction when its spec has a
// compaction section (sluice-demo --compaction=..., bench/compaction/run.sh):
// the used segments of each segment interval, which intervals are old enough
// that compaction should have merged them (the planner's rule: ending at
// least skipOffsetFromLatest before both now and the end of the newest used
// segment), and the time the supervisor spent compacting, summed from the
// compaction records its status shows.
//
//   std::vector<IntervalSegments> intervals = GroupUsedByInterval(segments);
//   int64_t cutoff = CompactionCutoffMs(intervals, now_ms, skip_ms);
//   CompactionTally tally;
//   tally.Add(status.compaction());  // at every poll
#ifndef SLUICE_TOOLS_DEMO_COMPACTION_WATCH_H_
#define SLUICE_TOOLS_DEMO_COMPACTION_WATCH_H_

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sluice/v1/supervisor_service.pb.h"

namespace sluice {
namespace demo {

// The used segments of one segment interval.
struct IntervalSegments {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  int segments = 0;
  int64_t rows = 0;
  // Used segments not yet handed off (a compaction's outputs go through
  // handoff too).
  int not_handed_off = 0;
};

// The used segments grouped by interval, oldest first (unused ones ignored).
std::vector<IntervalSegments> GroupUsedByInterval(
    const std::vector<v1::SegmentDescriptor>& segments);

// Intervals ending at or before this are the ones compaction plans:
// min(now, end of the newest interval) - skip. INT64_MIN without intervals.
int64_t CompactionCutoffMs(const std::vector<IntervalSegments>& intervals, int64_t now_ms,
                           int64_t skip_offset_ms);

// Of the intervals ending at or before `cutoff_ms`, those with more than
// `max_segments` used segments or a segment not handed off.
std::vector<IntervalSegments> NotCompacted(const std::vector<IntervalSegments>& intervals,
                                           int64_t cutoff_ms, int max_segments);

// The compactions seen in successive statuses (each shows the newest 20),
// each counted once: rows and time spent.
class CompactionTally {
 public:
  void Add(const v1::CompactionStatus& status);

  int64_t compactions() const { return static_cast<int64_t>(seen_.size()); }
  int64_t rows() const { return rows_; }
  int64_t duration_ms() const { return duration_ms_; }
  int64_t input_segments() const { return input_segments_; }
  // The supervisor's own totals, from the newest status.
  const v1::CompactionStatus& last() const { return last_; }

 private:
  // (committed_at_ms, interval start, snapshot id, rows) of each one counted.
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> seen_;
  int64_t rows_ = 0;
  int64_t duration_ms_ = 0;
  int64_t input_segments_ = 0;
  v1::CompactionStatus last_;
};

}  // namespace demo
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEMO_COMPACTION_WATCH_H_
