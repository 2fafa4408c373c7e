// RecordIngester over records read from librdkafka's mock cluster, with the
// columnar engine, real router, open segments, partition reader and task
// control (the allocator answers as the supervisor would): rows added and
// rolled up, parse errors classed, counted and sampled up to
// maxParseExceptions, rows thrown away (the message time window and the
// transformSpec filter), and the offsets each record moves.
#include "task/record_ingester.h"

#include <gtest/gtest.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "task/columnar_engine.h"
#include "task/testing/interval_allocator.h"
#include "task/testing/unimplemented_supervisor_client.h"
#include "tests/task_mock_kafka.h"

namespace sluice::task {
namespace {

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kBaseTimeMs = 1795996800000;  // 2026-11-30T00:00:00Z

std::string Row(int64_t time_ms, const std::string& key) {
  return absl::StrCat(R"({"timestamp":)", time_ms, R"(,"key":")", key, R"("})");
}

class RecordIngesterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir =
        absl::StrCat(::testing::TempDir(), "/record_ingester_test_",
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir).ok());
    ASSERT_TRUE(MakeDirs(dir).ok());
    auto kafka = testing::MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = *std::move(kafka);
    ASSERT_TRUE(kafka_->CreateTopic("wiki", 1).ok());

    spec_.set_task_id("t1");
    spec_.set_datasource("wiki");
    spec_.set_topic("wiki");
    v1::DataSchema* schema = spec_.mutable_data_schema();
    schema->mutable_timestamp_spec()->set_column("timestamp");
    schema->mutable_timestamp_spec()->set_format("millis");
    schema->mutable_granularity_spec()->set_segment_granularity("HOUR");
    v1::MetricSpec* count = schema->add_metrics_spec();
    count->set_type("count");
    count->set_name("count");
    // The transformSpec throws away the rows keyed "drop".
    v1::DimFilter* filter = schema->mutable_transform_spec()->mutable_filter();
    filter->set_type("not");
    filter->mutable_field()->set_type("selector");
    filter->mutable_field()->set_dimension("key");
    filter->mutable_field()->set_value("drop");
    settings_.partitions = {0};
    settings_.tuning.set_max_saved_parse_exceptions(10);

    store_ = std::make_unique<SequenceStore>(dir + "/sequences.json", "wiki",
                                             std::vector<int32_t>{0});
    ASSERT_TRUE(store_->Load({{0, {{0, 0}}}}).ok());
    TaskControlOptions control;
    control.task_id = "t1";
    control.log_prefix = "[task t1]";
    control.sequences = store_.get();
    control_ = std::make_unique<TaskControl>(std::move(control));
    router_.Refresh(store_->Snapshot());
  }

  // The ingester and its parts, once the spec is final.
  void Make() {
    auto engine = NewColumnarEngine(spec_.data_schema());
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    segments_ = std::make_unique<OpenSegments>(engine_.get(), &allocator_,
                                               Granularity(Granularity::Unit::kHour),
                                               std::vector<int32_t>{0});
    PartitionReaderOptions reader;
    reader.router = &router_;
    reader.control = control_.get();
    reader.supervisor = &supervisor_;
    reader_ = std::make_unique<PartitionReader>(std::move(reader));
    reader_->StartAtFirstRoute();
    RecordIngesterOptions options;
    options.spec = &spec_;
    options.settings = &settings_;
    options.engine = engine_.get();
    options.router = &router_;
    options.segments = segments_.get();
    options.reader = reader_.get();
    options.control = control_.get();
    options.log_prefix = "[task t1]";
    ingester_ = std::make_unique<RecordIngester>(std::move(options));
    ASSERT_TRUE(ingester_->Initialize().ok());
    KafkaConsumerOptions consumer;
    consumer.topic = "wiki";
    consumer.properties = {{"bootstrap.servers", kafka_->bootstrap()}};
    consumer.client_id = "t1";
    consumer.cluster_kind = kafka::ClusterKind::kDevBroker;
    auto created = KafkaConsumer::Create(std::move(consumer));
    ASSERT_TRUE(created.ok()) << created.status();
    consumer_ = *std::move(created);
    ASSERT_TRUE(consumer_->Assign({{0, 0}}).ok());
  }

  // Produces `values` and ingests them in order; the outcome of each, up to
  // the first error (returned).
  absl::Status IngestAll(const std::vector<std::string>& values,
                         std::vector<RecordIngester::Outcome>* outcomes) {
    if (absl::StatusOr<int64_t> first = kafka_->Produce("wiki", 0, values); !first.ok()) {
      return first.status();
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (outcomes->size() < values.size() && absl::Now() < deadline) {
      std::vector<OffsetOutOfRange> out_of_range;
      if (absl::Status polled =
              consumer_->Poll(absl::Milliseconds(100), 1000, &batch_, &out_of_range);
          !polled.ok()) {
        return polled;
      }
      for (size_t i = 0; i < batch_.size(); ++i) {
        absl::StatusOr<RecordIngester::Outcome> outcome = ingester_->Ingest(batch_, i);
        if (!outcome.ok()) return outcome.status();
        outcomes->push_back(*outcome);
      }
    }
    if (outcomes->size() < values.size()) return absl::DeadlineExceededError("records missing");
    return absl::OkStatus();
  }

  v1::TaskStatus Status() const {
    v1::TaskStatus status;
    control_->FillStatus({}, &status);
    return status;
  }

  std::unique_ptr<testing::MockKafka> kafka_;
  v1::TaskSpec spec_;
  TaskSettings settings_;
  std::unique_ptr<SequenceStore> store_;
  std::unique_ptr<TaskControl> control_;
  testing::UnimplementedSupervisorClient supervisor_;
  sluice::testing::IntervalAllocator allocator_;
  RecordRouter router_{std::vector<int32_t>{0}};
  std::unique_ptr<SegmentEngine> engine_;
  std::unique_ptr<OpenSegments> segments_;
  std::unique_ptr<PartitionReader> reader_;
  std::unique_ptr<RecordIngester> ingester_;
  std::unique_ptr<KafkaConsumer> consumer_;
  KafkaBatch batch_;
};

TEST_F(RecordIngesterTest, RowsParseErrorsAndThrownAwayRecordsAreEachCountedOnce) {
  spec_.set_minimum_message_time_ms(kBaseTimeMs);
  Make();
  const std::vector<std::string> values = {
      Row(kBaseTimeMs + 1, "a"),          // 0: a row
      "not json",                          // 1: NOT_JSON
      R"({"key":"b"})",                    // 2: NO_TIMESTAMP
      Row(kBaseTimeMs + 1, "a"),          // 3: the same row: rolls up into 0's
      Row(kBaseTimeMs - 1, "c"),          // 4: before the window: thrown away
      Row(kBaseTimeMs + kHour + 5, "d"),  // 5: a row of the next hour's segment
      R"({"timestamp":"soon","key":"e"})",  // 6: BAD_TIMESTAMP
      Row(kBaseTimeMs + 2, "drop"),       // 7: the transformSpec filter: thrown away
  };
  std::vector<RecordIngester::Outcome> outcomes;
  ASSERT_TRUE(IngestAll(values, &outcomes).ok());
  ASSERT_EQ(outcomes.size(), values.size());
  for (const RecordIngester::Outcome& o : outcomes) EXPECT_TRUE(o.read);
  for (size_t i : {1, 2, 4, 6, 7}) EXPECT_EQ(outcomes[i].route, -1) << i;
  EXPECT_EQ(outcomes[0].route, 0);
  EXPECT_EQ(outcomes[0].segment_rows, 1);
  EXPECT_EQ(outcomes[0].sequence_rows, 1);
  EXPECT_EQ(outcomes[3].route, 0);  // a record, not a row
  EXPECT_EQ(outcomes[3].segment_rows, 1);
  EXPECT_EQ(outcomes[3].sequence_rows, 1);
  EXPECT_EQ(outcomes[5].route, 0);
  EXPECT_EQ(outcomes[5].segment_rows, 1);
  EXPECT_EQ(outcomes[5].sequence_rows, 2);

  const IngestCounters& counters = ingester_->counters();
  EXPECT_EQ(counters.processed, 3);
  EXPECT_EQ(counters.processed_bytes,
            static_cast<int64_t>(values[0].size() + values[3].size() + values[5].size()));
  EXPECT_EQ(counters.unparseable, 3);
  EXPECT_EQ(counters.thrown_away, 2);
  EXPECT_EQ(counters.rows_in_memory, 2);
  EXPECT_GT(counters.bytes_in_memory, 0);
  // The sequence's accounting per partition, and its rows.
  EXPECT_EQ(router_.counts(0, 0).rows(), 3);
  EXPECT_EQ(router_.counts(0, 0).unparseable(), 3);
  EXPECT_EQ(router_.counts(0, 0).thrown_away(), 2);
  EXPECT_EQ(router_.rows(0), 2);
  // Every record read moved the partition's offset past it.
  EXPECT_EQ(reader_->current(0), 8);
  // Two segments, with their records.
  EXPECT_EQ(segments_->size(), 2u);
  const std::vector<state::SegmentState> records = segments_->RecordsOf(0);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].records_by_partition().at(0), 2);
  EXPECT_EQ(records[1].records_by_partition().at(0), 1);

  // Each parse error sampled, classed, with where it was.
  const v1::TaskStatus status = Status();
  EXPECT_EQ(status.row_stats().unparseable(), 3);
  ASSERT_EQ(status.recent_parse_errors_size(), 3);
  EXPECT_EQ(status.recent_parse_errors(0).offset(), 1);
  EXPECT_EQ(status.recent_parse_errors(0).kind(), "NOT_JSON");
  EXPECT_EQ(status.recent_parse_errors(0).snippet(), "not json");
  EXPECT_EQ(status.recent_parse_errors(1).offset(), 2);
  EXPECT_EQ(status.recent_parse_errors(1).kind(), "NO_TIMESTAMP");
  EXPECT_EQ(status.recent_parse_errors(2).offset(), 6);
  EXPECT_EQ(status.recent_parse_errors(2).kind(), "BAD_TIMESTAMP");
  for (const v1::ParseErrorSample& sample : status.recent_parse_errors()) {
    EXPECT_EQ(sample.partition(), 0);
    EXPECT_FALSE(sample.message().empty());
  }

  // A persist took the rows in memory; the record counts stay.
  ingester_->ClearInMemory();
  EXPECT_EQ(ingester_->counters().rows_in_memory, 0);
  EXPECT_EQ(ingester_->counters().bytes_in_memory, 0);
  EXPECT_EQ(ingester_->counters().processed, 3);
}

TEST_F(RecordIngesterTest, TheMessageTimeWindowHasTwoEnds) {
  spec_.set_minimum_message_time_ms(kBaseTimeMs);
  spec_.set_maximum_message_time_ms(kBaseTimeMs + 10);
  Make();
  std::vector<RecordIngester::Outcome> outcomes;
  ASSERT_TRUE(IngestAll({Row(kBaseTimeMs - 1, "a"), Row(kBaseTimeMs, "a"),
                         Row(kBaseTimeMs + 10, "a"), Row(kBaseTimeMs + 11, "a")},
                        &outcomes)
                  .ok());
  EXPECT_EQ(ingester_->counters().thrown_away, 2);
  EXPECT_EQ(ingester_->counters().processed, 2);
  EXPECT_EQ(outcomes[0].route, -1);
  EXPECT_EQ(outcomes[1].route, 0);
  EXPECT_EQ(outcomes[2].route, 0);
  EXPECT_EQ(outcomes[3].route, -1);
}

TEST_F(RecordIngesterTest, MoreParseErrorsThanMaxParseExceptionsFailTheTask) {
  settings_.tuning.set_max_parse_exceptions(1);
  Make();
  std::vector<RecordIngester::Outcome> outcomes;
  const absl::Status status = IngestAll({"bad", Row(kBaseTimeMs, "a"), "worse"}, &outcomes);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_NE(status.message().find("2 unparseable records exceed tuningConfig.maxParseExceptions "
                                  "= 1; the last one, at partition 0 offset 2: NOT_JSON"),
            std::string::npos)
      << status;
  EXPECT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(ingester_->counters().unparseable, 2);
}

TEST_F(RecordIngesterTest, ARecordAgainIsAnOffsetGoingBackwards) {
  Make();
  std::vector<RecordIngester::Outcome> outcomes;
  ASSERT_TRUE(IngestAll({Row(kBaseTimeMs, "a"), Row(kBaseTimeMs, "b")}, &outcomes).ok());
  ASSERT_FALSE(batch_.empty());
  const absl::StatusOr<RecordIngester::Outcome> again =
      ingester_->Ingest(batch_, batch_.size() - 1);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kDataLoss) << again.status();
  EXPECT_EQ(ingester_->counters().processed, 2);
}

// The read-ahead parses the next record of the batch before this one's row
// is added: a record ingested out of that order, or a batch filled again,
// gets its own parse, never the row read ahead for another record.
TEST_F(RecordIngesterTest, EachRecordGetsItsOwnRowWhateverWasReadAhead) {
  Make();
  ASSERT_TRUE(kafka_
                  ->Produce("wiki", 0,
                            {Row(kBaseTimeMs, "a"), "not json", "never read",
                             Row(kBaseTimeMs, "b"), Row(kBaseTimeMs + kHour, "c"), "nor this",
                             Row(kBaseTimeMs, "d")})
                  .ok());
  // batch_ filled with the `want` records from `first` on (assigned again
  // until one poll brings them all).
  auto poll_from = [&](int64_t first, size_t want) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      ASSERT_TRUE(consumer_->Assign({{0, first}}).ok());
      std::vector<OffsetOutOfRange> out_of_range;
      ASSERT_TRUE(consumer_->Poll(absl::Milliseconds(500), want, &batch_, &out_of_range).ok());
      if (batch_.size() == want && batch_[0].offset == first) return;
    }
    FAIL() << "no batch of " << want << " records from offset " << first;
  };
  poll_from(0, 2);
  const uint64_t first_serial = batch_.serial();
  ASSERT_EQ(ingester_->Ingest(batch_, 0)->route, 0);  // reads record 1 ("not json") ahead
  poll_from(2, 2);  // the same batch filled again
  EXPECT_NE(batch_.serial(), first_serial);
  // Record 1 of the new batch (offset 3) is a row, not the parse error read
  // ahead for record 1 of the old one.
  absl::StatusOr<RecordIngester::Outcome> outcome = ingester_->Ingest(batch_, 1);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->route, 0);
  poll_from(4, 3);
  ASSERT_EQ(ingester_->Ingest(batch_, 0)->route, 0);  // reads record 1 ("nor this") ahead
  // Record 2 (offset 6), ingested after record 0, is its own row.
  outcome = ingester_->Ingest(batch_, 2);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->route, 0);
  // Record 1 (offset 5) after record 2 is an offset going backwards.
  EXPECT_EQ(ingester_->Ingest(batch_, 1).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ingester_->counters().processed, 4);
  EXPECT_EQ(ingester_->counters().unparseable, 0);
  EXPECT_EQ(Status().recent_parse_errors_size(), 0);
  EXPECT_EQ(segments_->size(), 2u);
}

// A restarted task counts on from the restore point's counters.
TEST_F(RecordIngesterTest, RestoredCountersCountOn) {
  Make();
  state::Counters saved;
  saved.set_processed(10);
  saved.set_processed_bytes(100);
  saved.set_unparseable(3);
  saved.set_thrown_away(4);
  ingester_->RestoreCounters(saved);
  std::vector<RecordIngester::Outcome> outcomes;
  ASSERT_TRUE(IngestAll({Row(kBaseTimeMs, "a"), "bad"}, &outcomes).ok());
  EXPECT_EQ(ingester_->counters().processed, 11);
  EXPECT_EQ(ingester_->counters().unparseable, 4);
  EXPECT_EQ(ingester_->counters().thrown_away, 4);
  EXPECT_EQ(ingester_->counters().rows_in_memory, 1);
}

}  // namespace
}  // namespace sluice::task
