// PartitionReader over librdkafka's mock cluster, with the real router and
// task control; a supervisor that records the OffsetOutOfRange reports.
#include "task/partition_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"
#include "task/testing/unimplemented_supervisor_client.h"
#include "tests/task_mock_kafka.h"

namespace sluice::task {
namespace {

constexpr int64_t kBaseTimeMs = 1795996800000;  // 2026-11-30T00:00:00Z

// Record o of partition p was created at this time.
int64_t CreatedAt(int32_t p, int64_t o) { return kBaseTimeMs + p * 1000000 + o * 1000; }

class RecordingSupervisor : public testing::UnimplementedSupervisorClient {
 public:
  absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> ReportOffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest& request) override {
    absl::MutexLock lock(&mu_);
    reports_.push_back(request);
    return v1::ReportOffsetOutOfRangeResponse();
  }
  std::vector<v1::ReportOffsetOutOfRangeRequest> reports() const {
    absl::MutexLock lock(&mu_);
    return reports_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<v1::ReportOffsetOutOfRangeRequest> reports_ ABSL_GUARDED_BY(mu_);
};

class PartitionReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir =
        absl::StrCat(::testing::TempDir(), "/partition_reader_test_",
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir).ok());
    ASSERT_TRUE(MakeDirs(dir).ok());
    auto kafka = testing::MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = *std::move(kafka);
    ASSERT_TRUE(kafka_->CreateTopic("wiki", 2).ok());
    for (int32_t p = 0; p < 2; ++p) {
      std::vector<std::string> values(10);
      std::vector<kafka::OutgoingRecord> records(10);
      for (int64_t o = 0; o < 10; ++o) {
        values[o] = absl::StrCat("p", p, "-", o);
        records[o].value = values[o];
        records[o].timestamp_ms = CreatedAt(p, o);
      }
      ASSERT_TRUE(kafka_->ProduceRecords("wiki", p, records).ok());
    }
    store_ = std::make_unique<SequenceStore>(dir + "/sequences.json", "wiki",
                                             std::vector<int32_t>{0, 1});
    ASSERT_TRUE(store_->Load({{0, {{0, 0}, {1, 0}}}}).ok());
    TaskControlOptions control;
    control.task_id = "t1";
    control.log_prefix = "[task t1]";
    control.sequences = store_.get();
    control_ = std::make_unique<TaskControl>(std::move(control));
  }

  // Routes from sequence 0 starting at `start`; with `final_end`, the
  // task's final end fixed there.
  void Route(const OffsetMap& start, const OffsetMap& final_end = {}) {
    auto list = SequenceList::FromCheckpoints("wiki", {{0, start}}, {0, 1});
    ASSERT_TRUE(list.ok()) << list.status();
    if (!final_end.empty()) {
      ASSERT_TRUE(list->SetEndOffsets(final_end, true, start, /*fenced=*/true).ok());
    }
    router_.Refresh(*list);
  }

  PartitionReader& Reader(bool open = true) {
    PartitionReaderOptions options;
    options.router = &router_;
    options.control = control_.get();
    options.supervisor = &supervisor_;
    options.datasource = "wiki";
    options.task_id = "t1";
    options.offset_out_of_range_retry = absl::Milliseconds(10);
    options.metrics = TaskMetrics::For(nullptr, "wiki");
    options.log_prefix = "[task t1]";
    reader_ = std::make_unique<PartitionReader>(std::move(options));
    if (open) {
      KafkaConsumerOptions consumer;
      consumer.topic = "wiki";
      consumer.properties = {{"bootstrap.servers", kafka_->bootstrap()}};
      consumer.client_id = "t1";
      consumer.cluster_kind = kafka::ClusterKind::kDevBroker;
      EXPECT_TRUE(reader_->Open(std::move(consumer)).ok());
    }
    return *reader_;
  }

  // Polls until `want` records came (or an offset out of range); notes the
  // last read of each batch and moves each partition past its records, as
  // the read loop does. The records by partition and offset.
  std::vector<std::pair<int32_t, int64_t>> Read(size_t want,
                                                std::vector<OffsetOutOfRange>* out_of_range) {
    std::vector<std::pair<int32_t, int64_t>> seen;
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    KafkaBatch batch;
    while (seen.size() < want && out_of_range->empty() && absl::Now() < deadline) {
      EXPECT_TRUE(reader_->Poll(absl::Milliseconds(100), 100, &batch, out_of_range).ok());
      for (size_t i = 0; i < batch.size(); ++i) {
        seen.emplace_back(batch[i].partition, batch[i].offset);
        const int slot = router_.SlotOf(batch[i].partition);
        if (batch[i].offset < router_.task_end(slot)) reader_->current(slot) = batch[i].offset + 1;
      }
      reader_->NoteLastRead(batch, 0, batch.size());
    }
    return seen;
  }

  std::unique_ptr<testing::MockKafka> kafka_;
  std::unique_ptr<SequenceStore> store_;
  std::unique_ptr<TaskControl> control_;
  RecordingSupervisor supervisor_;
  RecordRouter router_{std::vector<int32_t>{0, 1}};
  std::unique_ptr<PartitionReader> reader_;
};

TEST_F(PartitionReaderTest, StartsAtTheFirstRouteOrRestoresTheOffsetsOfARestorePoint) {
  Route({{0, 3}, {1, 5}});
  PartitionReader& reader = Reader(/*open=*/false);
  reader.StartAtFirstRoute();
  EXPECT_EQ(reader.Offsets(), (OffsetMap{{0, 3}, {1, 5}}));
  EXPECT_TRUE(reader.CheckNotBeforeFirstRoute().ok());
  EXPECT_EQ(reader.RestoreOffsets({{0, 4}}).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(reader.RestoreOffsets({{0, 4}, {7, 1}}).code(), absl::StatusCode::kDataLoss);
  ASSERT_TRUE(reader.RestoreOffsets({{0, 4}, {1, 9}}).ok());
  EXPECT_EQ(reader.Offsets(), (OffsetMap{{0, 4}, {1, 9}}));
  EXPECT_TRUE(reader.CheckNotBeforeFirstRoute().ok());
  // Before the first unpublished sequence: published records would come again.
  ASSERT_TRUE(reader.RestoreOffsets({{0, 2}, {1, 9}}).ok());
  EXPECT_EQ(reader.CheckNotBeforeFirstRoute().code(), absl::StatusCode::kDataLoss);
}

TEST_F(PartitionReaderTest, ReadsEveryPartitionFromItsOffsetAndNotesTheLastReadTimes) {
  Route({{0, 0}, {1, 0}});
  PartitionReader& reader = Reader();
  ASSERT_TRUE(reader.RestoreOffsets({{0, 2}, {1, 7}}).ok());
  absl::StatusOr<bool> assigned = reader.Reassign();
  ASSERT_TRUE(assigned.ok()) << assigned.status();
  EXPECT_TRUE(*assigned);
  assigned = reader.Reassign();  // the same partitions: the consumer reads on
  ASSERT_TRUE(assigned.ok()) << assigned.status();
  EXPECT_FALSE(*assigned);
  EXPECT_TRUE(reader.LastReadTimestamps().empty());
  std::vector<OffsetOutOfRange> out_of_range;
  const std::vector<std::pair<int32_t, int64_t>> seen = Read(11, &out_of_range);
  EXPECT_TRUE(out_of_range.empty());
  ASSERT_EQ(seen.size(), 11u);
  EXPECT_EQ(std::count_if(seen.begin(), seen.end(), [](auto& r) { return r.first == 0; }), 8);
  EXPECT_EQ(reader.Offsets(), (OffsetMap{{0, 10}, {1, 10}}));
  EXPECT_EQ(reader.LastReadTimestamps(),
            (std::map<int32_t, int64_t>{{0, CreatedAt(0, 9)}, {1, CreatedAt(1, 9)}}));
  EXPECT_FALSE(reader.ReachedFinalEnd());  // no final end yet
}

// Records past the final end are not read: the last read time is that of
// the last record before it; a partition at its final end is unassigned,
// and the task is done once every partition is.
TEST_F(PartitionReaderTest, TheFinalEndBoundsWhatIsReadAndAssigned) {
  Route({{0, 0}, {1, 0}}, /*final_end=*/{{0, 6}, {1, 10}});
  PartitionReader& reader = Reader();
  reader.StartAtFirstRoute();
  ASSERT_TRUE(reader.Reassign().ok());
  std::vector<OffsetOutOfRange> out_of_range;
  Read(20, &out_of_range);
  EXPECT_EQ(reader.Offsets(), (OffsetMap{{0, 6}, {1, 10}}));
  EXPECT_EQ(reader.LastReadTimestamps(),
            (std::map<int32_t, int64_t>{{0, CreatedAt(0, 5)}, {1, CreatedAt(1, 9)}}));
  EXPECT_TRUE(reader.ReachedFinalEnd());
  reader.current(1) = 9;
  EXPECT_FALSE(reader.ReachedFinalEnd());
  // Only partition 1 is left to read: a new assignment, at its offset.
  absl::StatusOr<bool> assigned = reader.Reassign();
  ASSERT_TRUE(assigned.ok()) << assigned.status();
  EXPECT_TRUE(*assigned);
  EXPECT_EQ(Read(1, &out_of_range), (std::vector<std::pair<int32_t, int64_t>>{{1, 9}}));
  EXPECT_TRUE(reader.ReachedFinalEnd());
}

// A partition whose end the consumer reached is read through that end (its
// last offsets may hold no record for the task: transaction markers), up to
// the final end at most.
TEST_F(PartitionReaderTest, AReachedEndMovesThePartitionUpToTheFinalEnd) {
  Route({{0, 0}, {1, 0}}, /*final_end=*/{{0, 6}, {1, 20}});
  PartitionReader& reader = Reader();
  reader.StartAtFirstRoute();
  ASSERT_TRUE(reader.Reassign().ok());
  KafkaBatch batch;
  std::vector<OffsetOutOfRange> out_of_range;
  bool moved = false;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  // The records are polled but not taken (as if none were for the task).
  while (reader.Offsets() != OffsetMap{{0, 6}, {1, 10}} && absl::Now() < deadline) {
    ASSERT_TRUE(reader.Poll(absl::Milliseconds(100), 100, &batch, &out_of_range).ok());
    moved = reader.AdvanceToReachedEnds() || moved;
  }
  EXPECT_TRUE(moved);
  EXPECT_EQ(reader.Offsets(), (OffsetMap{{0, 6}, {1, 10}}));
  EXPECT_FALSE(reader.AdvanceToReachedEnds());  // nothing further
  EXPECT_FALSE(reader.ReachedFinalEnd());       // partition 1 ends at 20
}

// An offset Kafka no longer (or not yet) has: reported to the supervisor
// with the partition's earliest offset, shown in the task's error, retried
// after the wait; reported again only after a while.
TEST_F(PartitionReaderTest, AnOffsetOutOfRangeIsReportedShownAndRetried) {
  Route({{0, 0}, {1, 0}});
  PartitionReader& reader = Reader();
  ASSERT_TRUE(reader.RestoreOffsets({{0, 500}, {1, 10}}).ok());
  ASSERT_TRUE(reader.Reassign().ok());
  std::vector<OffsetOutOfRange> out_of_range;
  EXPECT_TRUE(Read(1, &out_of_range).empty());
  ASSERT_EQ(out_of_range.size(), 1u);
  ASSERT_TRUE(reader.HandleOutOfRange(out_of_range).ok());
  std::vector<v1::ReportOffsetOutOfRangeRequest> reports = supervisor_.reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].datasource(), "wiki");
  EXPECT_EQ(reports[0].task_id(), "t1");
  EXPECT_EQ(reports[0].offsets().at(0), 500);
  EXPECT_EQ(reports[0].earliest_offsets().at(0), 0);
  v1::TaskStatus status;
  control_->FillStatus({}, &status);
  EXPECT_EQ(status.error(),
            "offset out of range: partition 0 offset 500 (available: 0 to 10); waiting");
  // Retried at the same offset: out of range again, not reported again yet.
  out_of_range.clear();
  EXPECT_TRUE(Read(1, &out_of_range).empty());
  ASSERT_EQ(out_of_range.size(), 1u);
  EXPECT_EQ(out_of_range[0].offset, 500);
  ASSERT_TRUE(reader.HandleOutOfRange(out_of_range).ok());
  EXPECT_EQ(supervisor_.reports().size(), 1u);
  out_of_range.clear();
  EXPECT_TRUE(Read(1, &out_of_range).empty());
  EXPECT_EQ(out_of_range.size(), 1u);
}

}  // namespace
}  // namespace sluice::task
