// PersistPlanner with the columnar engine, real open segments, router and
// persister thread (the allocator answers as the supervisor would): when it
// persists (maxRowsInMemory, half of maxBytesInMemory,
// intermediatePersistPeriod, each at its threshold and not before) and what
// (every index spilled, or built directly for a closed sequence without
// spills, and the restore point naming them with the offsets, counters,
// numbering and row counts).
#include "task/persist_planner.h"

#include <gtest/gtest.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "task/columnar_engine.h"
#include "task/testing/interval_allocator.h"

namespace sluice::task {
namespace {

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kBaseTimeMs = 1795996800000;  // 2026-11-30T00:00:00Z

// Even n in the first hour, odd n in the second; every record its own row.
std::string Record(int64_t n) {
  const int64_t time = kBaseTimeMs + (n % 2) * kHour + (n / 2) * 1000;
  return absl::StrCat(R"({"timestamp":)", time, R"(,"key":"k)", n, R"("})");
}

class PersistPlannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/persist_planner_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir_).ok());
    ASSERT_TRUE(MakeDirs(dir_ + "/spills").ok());
    v1::DataSchema schema;
    schema.mutable_timestamp_spec()->set_column("timestamp");
    schema.mutable_timestamp_spec()->set_format("millis");
    schema.mutable_granularity_spec()->set_segment_granularity("HOUR");
    v1::MetricSpec* count = schema.add_metrics_spec();
    count->set_type("count");
    count->set_name("count");
    auto engine = NewColumnarEngine(schema);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    parser_ = engine_->NewParser();
    settings_.partitions = {0};
    settings_.tuning.set_max_rows_in_memory(1000);
    settings_.tuning.set_max_bytes_in_memory(1 << 30);
    settings_.timings.intermediate_persist_period = absl::Hours(1);
    segments_ = std::make_unique<OpenSegments>(engine_.get(), &allocator_,
                                               Granularity(Granularity::Unit::kHour),
                                               std::vector<int32_t>{0});
    SequencePublisherOptions publisher;
    publisher.task_id = "t1";
    publisher.datasource = "wiki";
    publisher.topic = "wiki";
    publisher.task_dir = dir_;
    publisher.metrics = metrics_;
    publisher_ = std::make_unique<SequencePublisher>(std::move(publisher));
  }
  void TearDown() override {
    if (planner_ != nullptr) planner_->Stop();
  }

  // Sequence 0 from offset 0; with `closed_at`, sequence 0 ends there and
  // sequence 1 starts.
  void Route(int64_t closed_at = -1) {
    std::vector<std::pair<int32_t, OffsetMap>> checkpoints = {{0, {{0, 0}}}};
    if (closed_at >= 0) checkpoints.push_back({1, {{0, closed_at}}});
    auto list = SequenceList::FromCheckpoints("wiki", checkpoints, {0});
    ASSERT_TRUE(list.ok()) << list.status();
    router_.Refresh(*list);
  }

  PersistPlanner& Planner() {
    PersistPlannerOptions options;
    options.settings = &settings_;
    options.segments = segments_.get();
    options.router = &router_;
    options.publisher = publisher_.get();
    options.persister.task_dir = dir_;
    options.persister.metrics = metrics_;
    options.persister.log_prefix = "[task t1]";
    planner_ = std::make_unique<PersistPlanner>(std::move(options));
    return *planner_;
  }

  // Records [from, to) of partition 0 into the index of their route's
  // segment, as the ingester adds them.
  void Add(int64_t from, int64_t to) {
    for (int64_t n = from; n < to; ++n) {
      const int route = router_.Route(0, n);
      ASSERT_GE(route, 0);
      RowParseError error;
      const std::string value = Record(n);
      const ParsedRow* row = parser_->Parse(value, &error);
      ASSERT_NE(row, nullptr) << error.message;
      auto build = segments_->For(router_.routes()[route], row->timestamp_ms());
      ASSERT_TRUE(build.ok()) << build.status();
      ASSERT_TRUE((*build)->index->Add(*row, 0, n).ok());
      ++(*build)->records_per_slot[0];
      router_.counts(route, 0).set_rows(router_.counts(route, 0).rows() + 1);
      ++counters_.processed;
      ++counters_.rows_in_memory;
    }
  }

  state::RestorePoint Written() {
    auto point = Persister::LoadRestorePoint(dir_ + "/restore_point.json");
    EXPECT_TRUE(point.ok()) << point.status();
    return point.ok() && point->has_value() ? **point : state::RestorePoint();
  }
  bool InSpillDir(const std::string& name) const { return PathExists(dir_ + "/spills/" + name); }

  std::string dir_;
  const TaskMetrics metrics_ = TaskMetrics::For(nullptr, "wiki");
  std::unique_ptr<SegmentEngine> engine_;
  std::unique_ptr<RowParser> parser_;
  TaskSettings settings_;
  sluice::testing::IntervalAllocator allocator_;
  RecordRouter router_{std::vector<int32_t>{0}};
  std::unique_ptr<OpenSegments> segments_;
  std::unique_ptr<SequencePublisher> publisher_;
  std::unique_ptr<PersistPlanner> planner_;
  IngestCounters counters_;
};

TEST_F(PersistPlannerTest, MaxRowsInMemoryIsATrigger) {
  settings_.tuning.set_max_rows_in_memory(5);
  PersistPlanner& planner = Planner();
  IngestCounters counters;
  counters.rows_in_memory = 4;
  planner.OnRowAdded(counters);
  EXPECT_FALSE(planner.wanted());
  counters.rows_in_memory = 5;
  planner.OnRowAdded(counters);
  EXPECT_TRUE(planner.wanted());
}

// Each set persists at half of maxBytesInMemory: the set being persisted
// and the one filling meanwhile stay within it together.
TEST_F(PersistPlannerTest, HalfOfMaxBytesInMemoryIsATrigger) {
  settings_.tuning.set_max_bytes_in_memory(1000);
  PersistPlanner& planner = Planner();
  IngestCounters counters;
  counters.bytes_in_memory = 499;
  planner.OnRowAdded(counters);
  EXPECT_FALSE(planner.wanted());
  counters.bytes_in_memory = 500;
  planner.OnRowAdded(counters);
  EXPECT_TRUE(planner.wanted());
}

TEST_F(PersistPlannerTest, IntermediatePersistPeriodIsATriggerOnceSomethingWasRead) {
  PersistPlanner& planner = Planner();
  const absl::Time start = absl::Now();
  planner.StartPeriod();
  planner.OnTime(absl::Now() + absl::Hours(2));
  EXPECT_FALSE(planner.wanted());  // nothing read: nothing to persist
  planner.MarkDirty();
  planner.OnTime(start + absl::Hours(1) - absl::Seconds(1));
  EXPECT_FALSE(planner.wanted());
  planner.OnTime(absl::Now() + absl::Hours(1));
  EXPECT_TRUE(planner.wanted());
}

TEST_F(PersistPlannerTest, APersistSpillsEveryIndexAndNamesTheSpillsInTheRestorePoint) {
  Route();
  settings_.tuning.set_max_rows_in_memory(5);
  PersistPlanner& planner = Planner();
  planner.Start();
  Add(0, 5);  // 3 rows in the first hour, 2 in the second
  planner.MarkDirty();
  planner.OnRowAdded(counters_);
  ASSERT_TRUE(planner.wanted());
  counters_.unparseable = 2;
  counters_.thrown_away = 1;
  counters_.processed_bytes = 99;
  planner.Submit({}, {{0, 8}}, counters_);
  EXPECT_FALSE(planner.wanted());
  EXPECT_FALSE(planner.dirty());
  EXPECT_EQ(planner.submitted(), 1);
  ASSERT_TRUE(planner.WaitPersisted().ok());
  EXPECT_EQ(planner.written(), 1);
  state::RestorePoint point = Written();
  EXPECT_EQ(point.current_offsets().at(0), 8);
  EXPECT_EQ(point.counters().processed(), 5);
  EXPECT_EQ(point.counters().processed_bytes(), 99);
  EXPECT_EQ(point.counters().unparseable(), 2);
  EXPECT_EQ(point.counters().thrown_away(), 1);
  EXPECT_EQ(point.counters().persists(), 1);
  EXPECT_EQ(point.next_spill_number(), 2);
  ASSERT_EQ(point.segments_size(), 2);
  EXPECT_EQ(point.segments(0).segment_id(), absl::StrCat("wiki_", kBaseTimeMs, "_wiki_0"));
  ASSERT_EQ(point.segments(0).spill_files_size(), 1);
  EXPECT_EQ(point.segments(0).spill_files(0), absl::StrCat("0_", kBaseTimeMs, "_0.spill"));
  EXPECT_EQ(point.segments(0).spilled_rows(), 3);
  EXPECT_EQ(point.segments(0).records_by_partition().at(0), 3);
  ASSERT_EQ(point.segments(1).spill_files_size(), 1);
  EXPECT_EQ(point.segments(1).spill_files(0), absl::StrCat("0_", kBaseTimeMs + kHour, "_1.spill"));
  EXPECT_EQ(point.segments(1).spilled_rows(), 2);
  EXPECT_TRUE(InSpillDir(point.segments(0).spill_files(0)));
  EXPECT_TRUE(InSpillDir(point.segments(1).spill_files(0)));
  ASSERT_EQ(point.sequence_stats_size(), 1);
  EXPECT_EQ(point.sequence_stats(0).partitions().at(0).rows(), 5);

  // The next persist: only the index that got rows spills again; the
  // segment's count adds up.
  Add(5, 7);  // one row in each hour
  Add(7, 8);  // and one more in the second
  planner.Submit({}, {{0, 8}}, counters_);
  ASSERT_TRUE(planner.WaitPersisted().ok());
  point = Written();
  EXPECT_EQ(point.counters().persists(), 2);
  EXPECT_EQ(point.next_spill_number(), 4);
  ASSERT_EQ(point.segments_size(), 2);
  EXPECT_EQ(point.segments(0).spill_files_size(), 2);
  EXPECT_EQ(point.segments(0).spilled_rows(), 4);
  EXPECT_EQ(point.segments(1).spill_files_size(), 2);
  EXPECT_EQ(point.segments(1).spilled_rows(), 4);
  planner.Submit({}, {{0, 8}}, counters_);  // nothing in memory: no spill
  ASSERT_TRUE(planner.WaitPersisted().ok());
  point = Written();
  EXPECT_EQ(point.counters().persists(), 3);
  EXPECT_EQ(point.next_spill_number(), 4);
  EXPECT_EQ(point.segments(0).spilled_rows(), 4);
  EXPECT_EQ(point.segments(1).spilled_rows(), 4);
}

// A closed sequence's segments whose rows are all in memory are built
// straight into their segment files (no spill); one with a spill spills the
// rest, for the publisher to merge; the open sequence spills.
TEST_F(PersistPlannerTest, AClosedSequenceWithoutSpillsIsBuiltDirectly) {
  Route(/*closed_at=*/6);
  PersistPlanner& planner = Planner();
  planner.Start();
  Add(0, 1);  // sequence 0, first hour
  planner.Submit({}, {{0, 1}}, counters_);
  ASSERT_TRUE(planner.WaitPersisted().ok());
  Add(1, 8);  // sequence 0 up to 6, then sequence 1
  const Sequence closed = router_.routes()[0];
  planner.Submit({closed}, {{0, 8}}, counters_);
  ASSERT_TRUE(planner.WaitPersisted().ok());
  const state::RestorePoint point = Written();
  ASSERT_EQ(point.segments_size(), 4);
  // Sequence 0, first hour: spilled before, so spilled again.
  const state::SegmentState& spilled = point.segments(0);
  EXPECT_EQ(spilled.sequence_id(), 0);
  EXPECT_TRUE(spilled.built_file().empty());
  EXPECT_EQ(spilled.spill_files_size(), 2);
  EXPECT_EQ(spilled.spilled_rows(), 3);  // records 0, 2, 4
  // Sequence 0, second hour: built.
  const state::SegmentState& built = point.segments(1);
  EXPECT_EQ(built.sequence_id(), 0);
  EXPECT_EQ(built.spill_files_size(), 0);
  EXPECT_EQ(built.built_file(), absl::StrCat("0_", kBaseTimeMs + kHour, "_1.sluice"));
  EXPECT_EQ(built.spilled_rows(), 3);  // records 1, 3, 5
  EXPECT_TRUE(InSpillDir(built.built_file()));
  // Sequence 1: spilled.
  EXPECT_EQ(point.segments(2).sequence_id(), 1);
  EXPECT_EQ(point.segments(2).spill_files_size(), 1);
  EXPECT_EQ(point.segments(2).spilled_rows(), 1);  // record 6
  EXPECT_EQ(point.segments(3).sequence_id(), 1);
  EXPECT_EQ(point.segments(3).spilled_rows(), 1);  // record 7
  EXPECT_EQ(point.next_spill_number(), 5);
}

// After a restart the persists count on from the restore point, and spill
// numbers never repeat one a leftover may hold.
TEST_F(PersistPlannerTest, ARestoredPlannerCountsOnAndNumbersOn) {
  Route();
  PersistPlanner& planner = Planner();
  state::RestorePoint restored;
  restored.mutable_counters()->set_persists(3);
  restored.set_next_spill_number(7);
  planner.Restore(restored);
  EXPECT_EQ(planner.submitted(), 3);
  EXPECT_EQ(planner.written(), 3);
  planner.Start();
  Add(0, 1);
  planner.Submit({}, {{0, 1}}, counters_);
  ASSERT_TRUE(planner.WaitPersisted().ok());
  const state::RestorePoint point = Written();
  EXPECT_EQ(point.counters().persists(), 4);
  EXPECT_EQ(point.next_spill_number(), 8);
  ASSERT_EQ(point.segments_size(), 1);
  EXPECT_EQ(point.segments(0).spill_files(0), absl::StrCat("0_", kBaseTimeMs, "_7.spill"));
}

}  // namespace
}  // namespace sluice::task
