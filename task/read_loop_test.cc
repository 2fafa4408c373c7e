// The read loop with its real collaborators (control, sequence store,
// publisher, columnar engine, local deep storage) over librdkafka's mock
// cluster, and a plain C++ supervisor: no broker, no gRPC.
#include "task/read_loop.h"

#include <gtest/gtest.h>

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/deep_storage.h"
#include "common/open_deep_storage.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "task/columnar_engine.h"
#include "task/testing/unimplemented_supervisor_client.h"
#include "tests/task_mock_kafka.h"

namespace sluice::task {
namespace {

constexpr int64_t kBaseTimeMs = 1795996800000;  // 2026-11-30T00:00:00Z

// Even n in the first hour, odd n in the second; every record its own row.
std::string Record(int64_t n) {
  const int64_t time = kBaseTimeMs + (n % 2) * 3600 * 1000 + (n / 2) * 1000;
  return absl::StrCat(R"({"timestamp":)", time, R"(,"key":"k)", n, R"(","added":)", n, "}");
}

// Allocates, commits and hands off whatever it is asked; records the calls.
class RecordingSupervisor : public testing::UnimplementedSupervisorClient {
 public:
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> CheckpointDataSourceMetadata(
      const v1::CheckpointDataSourceMetadataRequest& request) override {
    absl::MutexLock lock(&mu_);
    checkpoints_.push_back(request);
    v1::CheckpointDataSourceMetadataResponse response;
    response.set_accepted(true);
    return response;
  }
  absl::StatusOr<v1::AllocateSegmentResponse> AllocateSegment(
      const v1::AllocateSegmentRequest& request) override {
    absl::MutexLock lock(&mu_);
    allocations_.push_back(request);
    v1::AllocateSegmentResponse response;
    response.set_segment_id(absl::StrCat("wiki_", request.interval().start_ms(), "_",
                                         request.sequence_name()));
    response.set_version("v1");
    *response.mutable_interval() = request.interval();
    return response;
  }
  absl::StatusOr<v1::PublishSegmentsResponse> PublishSegments(
      const v1::PublishSegmentsRequest& request) override {
    absl::MutexLock lock(&mu_);
    publishes_.push_back(request);
    return v1::PublishSegmentsResponse();
  }
  absl::StatusOr<v1::GetPublishedSegmentsResponse> GetPublishedSegments(
      const v1::GetPublishedSegmentsRequest&) override {
    return v1::GetPublishedSegmentsResponse();  // nothing committed before
  }
  absl::StatusOr<v1::ListSegmentsResponse> ListSegments(const v1::ListSegmentsRequest&) override {
    return v1::ListSegmentsResponse();
  }
  absl::StatusOr<v1::GetHandoffStatusResponse> GetHandoffStatus(
      const v1::GetHandoffStatusRequest& request) override {
    v1::GetHandoffStatusResponse response;
    for (const std::string& id : request.segment_ids()) response.add_handed_off_segment_ids(id);
    return response;
  }
  absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> ReportOffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest&) override {
    return v1::ReportOffsetOutOfRangeResponse();
  }
  absl::Status ReportTaskStatus(const v1::ReportTaskStatusRequest&) override {
    return absl::OkStatus();
  }

  std::vector<v1::CheckpointDataSourceMetadataRequest> checkpoints() const {
    absl::MutexLock lock(&mu_);
    return checkpoints_;
  }
  std::vector<v1::AllocateSegmentRequest> allocations() const {
    absl::MutexLock lock(&mu_);
    return allocations_;
  }
  std::vector<v1::PublishSegmentsRequest> publishes() const {
    absl::MutexLock lock(&mu_);
    return publishes_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<v1::CheckpointDataSourceMetadataRequest> checkpoints_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::AllocateSegmentRequest> allocations_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::PublishSegmentsRequest> publishes_ ABSL_GUARDED_BY(mu_);
};

v1::TaskSpec Spec(const std::string& bootstrap, int64_t max_rows_per_segment) {
  v1::TaskSpec spec;
  spec.set_task_id("t1");
  spec.set_datasource("wiki");
  spec.set_base_sequence_name("wiki_base");
  spec.set_topic("wiki");
  (*spec.mutable_consumer_properties())["bootstrap.servers"] = bootstrap;
  (*spec.mutable_start_offsets())[0] = 0;
  v1::Checkpoint* checkpoint = spec.add_checkpoints();
  checkpoint->set_sequence_id(0);
  (*checkpoint->mutable_offsets())[0] = 0;
  v1::DataSchema* schema = spec.mutable_data_schema();
  schema->mutable_timestamp_spec()->set_column("timestamp");
  schema->mutable_timestamp_spec()->set_format("millis");
  schema->mutable_granularity_spec()->set_segment_granularity("HOUR");
  v1::MetricSpec* count = schema->add_metrics_spec();
  count->set_type("count");
  count->set_name("count");
  v1::TuningConfig* t = spec.mutable_tuning_config();
  t->set_max_rows_per_segment(max_rows_per_segment);
  t->set_checkpoint_retry_period("PT0.1S");
  t->set_handoff_condition_timeout("PT10S");
  t->set_chat_timeout("PT5S");
  spec.set_poll_timeout_ms(50);
  spec.set_created_at_ms(kBaseTimeMs);
  return spec;
}

// One task's pieces, wired as TaskRunner wires them, around a ReadLoop.
class Task {
 public:
  Task(const v1::TaskSpec& spec, const std::string& dir, SupervisorClient* supervisor,
       DeepStorage* deep, size_t claim_chunk_records = 256, size_t max_batch_records = 10000)
      : spec_(spec),
        settings_(*CheckTaskSpec(spec_)),
        files_(dir),
        engine_(*NewColumnarEngine(spec_.data_schema())),
        store_(files_.sequences(), spec_.base_sequence_name(), settings_.partitions),
        control_(TaskControlOptions{.task_id = "t1",
                                    .log_prefix = "[task t1]",
                                    .self_resume_after = absl::Seconds(60),
                                    .checkpoint_retry_period = absl::Milliseconds(100),
                                    .sequences = &store_}) {
    const TaskMetrics metrics = TaskMetrics::For(nullptr, "wiki");
    SequencePublisherOptions p;
    p.task_id = "t1";
    p.datasource = "wiki";
    p.topic = "wiki";
    p.task_dir = files_.dir;
    p.supervisor = supervisor;
    p.deep_storage = deep;
    p.engine = engine_.get();
    p.handoff_poll_interval = absl::Milliseconds(20);
    p.min_backoff = absl::Milliseconds(10);
    p.listener = &store_;
    p.log_prefix = "[task t1]";
    p.metrics = metrics;
    publisher_ = std::make_unique<SequencePublisher>(std::move(p));
    SupervisorSegmentAllocatorOptions a;
    a.datasource = "wiki";
    a.task_id = "t1";
    a.supervisor = supervisor;
    a.sleep = [this](absl::Duration d) { return control_.Wait(d); };
    allocator_ = std::make_unique<SupervisorSegmentAllocator>(std::move(a));
    ReadLoopOptions l;
    l.spec = &spec_;
    l.settings = &settings_;
    l.task_dir = dir;
    l.tuning.kafka_cluster = kafka::ClusterKind::kDevBroker;
    l.tuning.min_backoff = absl::Milliseconds(10);
    l.tuning.claim_chunk_records = claim_chunk_records;
    l.tuning.max_batch_records = max_batch_records;
    l.metrics = metrics;
    l.log_prefix = "[task t1]";
    l.supervisor = supervisor;
    l.engine = engine_.get();
    l.control = &control_;
    l.sequences = &store_;
    l.publisher = publisher_.get();
    l.allocator = allocator_.get();
    l.notify = [] {};
    l.end = [this](v1::TaskState state, std::string error) {
      absl::MutexLock lock(&mu_);
      final_state_ = state;
      final_error_ = std::move(error);
      control_.Finish(state, final_error_);
    };
    loop_ = std::make_unique<ReadLoop>(std::move(l));
    thread_ = std::thread([this] { loop_->Run(); });
  }
  ~Task() { Shutdown(); }

  void Shutdown() {
    control_.RequestShutdown();
    if (thread_.joinable()) thread_.join();
    publisher_->Stop();
  }
  // Until the loop has read up to `offset` of partition 0.
  bool WaitForOffset(int64_t offset) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      const OffsetMap current = control_.current();
      if (current.count(0) > 0 && current.at(0) >= offset) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }
  // Pauses, fixes the final end at what was read, and waits for the end.
  void FinishAt(int64_t offset) {
    absl::StatusOr<OffsetMap> paused = control_.Pause(absl::Seconds(10));
    ASSERT_TRUE(paused.ok()) << paused.status();
    EXPECT_EQ(*paused, (OffsetMap{{0, offset}}));
    absl::StatusOr<v1::SetEndOffsetsResponse> set = control_.SetEndOffsets(*paused, true);
    ASSERT_TRUE(set.ok()) << set.status();
    ASSERT_TRUE(control_.WaitFinished(absl::Seconds(30)));
  }
  v1::TaskState final_state() {
    absl::MutexLock lock(&mu_);
    return final_state_;
  }
  std::string final_error() {
    absl::MutexLock lock(&mu_);
    return final_error_;
  }
  TaskControl& control() { return control_; }
  SequenceStore& store() { return store_; }

 private:
  const v1::TaskSpec spec_;
  const TaskSettings settings_;
  const TaskFiles files_;
  std::unique_ptr<SegmentEngine> engine_;
  SequenceStore store_;
  TaskControl control_;
  std::unique_ptr<SequencePublisher> publisher_;
  std::unique_ptr<SegmentAllocator> allocator_;
  std::unique_ptr<ReadLoop> loop_;
  std::thread thread_;
  absl::Mutex mu_;
  v1::TaskState final_state_ ABSL_GUARDED_BY(mu_) = v1::TASK_STATE_NOT_STARTED;
  std::string final_error_ ABSL_GUARDED_BY(mu_);
};

class ReadLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/read_loop_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(RemoveAll(dir_).ok());
    ASSERT_TRUE(MakeDirs(dir_ + "/task").ok());
    auto kafka = testing::MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = *std::move(kafka);
    ASSERT_TRUE(kafka_->CreateTopic("wiki", 1).ok());
    auto deep = OpenDeepStorage("file://" + dir_ + "/deep");
    ASSERT_TRUE(deep.ok()) << deep.status();
    deep_ = *std::move(deep);
  }
  void Produce(int64_t from, int64_t to) {
    std::vector<std::string> values;
    for (int64_t n = from; n < to; ++n) values.push_back(Record(n));
    ASSERT_TRUE(kafka_->Produce("wiki", 0, values).ok());
  }
  static int64_t PublishedRows(const v1::PublishSegmentsRequest& request) {
    int64_t rows = 0;
    for (const v1::SegmentDescriptor& d : request.segments()) rows += d.num_rows();
    return rows;
  }

  std::string dir_;
  std::unique_ptr<testing::MockKafka> kafka_;
  std::unique_ptr<DeepStorage> deep_;
  RecordingSupervisor supervisor_;
};

TEST_F(ReadLoopTest, ReadsRoutesAndPublishesToTheFinalEnd) {
  Produce(0, 10);
  Task task(Spec(kafka_->bootstrap(), 1000000), dir_ + "/task", &supervisor_, deep_.get());
  ASSERT_TRUE(task.WaitForOffset(10));
  task.FinishAt(10);
  EXPECT_EQ(task.final_state(), v1::TASK_STATE_SUCCESS) << task.final_error();

  // One allocation per hour that got rows, for sequence 0.
  const std::vector<v1::AllocateSegmentRequest> allocations = supervisor_.allocations();
  ASSERT_EQ(allocations.size(), 2u);
  EXPECT_EQ(allocations[0].sequence_name(), "wiki_base_0");
  EXPECT_EQ(allocations[0].interval().start_ms(), kBaseTimeMs);
  EXPECT_EQ(allocations[1].interval().start_ms(), kBaseTimeMs + 3600 * 1000);
  const std::vector<v1::PublishSegmentsRequest> publishes = supervisor_.publishes();
  ASSERT_EQ(publishes.size(), 1u);
  EXPECT_EQ(publishes[0].sequence_name(), "wiki_base_0");
  EXPECT_EQ(publishes[0].start_offsets().at(0), 0);
  EXPECT_EQ(publishes[0].end_offsets().at(0), 10);
  EXPECT_EQ(publishes[0].segments_size(), 2);
  EXPECT_EQ(PublishedRows(publishes[0]), 10);
  ASSERT_EQ(publishes[0].partition_stats_size(), 1);
  EXPECT_EQ(publishes[0].partition_stats(0).rows(), 10);
  EXPECT_EQ(task.store().last_published_id(), 0);
  v1::TaskStatus status;
  task.control().FillStatus({}, &status);
  EXPECT_EQ(status.row_stats().processed(), 10);
  EXPECT_EQ(status.current_offsets().at(0), 10);
}

// A producer cannot wedge a datasource that discovers its dimensions: a
// record that would bring its segment past 8192 discovered dimensions is an
// unparseable record, counted and sampled, and the rest is published. The
// bound holds across persists (each starts a new index of the segment).
TEST_F(ReadLoopTest, ARecordPastTheSegmentsDiscoveredDimensionsIsAParseError) {
  auto wide = [](int64_t n, int first, int count) {
    std::string value = absl::StrCat(R"({"timestamp":)", kBaseTimeMs + n * 1000);
    for (int i = first; i < first + count; ++i) absl::StrAppend(&value, ",\"f", i, "\":\"v\"");
    return value + "}";
  };
  std::vector<std::string> values;
  for (int r = 0; r < 8; ++r) values.push_back(wide(r, r * 1024, 1024));  // 8192 names
  values.push_back(wide(8, 8192, 1));                                     // one more: refused
  values.push_back(wide(9, 0, 3));                                        // known names
  ASSERT_TRUE(kafka_->Produce("wiki", 0, values).ok());
  v1::TaskSpec spec = Spec(kafka_->bootstrap(), 1000000);
  spec.mutable_tuning_config()->set_max_rows_in_memory(3);
  Task task(spec, dir_ + "/task", &supervisor_, deep_.get());
  ASSERT_TRUE(task.WaitForOffset(10));
  task.FinishAt(10);
  EXPECT_EQ(task.final_state(), v1::TASK_STATE_SUCCESS) << task.final_error();
  const std::vector<v1::PublishSegmentsRequest> publishes = supervisor_.publishes();
  ASSERT_EQ(publishes.size(), 1u);
  EXPECT_EQ(PublishedRows(publishes[0]), 9);
  ASSERT_EQ(publishes[0].partition_stats_size(), 1);
  EXPECT_EQ(publishes[0].partition_stats(0).rows(), 9);
  EXPECT_EQ(publishes[0].partition_stats(0).unparseable(), 1);
  v1::TaskStatus status;
  task.control().FillStatus({}, &status);
  EXPECT_GE(status.row_stats().persists(), 2);
  ASSERT_EQ(status.recent_parse_errors_size(), 1);
  EXPECT_EQ(status.recent_parse_errors(0).offset(), 8);
  EXPECT_EQ(status.recent_parse_errors(0).kind(), "VALUE_TOO_LARGE");
  EXPECT_EQ(status.recent_parse_errors(0).message(),
            "dimension \"f8192\" would be discovered dimension 8193 of the segment, beyond the "
            "limit of 8192");
}

// The bound holds across a restart: the restored task counts the names its
// segment's spills already hold, so a record past the bound after the
// restart is a parse error too, and the segment builds.
TEST_F(ReadLoopTest, TheDiscoveredDimensionBoundHoldsAcrossARestart) {
  auto wide = [](int64_t n, int first, int count) {
    std::string value = absl::StrCat(R"({"timestamp":)", kBaseTimeMs + n * 1000);
    for (int i = first; i < first + count; ++i) absl::StrAppend(&value, ",\"f", i, "\":\"v\"");
    return value + "}";
  };
  std::vector<std::string> values;
  for (int r = 0; r < 8; ++r) values.push_back(wide(r, r * 1024, 1024));  // 8192 names
  ASSERT_TRUE(kafka_->Produce("wiki", 0, values).ok());
  v1::TaskSpec spec = Spec(kafka_->bootstrap(), 1000000);
  spec.mutable_tuning_config()->set_max_rows_in_memory(3);
  {
    Task task(spec, dir_ + "/task", &supervisor_, deep_.get());
    ASSERT_TRUE(task.WaitForOffset(8));
    task.Shutdown();  // persists what it holds; the segment lives in spills only
    EXPECT_FALSE(task.control().finished());
  }
  ASSERT_TRUE(kafka_->Produce("wiki", 0, {wide(8, 8192, 1),  // one more name: refused
                                          wide(9, 0, 3)})    // known names
                  .ok());
  Task task(spec, dir_ + "/task", &supervisor_, deep_.get());
  ASSERT_TRUE(task.WaitForOffset(10));
  task.FinishAt(10);
  EXPECT_EQ(task.final_state(), v1::TASK_STATE_SUCCESS) << task.final_error();
  const std::vector<v1::PublishSegmentsRequest> publishes = supervisor_.publishes();
  ASSERT_EQ(publishes.size(), 1u);
  EXPECT_EQ(PublishedRows(publishes[0]), 9);
  ASSERT_EQ(publishes[0].partition_stats_size(), 1);
  EXPECT_EQ(publishes[0].partition_stats(0).rows(), 9);
  EXPECT_EQ(publishes[0].partition_stats(0).unparseable(), 1);
  v1::TaskStatus status;
  task.control().FillStatus({}, &status);
  ASSERT_EQ(status.recent_parse_errors_size(), 1);
  EXPECT_EQ(status.recent_parse_errors(0).offset(), 8);
  EXPECT_EQ(status.recent_parse_errors(0).kind(), "VALUE_TOO_LARGE");
  EXPECT_EQ(status.recent_parse_errors(0).message(),
            "dimension \"f8192\" would be discovered dimension 8193 of the segment, beyond the "
            "limit of 8192");
}

TEST_F(ReadLoopTest, ALatestSegmentAtMaxRowsPerSegmentAsksForACheckpoint) {
  Produce(0, 10);
  // 10 records over two hours: the first-hour segment reaches 3 rows.
  Task task(Spec(kafka_->bootstrap(), 3), dir_ + "/task", &supervisor_, deep_.get());
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (supervisor_.checkpoints().empty() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const std::vector<v1::CheckpointDataSourceMetadataRequest> asked = supervisor_.checkpoints();
  ASSERT_FALSE(asked.empty());
  EXPECT_EQ(asked[0].task_id(), "t1");
  EXPECT_EQ(asked[0].base_sequence_name(), "wiki_base");
  EXPECT_EQ(asked[0].sequence_id(), 0);
  EXPECT_EQ(asked[0].start_offsets().at(0), 0);
  // Parked between two records, before the rest of the batch.
  absl::StatusOr<OffsetMap> paused = task.control().Pause(absl::Seconds(10));
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_LT(paused->at(0), 10);
  EXPECT_GE(paused->at(0), 5);  // 3 rows in the first hour: records 0, 2, 4
  v1::TaskStatus status;
  task.control().FillStatus({}, &status);
  EXPECT_TRUE(status.awaiting_checkpoint());
  // The supervisor closes sequence 0 there; the loop reads on into sequence 1.
  ASSERT_TRUE(task.control().SetEndOffsets(*paused, false).ok());
  ASSERT_TRUE(task.WaitForOffset(10));
  const absl::Time published_by = absl::Now() + absl::Seconds(20);
  while (supervisor_.publishes().empty() && absl::Now() < published_by) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const std::vector<v1::PublishSegmentsRequest> publishes = supervisor_.publishes();
  ASSERT_EQ(publishes.size(), 1u);
  EXPECT_EQ(publishes[0].sequence_name(), "wiki_base_0");
  EXPECT_EQ(publishes[0].end_offsets().at(0), paused->at(0));
  EXPECT_EQ(PublishedRows(publishes[0]), paused->at(0));
}

TEST_F(ReadLoopTest, AShutdownPersistsAndARestartReadsOnlyWhatCameAfter) {
  Produce(0, 6);
  {
    Task task(Spec(kafka_->bootstrap(), 1000000), dir_ + "/task", &supervisor_, deep_.get());
    ASSERT_TRUE(task.WaitForOffset(6));
    task.Shutdown();
    EXPECT_FALSE(task.control().finished());  // no final state: it resumes
  }
  EXPECT_TRUE(PathExists(dir_ + "/task/restore_point.json"));
  Produce(6, 9);
  Task task(Spec(kafka_->bootstrap(), 1000000), dir_ + "/task", &supervisor_, deep_.get());
  ASSERT_TRUE(task.WaitForOffset(9));
  task.FinishAt(9);
  EXPECT_EQ(task.final_state(), v1::TASK_STATE_SUCCESS) << task.final_error();
  const std::vector<v1::PublishSegmentsRequest> publishes = supervisor_.publishes();
  ASSERT_EQ(publishes.size(), 1u);
  // Every record once: 6 from the spills, 3 read after the restart.
  EXPECT_EQ(PublishedRows(publishes[0]), 9);
  EXPECT_EQ(publishes[0].partition_stats(0).rows(), 9);
  // The restored segments kept their allocations.
  EXPECT_EQ(supervisor_.allocations().size(), 2u);
  v1::TaskStatus status;
  task.control().FillStatus({}, &status);
  EXPECT_EQ(status.row_stats().processed(), 9);
}

// A sequence whose rows are all in memory when it closes is built straight
// into its segment file by the persist that closes it: no spill is written.
// The restore point names the built file, so a restart before the publish
// (here: deep storage down, then a shutdown) pushes that file, checked
// again, and every record is published once.
TEST_F(ReadLoopTest, ASequenceInMemoryIsBuiltWithoutASpillAndSurvivesARestart) {
  const std::string hold = dir_ + "/deep_storage_down";
  ASSERT_TRUE(WriteFileAtomically(hold, "").ok());
  ASSERT_TRUE(ConfigureFaultPoints("deep_storage.push=error_while_file:" + hold).ok());
  Produce(0, 10);
  const std::string spill_dir = dir_ + "/task/spills";
  state::RestorePoint point;
  {
    Task task(Spec(kafka_->bootstrap(), 1000000), dir_ + "/task", &supervisor_, deep_.get());
    ASSERT_TRUE(task.WaitForOffset(10));
    absl::StatusOr<OffsetMap> paused = task.control().Pause(absl::Seconds(10));
    ASSERT_TRUE(paused.ok()) << paused.status();
    ASSERT_TRUE(task.control().SetEndOffsets(*paused, true).ok());
    // The sequence closes; its persist builds the two segments.
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      auto loaded = Persister::LoadRestorePoint(dir_ + "/task/restore_point.json");
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      if (loaded->has_value() && (*loaded)->segments_size() == 2 &&
          !(*loaded)->segments(1).built_file().empty()) {
        point = **loaded;
        break;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    ASSERT_EQ(point.segments_size(), 2) << "no restore point naming the built files";
    task.Shutdown();
  }
  int64_t rows = 0;
  for (const state::SegmentState& s : point.segments()) {
    EXPECT_EQ(s.spill_files_size(), 0) << s.segment_id();
    ASSERT_FALSE(s.built_file().empty()) << s.segment_id();
    EXPECT_TRUE(PathExists(spill_dir + "/" + s.built_file()));
    rows += s.spilled_rows();
  }
  EXPECT_EQ(rows, 10);
  auto names = ListDirectory(spill_dir);
  ASSERT_TRUE(names.ok()) << names.status();
  for (const std::string& name : *names) EXPECT_FALSE(absl::EndsWith(name, ".spill")) << name;
  EXPECT_TRUE(supervisor_.publishes().empty());

  ASSERT_TRUE(RemoveAll(hold).ok());
  Task task(Spec(kafka_->bootstrap(), 1000000), dir_ + "/task", &supervisor_, deep_.get());
  ASSERT_TRUE(task.control().WaitFinished(absl::Seconds(30)));
  ASSERT_TRUE(ConfigureFaultPoints("").ok());
  EXPECT_EQ(task.final_state(), v1::TASK_STATE_SUCCESS) << task.final_error();
  const std::vector<v1::PublishSegmentsRequest> publishes = supervisor_.publishes();
  ASSERT_EQ(publishes.size(), 1u);
  EXPECT_EQ(publishes[0].segments_size(), 2);
  EXPECT_EQ(PublishedRows(publishes[0]), 10);
  EXPECT_EQ(publishes[0].partition_stats(0).rows(), 10);
}

// maxBytesInMemory bounds the rows in memory together with the set being
// persisted: a set persists at half of it. The index of 100 records takes
// B bytes; with maxBytesInMemory = B, 75 records (more than half of B, less
// than B) persist at least once, which a set persisting only at the whole
// budget would not.
TEST_F(ReadLoopTest, ASetPersistsAtHalfOfMaxBytesInMemory) {
  Produce(0, 100);
  int64_t bytes_of_100 = 0;
  {
    Task task(Spec(kafka_->bootstrap(), 1000000), dir_ + "/measure", &supervisor_, deep_.get());
    ASSERT_TRUE(task.WaitForOffset(100));
    v1::TaskStatus status;
    task.control().FillStatus({}, &status);
    EXPECT_EQ(status.row_stats().persists(), 0);
    bytes_of_100 = status.row_stats().bytes_in_memory();
  }
  ASSERT_GT(bytes_of_100, 0);
  ASSERT_TRUE(kafka_->CreateTopic("wiki75", 1).ok());
  std::vector<std::string> values;
  for (int64_t n = 0; n < 75; ++n) values.push_back(Record(n));
  ASSERT_TRUE(kafka_->Produce("wiki75", 0, values).ok());
  v1::TaskSpec spec = Spec(kafka_->bootstrap(), 1000000);
  spec.set_topic("wiki75");
  spec.mutable_tuning_config()->set_max_bytes_in_memory(bytes_of_100);
  Task task(spec, dir_ + "/task", &supervisor_, deep_.get());
  ASSERT_TRUE(task.WaitForOffset(75));
  v1::TaskStatus status;
  task.control().FillStatus({}, &status);
  EXPECT_GE(status.row_stats().persists(), 1);
}

TEST_F(ReadLoopTest, EndOffsetsSetWhileIdleRouteTheNextRecordsToTheNextSequence) {
  Produce(0, 10);
  Task task(Spec(kafka_->bootstrap(), 1000000), dir_ + "/task", &supervisor_, deep_.get());
  ASSERT_TRUE(task.WaitForOffset(10));
  // Already read: refused as passed, nothing changes.
  EXPECT_EQ(task.control().SetEndOffsets({{0, 8}}, false).status().code(),
            absl::StatusCode::kAborted);
  // Between batches (nothing to read): accepted without a pause.
  absl::StatusOr<v1::SetEndOffsetsResponse> set = task.control().SetEndOffsets({{0, 15}}, false);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->latest_sequence_id(), 1);
  EXPECT_EQ(task.control().state(), v1::TASK_STATE_READING);
  Produce(10, 20);
  ASSERT_TRUE(task.WaitForOffset(20));
  task.FinishAt(20);
  EXPECT_EQ(task.final_state(), v1::TASK_STATE_SUCCESS) << task.final_error();
  const std::vector<v1::PublishSegmentsRequest> publishes = supervisor_.publishes();
  ASSERT_EQ(publishes.size(), 2u);
  EXPECT_EQ(publishes[0].sequence_name(), "wiki_base_0");
  EXPECT_EQ(publishes[0].end_offsets().at(0), 15);
  EXPECT_EQ(PublishedRows(publishes[0]), 15);
  EXPECT_EQ(publishes[1].sequence_name(), "wiki_base_1");
  EXPECT_EQ(publishes[1].start_offsets().at(0), 15);
  EXPECT_EQ(PublishedRows(publishes[1]), 5);
}

TEST_F(ReadLoopTest, EndOffsetsRacingABatchNeverCutIntoWhatWasRouted) {
  // Small chunks and batches so SetEndOffsets lands before, inside and
  // after batches while the loop routes: whichever end is accepted, the
  // first sequence holds exactly the records before it and the second the
  // rest (every record is its own row).
  constexpr int64_t kRecords = 4000;
  int64_t produced = kRecords;
  Produce(0, produced);
  Task task(Spec(kafka_->bootstrap(), 1000000), dir_ + "/task", &supervisor_, deep_.get(),
            /*claim_chunk_records=*/3, /*max_batch_records=*/50);
  ASSERT_TRUE(task.WaitForOffset(1));
  int64_t end = -1;
  int refused = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (end < 0 && absl::Now() < deadline) {
    const OffsetMap current = task.control().current();
    const int64_t at = current.count(0) ? current.at(0) : 0;
    if (at >= produced) {
      // A loaded machine let the loop read everything before this thread
      // proposed an end: give it more to read and race again.
      Produce(produced, produced + kRecords);
      produced += kRecords;
      continue;
    }
    const int64_t proposal = at + 60;  // a batch (50) and a chunk (3) ahead of `at`, at most
    absl::StatusOr<v1::SetEndOffsetsResponse> set =
        task.control().SetEndOffsets({{0, proposal}}, false);
    if (set.ok() && !set->duplicate()) {
      end = proposal;
    } else if (!set.ok()) {
      ASSERT_EQ(set.status().code(), absl::StatusCode::kAborted) << set.status();
      ++refused;
    }
  }
  ASSERT_GT(end, 0) << "no end accepted while reading (" << refused << " refused)";
  ASSERT_TRUE(task.WaitForOffset(produced));
  task.FinishAt(produced);
  EXPECT_EQ(task.final_state(), v1::TASK_STATE_SUCCESS) << task.final_error();
  const std::vector<v1::PublishSegmentsRequest> publishes = supervisor_.publishes();
  ASSERT_EQ(publishes.size(), 2u);
  EXPECT_EQ(publishes[0].end_offsets().at(0), end);
  EXPECT_EQ(PublishedRows(publishes[0]), end);
  EXPECT_EQ(publishes[1].start_offsets().at(0), end);
  EXPECT_EQ(PublishedRows(publishes[1]), produced - end);
}

TEST_F(ReadLoopTest, AnEarlyCheckpointRequestParksOnlyOnceTheSegmentIsFull) {
  Produce(0, 40);
  // maxRowsPerSegment 10: asks at 9 rows of a segment (record 16 in the
  // first hour) and reads on; parks only if a segment reaches 10 rows.
  Task task(Spec(kafka_->bootstrap(), 10), dir_ + "/task", &supervisor_, deep_.get());
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (supervisor_.checkpoints().empty() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_FALSE(supervisor_.checkpoints().empty());
  // Full before any end came: parked, with the whole first hour's 10 rows
  // routed (records 0..18) and not beyond the record that filled it.
  absl::StatusOr<OffsetMap> paused = task.control().Pause(absl::Seconds(10));
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_GE(paused->at(0), 19);
  EXPECT_LT(paused->at(0), 40);
  EXPECT_EQ(supervisor_.checkpoints().size(), 1u);  // asked once, early
  ASSERT_TRUE(task.control().SetEndOffsets(*paused, false).ok());
  // It reads on into the next sequence (which asks early in turn).
  ASSERT_TRUE(task.WaitForOffset(paused->at(0) + 1));
}

}  // namespace
}  // namespace sluice::task
