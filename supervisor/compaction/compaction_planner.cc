#include "supervisor/compaction/compaction_planner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {
namespace {

// The first Kafka offset a segment holds (its smallest range start), for a
// deterministic order of the inputs.
int64_t FirstOffset(const v1::SegmentDescriptor& s) {
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const v1::PartitionRange& r : s.provenance().ranges()) {
    first = std::min(first, r.start_offset());
  }
  return first;
}

// Whether `s` holds records of a Kafka range some segment of `group` holds
// too (segments ingested again after an offset reset): such segments are
// never merged into one (a segment's provenance ranges are disjoint).
bool SharesRecordsWith(const v1::SegmentDescriptor& s,
                       const std::vector<v1::SegmentDescriptor>& group) {
  for (const v1::PartitionRange& r : s.provenance().ranges()) {
    for (const v1::SegmentDescriptor& g : group) {
      for (const v1::PartitionRange& q : g.provenance().ranges()) {
        if (r.partition() == q.partition() && r.start_offset() < q.end_offset() &&
            q.start_offset() < r.end_offset()) {
          return true;
        }
      }
    }
  }
  return false;
}

bool Overlaps(const v1::Interval& a, const v1::Interval& b) {
  return a.start_ms() < b.end_ms() && b.start_ms() < a.end_ms();
}

}  // namespace

CompactionPlan PlanCompactions(const std::vector<v1::SegmentDescriptor>& segments,
                               const CompactionPolicy& policy, absl::Time now,
                               const PlanOptions& options) {
  // Segments by exact interval, oldest first.
  std::map<std::pair<int64_t, int64_t>, std::vector<const v1::SegmentDescriptor*>> by_interval;
  int64_t newest_end_ms = std::numeric_limits<int64_t>::min();
  for (const v1::SegmentDescriptor& s : segments) {
    if (!s.used()) continue;
    newest_end_ms = std::max(newest_end_ms, s.interval().end_ms());
    if (options.interval && !Overlaps(s.interval(), *options.interval)) continue;
    by_interval[{s.interval().start_ms(), s.interval().end_ms()}].push_back(&s);
  }
  CompactionPlan plan;
  if (by_interval.empty()) return plan;
  const int64_t cutoff_ms =
      std::min(absl::ToUnixMillis(now), newest_end_ms) -
      absl::ToInt64Milliseconds(policy.skip_offset_from_latest);

  auto add_pending = [&](const v1::Interval& interval, int32_t count, int64_t rows,
                         std::string reason) {
    if (static_cast<int>(plan.pending.size()) >= kMaxPendingCompactions) return;
    v1::PendingCompaction& p = plan.pending.emplace_back();
    *p.mutable_interval() = interval;
    p.set_segments(count);
    p.set_rows(rows);
    p.set_reason(std::move(reason));
  };
  for (auto& [bounds, in_interval] : by_interval) {
    std::vector<const v1::SegmentDescriptor*> small;
    for (const v1::SegmentDescriptor* s : in_interval) {
      if (s->num_rows() < policy.target_rows_per_segment) small.push_back(s);
    }
    if (small.size() < 2) continue;  // compact already
    v1::Interval interval;
    interval.set_start_ms(bounds.first);
    interval.set_end_ms(bounds.second);
    int64_t small_rows = 0;
    for (const v1::SegmentDescriptor* s : small) small_rows += s->num_rows();
    const int32_t small_count = static_cast<int32_t>(small.size());

    if (!options.ignore_skip_offset && bounds.second > cutoff_ms) {
      add_pending(interval, small_count, small_rows, "within skipOffsetFromLatest");
      continue;
    }
    int not_handed_off = 0;
    for (const v1::SegmentDescriptor* s : in_interval) {
      not_handed_off += s->handoff_state() != v1::HANDOFF_STATE_HANDED_OFF;
    }
    if (not_handed_off > 0) {
      add_pending(interval, small_count, small_rows,
                  absl::StrCat("waiting for handoff of ", not_handed_off, " segment",
                               not_handed_off == 1 ? "" : "s"));
      continue;
    }

    std::sort(small.begin(), small.end(),
              [](const v1::SegmentDescriptor* a, const v1::SegmentDescriptor* b) {
                const int64_t fa = FirstOffset(*a), fb = FirstOffset(*b);
                return fa != fb ? fa < fb : a->id() < b->id();
              });
    CompactionJob job;
    job.interval = interval;
    std::vector<v1::SegmentDescriptor> group;
    int64_t group_rows = 0;
    auto close_group = [&]() {
      if (group.size() >= 2) {
        job.input_segments += static_cast<int32_t>(group.size());
        job.input_rows += group_rows;
        job.groups.push_back(std::move(group));
      }
      group.clear();
      group_rows = 0;
    };
    // Segments sharing records with the group being cut (an offset reset
    // ingested them again) wait for a later round of groups.
    std::vector<const v1::SegmentDescriptor*> remaining = small;
    while (!remaining.empty()) {
      std::vector<const v1::SegmentDescriptor*> deferred;
      for (const v1::SegmentDescriptor* s : remaining) {
        if (SharesRecordsWith(*s, group)) {
          deferred.push_back(s);
          continue;
        }
        if (!group.empty() && (group_rows + s->num_rows() > policy.target_rows_per_segment ||
                               static_cast<int32_t>(group.size()) >= policy.max_input_segments)) {
          close_group();
        }
        group.push_back(*s);
        group_rows += s->num_rows();
      }
      close_group();
      remaining = std::move(deferred);
    }
    if (job.groups.empty()) {
      add_pending(interval, small_count, small_rows,
                  "no two small segments fit in targetRowsPerSegment together");
      continue;
    }
    for (const v1::SegmentDescriptor* s : in_interval) job.interval_segments.push_back(*s);
    add_pending(interval, small_count, small_rows, "queued");
    plan.jobs.push_back(std::move(job));
  }
  return plan;
}

}  // namespace sluice::supervisor
