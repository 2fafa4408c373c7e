#include "task/open_segments.h"

#include <gtest/gtest.h>

#include <vector>

#include "task/testing/unimplemented_supervisor_client.h"

namespace sluice::task {
namespace {

constexpr int64_t kHour = 3'600'000;

class FakeRow : public ParsedRow {
 public:
  explicit FakeRow(int64_t ms) { timestamp_ms_ = ms; }
};

class FakeIndex : public SegmentIndex {
 public:
  absl::Status Add(const ParsedRow&, int32_t, int64_t) override {
    ++rows_;
    return absl::OkStatus();
  }
  int64_t rows() const override { return rows_; }
  int64_t estimated_bytes() const override { return rows_ * 10; }
  absl::StatusOr<int64_t> Spill(const std::string&, const std::string&) override { return rows_; }

 private:
  int64_t rows_ = 0;
};

class FakeEngine : public SegmentEngine {
 public:
  std::unique_ptr<RowParser> NewParser() override { return nullptr; }
  std::unique_ptr<SegmentIndex> NewIndex(const v1::Interval& interval) override {
    intervals.push_back(interval);
    return std::make_unique<FakeIndex>();
  }
  absl::StatusOr<BuiltSegment> BuildSegment(const std::vector<std::string>&,
                                            const SegmentBuildInfo&,
                                            const std::string&) override {
    return absl::UnimplementedError("not here");
  }
  std::vector<v1::Interval> intervals;
};

// Allocates <sequence>_<start> with partition number = calls so far; an
// interval can be skewed or an error injected.
class FakeAllocator : public SegmentAllocator {
 public:
  absl::StatusOr<v1::AllocateSegmentResponse> Allocate(const std::string& sequence_name,
                                                       int64_t start_ms,
                                                       int64_t end_ms) override {
    ++calls;
    if (!error.ok()) return error;
    v1::AllocateSegmentResponse response;
    response.set_segment_id(sequence_name + "_" + std::to_string(start_ms));
    response.set_version("v1");
    response.set_partition_num(calls);
    response.mutable_interval()->set_start_ms(start_ms + skew_ms);
    response.mutable_interval()->set_end_ms(end_ms);
    return response;
  }
  int calls = 0;
  int64_t skew_ms = 0;
  absl::Status error;
};

Sequence Seq(int32_t id) {
  Sequence s;
  s.id = id;
  s.name = "b_" + std::to_string(id);
  return s;
}

class OpenSegmentsTest : public ::testing::Test {
 protected:
  OpenSegmentsTest() : segments_(&engine_, &allocator_, Granularity(Granularity::Unit::kHour),
                                 {0, 3}) {}
  FakeEngine engine_;
  FakeAllocator allocator_;
  OpenSegments segments_;
};

TEST_F(OpenSegmentsTest, AllocatesOncePerSequenceAndInterval) {
  absl::StatusOr<SegmentBuild*> a = segments_.For(Seq(0), 10);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->record.segment_id(), "b_0_0");
  EXPECT_EQ((*a)->record.interval_end_ms(), kHour);
  EXPECT_EQ((*a)->record.partition_num(), 1);
  ASSERT_NE((*a)->index, nullptr);
  EXPECT_EQ((*a)->records_per_slot.size(), 2u);
  absl::StatusOr<SegmentBuild*> same = segments_.For(Seq(0), kHour - 1);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, *a);
  absl::StatusOr<SegmentBuild*> next_hour = segments_.For(Seq(0), kHour);
  ASSERT_TRUE(next_hour.ok());
  EXPECT_NE(*next_hour, *a);
  EXPECT_EQ((*next_hour)->record.interval_start_ms(), kHour);
  absl::StatusOr<SegmentBuild*> other_sequence = segments_.For(Seq(1), 10);
  ASSERT_TRUE(other_sequence.ok());
  EXPECT_EQ((*other_sequence)->record.segment_id(), "b_1_0");
  // Back to the first: no new allocation.
  ASSERT_TRUE(segments_.For(Seq(0), 20).ok());
  EXPECT_EQ(allocator_.calls, 3);
  EXPECT_EQ(segments_.size(), 3u);
  ASSERT_EQ(engine_.intervals.size(), 3u);
  EXPECT_EQ(engine_.intervals[1].start_ms(), kHour);
}

TEST_F(OpenSegmentsTest, AnAllocationForAnotherIntervalIsRefused) {
  allocator_.skew_ms = 1;
  absl::StatusOr<SegmentBuild*> build = segments_.For(Seq(0), 10);
  EXPECT_EQ(build.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(segments_.size(), 0u);
}

TEST_F(OpenSegmentsTest, AllocationErrorsSayWhatWasAllocated) {
  allocator_.error = absl::InvalidArgumentError("no such datasource");
  absl::StatusOr<SegmentBuild*> build = segments_.For(Seq(2), 10);
  EXPECT_EQ(build.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(build.status().message().find("allocating a segment for b_2"), std::string::npos)
      << build.status();
  allocator_.error = absl::CancelledError("stopped");
  build = segments_.For(Seq(2), 10);
  EXPECT_EQ(build.status(), absl::CancelledError("stopped"));
}

TEST_F(OpenSegmentsTest, SpillsTakeTheIndexesAndKeepTheAllocations) {
  SegmentBuild* a = *segments_.For(Seq(0), 10);
  ASSERT_TRUE(a->index->Add(FakeRow(10), 0, 5).ok());
  a->records_per_slot[1] = 1;
  ASSERT_TRUE(segments_.For(Seq(1), 10).ok());  // empty: nothing to spill
  int64_t next = 7;
  auto spills = segments_.TakeSpills(&next);
  ASSERT_EQ(spills.size(), 1u);
  EXPECT_EQ(spills[0].first, "0_0_7.spill");
  EXPECT_EQ(spills[0].second->rows(), 1);
  EXPECT_EQ(next, 8);
  EXPECT_EQ(a->index, nullptr);
  EXPECT_EQ(a->record.spilled_rows(), 0);  // counted by the persister, from the spill
  EXPECT_EQ(segments_.SpillFiles(), (std::set<std::string>{"0_0_7.spill"}));

  // The next row gets a new index for the same allocation.
  SegmentBuild* again = *segments_.For(Seq(0), 11);
  EXPECT_EQ(again, a);
  EXPECT_NE(again->index, nullptr);
  EXPECT_EQ(allocator_.calls, 2);

  std::vector<state::SegmentState> records = segments_.RecordsOf(0);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].records_by_partition().at(3), 1);
  EXPECT_EQ(records[0].records_by_partition().count(0), 0u);
  state::RestorePoint point;
  segments_.AddTo(&point);
  EXPECT_EQ(point.segments_size(), 2);
}

TEST_F(OpenSegmentsTest, RestoredSegmentsAndPruning) {
  state::SegmentState record;
  record.set_sequence_id(4);
  record.set_interval_start_ms(0);
  record.set_interval_end_ms(kHour);
  record.set_segment_id("b_4_0");
  record.set_spilled_rows(12);
  record.add_spill_files("4_0_1.spill");
  (*record.mutable_records_by_partition())[3] = 12;
  (*record.mutable_records_by_partition())[9] = 1;  // not ours: dropped
  ASSERT_TRUE(segments_.Restore(record, {"/nonexistent/4_0_1.spill"}).ok());
  absl::StatusOr<SegmentBuild*> build = segments_.For(Seq(4), 5);
  ASSERT_TRUE(build.ok());
  EXPECT_EQ(allocator_.calls, 0);  // restored with its allocation
  EXPECT_EQ((*build)->rows_total, 12);
  EXPECT_EQ((*build)->records_per_slot, (std::vector<int64_t>{0, 12}));
  ASSERT_TRUE(segments_.For(Seq(5), 5).ok());
  segments_.Prune(4);
  EXPECT_EQ(segments_.size(), 1u);
  EXPECT_TRUE(segments_.RecordsOf(4).empty());
  EXPECT_EQ(segments_.RecordsOf(5).size(), 1u);
  EXPECT_TRUE(segments_.SpillFiles().empty());
}

// The supervisor as SegmentAllocator sees it: AllocateSegment only.
class AllocatingSupervisor : public testing::UnimplementedSupervisorClient {
 public:
  absl::StatusOr<v1::AllocateSegmentResponse> AllocateSegment(
      const v1::AllocateSegmentRequest& request) override {
    requests.push_back(request);
    if (!answers.empty()) {
      absl::Status next = answers.front();
      answers.erase(answers.begin());
      if (!next.ok()) return next;
    }
    v1::AllocateSegmentResponse response;
    response.set_segment_id("s");
    *response.mutable_interval() = request.interval();
    return response;
  }

  std::vector<absl::Status> answers;
  std::vector<v1::AllocateSegmentRequest> requests;
};

SupervisorSegmentAllocatorOptions AllocatorOptions(AllocatingSupervisor* supervisor,
                                                   std::vector<absl::Duration>* sleeps,
                                                   bool stopped = false) {
  SupervisorSegmentAllocatorOptions options;
  options.datasource = "wiki";
  options.task_id = "t1";
  options.supervisor = supervisor;
  options.min_backoff = absl::Milliseconds(100);
  options.max_backoff = absl::Milliseconds(300);
  options.sleep = [sleeps, stopped](absl::Duration d) {
    sleeps->push_back(d);
    return !stopped;
  };
  return options;
}

TEST(SupervisorSegmentAllocatorTest, RetriesWhatMayPassWithBackoff) {
  AllocatingSupervisor supervisor;
  supervisor.answers = {absl::UnavailableError("down"), absl::DeadlineExceededError("slow"),
                        absl::ResourceExhaustedError("busy"), absl::UnavailableError("down")};
  std::vector<absl::Duration> sleeps;
  SupervisorSegmentAllocator allocator(AllocatorOptions(&supervisor, &sleeps));
  absl::StatusOr<v1::AllocateSegmentResponse> response = allocator.Allocate("b_0", 0, kHour);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(supervisor.requests.size(), 5u);
  EXPECT_EQ(supervisor.requests[0].datasource(), "wiki");
  EXPECT_EQ(supervisor.requests[0].task_id(), "t1");
  EXPECT_EQ(supervisor.requests[0].sequence_name(), "b_0");
  EXPECT_EQ(supervisor.requests[0].interval().end_ms(), kHour);
  // Doubling from min_backoff up to max_backoff, each wait jittered down by
  // at most common/retry's default 20%.
  const std::vector<absl::Duration> nominal = {absl::Milliseconds(100), absl::Milliseconds(200),
                                               absl::Milliseconds(300), absl::Milliseconds(300)};
  ASSERT_EQ(sleeps.size(), nominal.size());
  for (size_t i = 0; i < nominal.size(); ++i) {
    EXPECT_LE(sleeps[i], nominal[i]) << i;
    EXPECT_GE(sleeps[i], nominal[i] * 0.8) << i;
  }
}

TEST(SupervisorSegmentAllocatorTest, OtherErrorsAreFinalAndAStopCancels) {
  AllocatingSupervisor supervisor;
  supervisor.answers = {absl::FailedPreconditionError("no")};
  std::vector<absl::Duration> sleeps;
  SupervisorSegmentAllocator allocator(AllocatorOptions(&supervisor, &sleeps));
  EXPECT_EQ(allocator.Allocate("b_0", 0, kHour).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(sleeps.empty());

  AllocatingSupervisor down;
  down.answers = {absl::UnavailableError("down")};
  SupervisorSegmentAllocator stopping(AllocatorOptions(&down, &sleeps, /*stopped=*/true));
  EXPECT_EQ(stopping.Allocate("b_0", 0, kHour).status(), absl::CancelledError("stopped"));
  EXPECT_EQ(down.requests.size(), 1u);
}

// A closed sequence's segments whose rows are all in memory leave for their
// direct build (named in the record as built_file); a segment with a spill
// keeps the spill path (its index spilled by TakeSpills, the publisher
// merges); other sequences' segments are not touched.
TEST_F(OpenSegmentsTest, TakeBuildsTakesTheSegmentsWithNoSpillOfThatSequence) {
  FakeRow row(10);
  auto add = [&](int32_t sequence, int64_t ms) {
    absl::StatusOr<SegmentBuild*> build = segments_.For(Seq(sequence), ms);
    ASSERT_TRUE(build.ok()) << build.status();
    ASSERT_TRUE((*build)->index->Add(row, 0, 0).ok());
    ++(*build)->records_per_slot[0];
  };
  add(0, 10);          // sequence 0, hour 0: spilled below, then more rows
  int64_t next = 5;
  auto spills = segments_.TakeSpills(&next);
  ASSERT_EQ(spills.size(), 1u);
  add(0, 20);
  add(0, kHour + 1);   // sequence 0, hour 1: in memory only
  add(1, 30);          // sequence 1: open

  std::vector<OpenSegments::DirectBuild> builds = segments_.TakeBuilds(0, &next);
  ASSERT_EQ(builds.size(), 1u);
  EXPECT_EQ(builds[0].name, "0_3600000_6.sluice");
  EXPECT_EQ(builds[0].record.segment_id(), "b_0_3600000");
  EXPECT_EQ(builds[0].record.spill_files_size(), 0);
  EXPECT_EQ(builds[0].record.records_by_partition().at(0), 1);
  ASSERT_NE(builds[0].index, nullptr);
  EXPECT_EQ(builds[0].index->rows(), 1);
  EXPECT_EQ(next, 7);
  const std::vector<state::SegmentState> records = segments_.RecordsOf(0);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].built_file(), "");  // the spilled segment
  EXPECT_EQ(records[0].spill_files_size(), 1);
  EXPECT_EQ(records[1].built_file(), "0_3600000_6.sluice");
  EXPECT_EQ(records[1].spilled_rows(), 0);  // counted by the persister, from the file
  EXPECT_EQ(segments_.SpillFiles().count("0_3600000_6.sluice"), 1u);
  // The rest spills: sequence 0's spilled segment and the open sequence.
  EXPECT_EQ(segments_.TakeSpills(&next).size(), 2u);
}

}  // namespace
}  // namespace sluice::task
