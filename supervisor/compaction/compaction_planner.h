// Which intervals of a datasource to compact, and how: a plan made from the
// datasource's used segments and its compaction policy (common/spec.h).
//
// An interval (segments are grouped by their exact interval) is a job when
// it holds two or more segments below targetRowsPerSegment that can be
// merged: its small segments, sorted by their first Kafka offset (then id),
// are cut greedily into groups of at most targetRowsPerSegment rows and
// maxInputSegments segments; a group of one segment is dropped (nothing to
// merge). Segments at or above the target are left alone. An interval with
// several small segments that is not a job is a pending entry saying why:
// "within skipOffsetFromLatest" (it ends later than min(now, end of the
// newest used segment) - skipOffsetFromLatest), "waiting for handoff of N
// segments" (a segment of the interval is not handed off yet, or its copy
// failed verification: only handed-off segments are compacted), "no two
// small segments fit in targetRowsPerSegment together"; the jobs are
// pending entries too, "queued". Jobs and pending entries are oldest first.
#ifndef SLUICE_SUPERVISOR_COMPACTION_COMPACTION_PLANNER_H_
#define SLUICE_SUPERVISOR_COMPACTION_COMPACTION_PLANNER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "common/spec.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::supervisor {

// Pending entries a plan lists at most (CompactionStatus.pending).
inline constexpr int kMaxPendingCompactions = 100;

struct PlanOptions {
  // Only segment intervals overlapping this one; nullopt: all.
  std::optional<v1::Interval> interval;
  // Compact intervals within skipOffsetFromLatest too (CompactDataSource).
  bool ignore_skip_offset = false;
};

struct CompactionJob {
  v1::Interval interval;
  // Each group becomes one compacted segment; together they are the
  // segments the compaction replaces.
  std::vector<std::vector<v1::SegmentDescriptor>> groups;
  // Every used segment of the interval (the inputs and the others), for
  // choosing the compaction's version.
  std::vector<v1::SegmentDescriptor> interval_segments;
  int32_t input_segments = 0;
  int64_t input_rows = 0;
};

struct CompactionPlan {
  std::vector<CompactionJob> jobs;
  // At most kMaxPendingCompactions.
  std::vector<v1::PendingCompaction> pending;
};

// `segments`: the datasource's segments (unused ones are ignored).
CompactionPlan PlanCompactions(const std::vector<v1::SegmentDescriptor>& segments,
                               const CompactionPolicy& policy, absl::Time now,
                               const PlanOptions& options);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_COMPACTION_PLANNER_H_
