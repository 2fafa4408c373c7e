// The compaction planner: which intervals become jobs, how their small
// segments are grouped, and why the others wait.
#include "supervisor/compaction/compaction_planner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sluice::supervisor {
namespace {

constexpr int64_t kHour = 3600000;
constexpr int64_t kDay = 24 * kHour;
const absl::Time kNow = absl::FromUnixMillis(100 * kDay);

// A used, handed-off segment of hour `hour` (counted back from kNow) holding
// `rows` rows, built from offsets [first, first + rows) of partition 0.
v1::SegmentDescriptor Seg(const std::string& id, int64_t hour_start_ms, int64_t rows,
                          int64_t first) {
  v1::SegmentDescriptor s;
  s.set_id(id);
  s.set_datasource("wiki");
  s.mutable_interval()->set_start_ms(hour_start_ms);
  s.mutable_interval()->set_end_ms(hour_start_ms + kHour);
  s.set_version("2026-01-01T00:00:00.000Z");
  s.set_num_rows(rows);
  s.set_used(true);
  s.set_handoff_state(v1::HANDOFF_STATE_HANDED_OFF);
  v1::PartitionRange* r = s.mutable_provenance()->add_ranges();
  r->set_partition(0);
  r->set_start_offset(first);
  r->set_end_offset(first + rows);
  r->set_rows(rows);
  return s;
}

const int64_t kOld = 100 * kDay - 3 * kDay;     // well before the skip offset
const int64_t kRecent = 100 * kDay - 2 * kHour;  // within P1D

CompactionPolicy Policy(int64_t target = 1000, int32_t max_inputs = 100) {
  CompactionPolicy p;
  p.target_rows_per_segment = target;
  p.max_input_segments = max_inputs;
  p.skip_offset_from_latest = absl::Hours(24);
  return p;
}

// The plan, with ingestion going on: a large segment of the last hour
// (alone in its interval, so in no job and no pending entry) puts the end
// of the newest segment at now.
CompactionPlan Plan(std::vector<v1::SegmentDescriptor> segments, const CompactionPolicy& policy,
                    const PlanOptions& options = {}) {
  segments.push_back(Seg("head", 100 * kDay - kHour, 1000000000, 0));
  return PlanCompactions(segments, policy, kNow, options);
}

std::vector<std::string> Ids(const std::vector<v1::SegmentDescriptor>& group) {
  std::vector<std::string> ids;
  for (const auto& s : group) ids.push_back(s.id());
  return ids;
}

TEST(CompactionPlanner, OldIntervalIsAJobRecentOneWaits) {
  std::vector<v1::SegmentDescriptor> segments;
  for (int i = 0; i < 10; ++i) {
    // Listed in reverse: the plan orders inputs by offset.
    segments.push_back(Seg(absl::StrCat("old", 9 - i), kOld, 10, 1000 - 100 * i));
  }
  for (int i = 0; i < 3; ++i) segments.push_back(Seg(absl::StrCat("new", i), kRecent, 10, i * 10));
  const CompactionPlan plan = Plan(segments, Policy());
  ASSERT_EQ(plan.jobs.size(), 1u);
  const CompactionJob& job = plan.jobs[0];
  EXPECT_EQ(job.interval.start_ms(), kOld);
  EXPECT_EQ(job.interval.end_ms(), kOld + kHour);
  ASSERT_EQ(job.groups.size(), 1u);
  EXPECT_EQ(Ids(job.groups[0]), (std::vector<std::string>{"old0", "old1", "old2", "old3", "old4",
                                                          "old5", "old6", "old7", "old8", "old9"}));
  EXPECT_EQ(job.input_segments, 10);
  EXPECT_EQ(job.input_rows, 100);
  ASSERT_EQ(plan.pending.size(), 2u);
  EXPECT_EQ(plan.pending[0].reason(), "queued");
  EXPECT_EQ(plan.pending[0].segments(), 10);
  EXPECT_EQ(plan.pending[1].reason(), "within skipOffsetFromLatest");
  EXPECT_EQ(plan.pending[1].interval().start_ms(), kRecent);
  EXPECT_EQ(plan.pending[1].segments(), 3);
  EXPECT_EQ(plan.pending[1].rows(), 30);

  // Ignoring the skip offset (CompactDataSource): both, oldest first.
  PlanOptions all;
  all.ignore_skip_offset = true;
  const CompactionPlan forced = Plan(segments, Policy(), all);
  ASSERT_EQ(forced.jobs.size(), 2u);
  EXPECT_EQ(forced.jobs[0].interval.start_ms(), kOld);
  EXPECT_EQ(forced.jobs[1].interval.start_ms(), kRecent);

  // An interval filter keeps the overlapping intervals only.
  PlanOptions filtered = all;
  filtered.interval.emplace();
  filtered.interval->set_start_ms(kRecent + 1);
  filtered.interval->set_end_ms(kRecent + 2);
  const CompactionPlan one = Plan(segments, Policy(), filtered);
  ASSERT_EQ(one.jobs.size(), 1u);
  EXPECT_EQ(one.jobs[0].interval.start_ms(), kRecent);
  EXPECT_EQ(one.pending.size(), 1u);
}

TEST(CompactionPlanner, SkipOffsetCountsFromTheNewestSegmentWhenItIsOlderThanNow) {
  // Ingestion stopped 10 days ago: the newest segment ends then, and the
  // interval just before it is within the skip offset of it.
  const int64_t last = 100 * kDay - 10 * kDay;
  std::vector<v1::SegmentDescriptor> segments = {Seg("a", last - kHour, 10, 0),
                                                 Seg("b", last - kHour, 10, 10),
                                                 Seg("c", last, 10, 20)};
  const CompactionPlan plan = PlanCompactions(segments, Policy(), kNow, {});
  EXPECT_TRUE(plan.jobs.empty());
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].reason(), "within skipOffsetFromLatest");
}

TEST(CompactionPlanner, GroupsRespectTargetRowsAndMaxInputs) {
  std::vector<v1::SegmentDescriptor> segments;
  // 7 segments of 300 rows, target 1000: groups of 3, 3 and a lone one (dropped).
  for (int i = 0; i < 7; ++i) segments.push_back(Seg(absl::StrCat("s", i), kOld, 300, i * 300));
  CompactionPlan plan = Plan(segments, Policy(1000));
  ASSERT_EQ(plan.jobs.size(), 1u);
  ASSERT_EQ(plan.jobs[0].groups.size(), 2u);
  EXPECT_EQ(Ids(plan.jobs[0].groups[0]), (std::vector<std::string>{"s0", "s1", "s2"}));
  EXPECT_EQ(Ids(plan.jobs[0].groups[1]), (std::vector<std::string>{"s3", "s4", "s5"}));
  EXPECT_EQ(plan.jobs[0].input_segments, 6);
  EXPECT_EQ(plan.jobs[0].input_rows, 1800);
  EXPECT_EQ(plan.jobs[0].interval_segments.size(), 7u);

  // maxInputSegments 2: three pairs, the seventh alone.
  plan = Plan(segments, Policy(100000, 2));
  ASSERT_EQ(plan.jobs.size(), 1u);
  ASSERT_EQ(plan.jobs[0].groups.size(), 3u);
  for (const auto& group : plan.jobs[0].groups) EXPECT_EQ(group.size(), 2u);

  // No two fit together: no job, pending says why.
  plan = Plan(segments, Policy(500));
  EXPECT_TRUE(plan.jobs.empty());
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].reason(), "no two small segments fit in targetRowsPerSegment together");
}

// After an offset reset, an interval holds the same records twice: once in
// a segment (maybe compacted) of the first reading, once in one of the
// second. Such segments never share a group; each reading is merged apart.
TEST(CompactionPlanner, SegmentsHoldingTheSameRecordsAreNeverMerged) {
  std::vector<v1::SegmentDescriptor> segments = {
      Seg("first_a", kOld, 100, 0), Seg("first_b", kOld, 100, 100),
      Seg("again_a", kOld, 150, 0), Seg("again_b", kOld, 50, 150)};
  CompactionPlan plan = Plan(segments, Policy(100000));
  ASSERT_EQ(plan.jobs.size(), 1u);
  ASSERT_EQ(plan.jobs[0].groups.size(), 2u);
  EXPECT_EQ(Ids(plan.jobs[0].groups[0]), (std::vector<std::string>{"again_a", "again_b"}));
  EXPECT_EQ(Ids(plan.jobs[0].groups[1]), (std::vector<std::string>{"first_a", "first_b"}));
  EXPECT_EQ(plan.jobs[0].input_segments, 4);
}

TEST(CompactionPlanner, CompactIntervalsAndUnusedSegmentsAreLeftAlone) {
  std::vector<v1::SegmentDescriptor> segments = {Seg("big", kOld, 1000, 0),
                                                 Seg("small", kOld, 10, 1000)};
  v1::SegmentDescriptor replaced = Seg("replaced", kOld, 10, 2000);
  replaced.set_used(false);
  segments.push_back(replaced);
  const CompactionPlan plan = Plan(segments, Policy(1000));
  EXPECT_TRUE(plan.jobs.empty());
  EXPECT_TRUE(plan.pending.empty());
}

TEST(CompactionPlanner, SegmentsNotHandedOffBlockTheirInterval) {
  std::vector<v1::SegmentDescriptor> segments = {Seg("a", kOld, 10, 0), Seg("b", kOld, 10, 10),
                                                 Seg("c", kOld, 10, 20), Seg("d", kOld, 2000, 30)};
  segments[1].set_handoff_state(v1::HANDOFF_STATE_PENDING);
  segments[3].set_handoff_state(v1::HANDOFF_STATE_FAILED);  // at target, still blocks
  const CompactionPlan plan = Plan(segments, Policy(1000));
  EXPECT_TRUE(plan.jobs.empty());
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].reason(), "waiting for handoff of 2 segments");
  EXPECT_EQ(plan.pending[0].segments(), 3);
}

// Appends after an earlier compaction: the compacted segment, still below
// the target, and the new small ones form a new job.
TEST(CompactionPlanner, AppendsAfterACompactionFormANewJob) {
  v1::SegmentDescriptor compacted = Seg("compacted", kOld, 100, 0);
  compacted.mutable_provenance()->add_ranges()->set_start_offset(500);
  compacted.set_version("2026-01-01T00:00:00.001Z");
  std::vector<v1::SegmentDescriptor> segments = {Seg("late2", kOld, 10, 1100), compacted,
                                                 Seg("late1", kOld, 10, 1000)};
  const CompactionPlan plan = Plan(segments, Policy(1000));
  ASSERT_EQ(plan.jobs.size(), 1u);
  ASSERT_EQ(plan.jobs[0].groups.size(), 1u);
  EXPECT_EQ(Ids(plan.jobs[0].groups[0]),
            (std::vector<std::string>{"compacted", "late1", "late2"}));
  EXPECT_EQ(plan.jobs[0].input_rows, 120);
}

TEST(CompactionPlanner, PendingIsBounded) {
  std::vector<v1::SegmentDescriptor> segments;
  for (int h = 0; h < kMaxPendingCompactions + 20; ++h) {
    segments.push_back(Seg(absl::StrCat("a", h), kOld - h * kHour, 10, 0));
    segments.push_back(Seg(absl::StrCat("b", h), kOld - h * kHour, 10, 10));
  }
  const CompactionPlan plan = Plan(segments, Policy());
  EXPECT_EQ(plan.jobs.size(), static_cast<size_t>(kMaxPendingCompactions + 20));
  EXPECT_EQ(plan.pending.size(), static_cast<size_t>(kMaxPendingCompactions));
  EXPECT_LT(plan.jobs[0].interval.start_ms(), plan.jobs[1].interval.start_ms());
}

}  // namespace
}  // namespace sluice::supervisor
