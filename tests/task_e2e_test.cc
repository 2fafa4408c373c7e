// End to end in one process: the real supervisor (SQLite metadata store,
// checkpoint rounds, publish transactions, roll-over) and real task workers
// on loopback, reading a mock Kafka cluster. What the supervisor committed is
// audited against what was produced: every offset once, every row once.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/grpc_status.h"
#include "common/metrics/catalog.h"
#include "common/metrics/registry.h"
#include "common/open_deep_storage.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "supervisor/supervisor_server.h"
#include "task/worker_server.h"
#include "tests/task_mock_kafka.h"
#include "tests/task_test_util.h"

namespace sluice::testing {
namespace {

using ::sluice::OffsetMap;

class TaskEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("task_e2e");
    ASSERT_FALSE(dir_.empty());
    auto kafka = MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    ASSERT_TRUE(kafka_->CreateTopic("wiki", 2).ok());
    auto deep = OpenDeepStorage("file://" + dir_ + "/deep");
    ASSERT_TRUE(deep.ok());
    deep_ = std::move(*deep);

    StartSupervisor();
  }

  // (Re)starts the supervisor (before any worker or spec).
  void StartSupervisor(bool pauseless = true, supervisor::PauselessMarginOptions margin = {}) {
    supervisor_.reset();
    supervisor::SupervisorServerOptions options;
    options.pauseless_checkpoints = pauseless;
    options.pauseless_margin = margin;
    options.metrics = &metrics_;
    options.auth.insecure_no_auth = true;  // auth: tests/cluster_auth_test.cc
    options.data_dir = dir_ + "/supervisor";
    options.deep_storage_uri = "file://" + dir_ + "/deep";
    options.heartbeat_interval = absl::Milliseconds(100);
    options.min_worker_lost_timeout = absl::Seconds(5);
    options.handoff_period = absl::Milliseconds(100);
    auto supervisor = supervisor::SupervisorServer::Start(options);
    ASSERT_TRUE(supervisor.ok()) << supervisor.status();
    supervisor_ = std::move(*supervisor);
    stub_ = v1::SupervisorService::NewStub(
        grpc::CreateChannel(supervisor_->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    ConfigureFaultPoints("").IgnoreError();
    workers_.clear();
    supervisor_.reset();
    kafka_.reset();
    RemoveAll(dir_).IgnoreError();
  }

  void StartWorker(const std::string& id) {
    task::WorkerServerOptions options;
    options.auth.insecure_no_auth = true;  // auth: tests/cluster_auth_test.cc
    options.data_dir = dir_ + "/" + id;
    options.supervisor_address = supervisor_->address();
    options.deep_storage_uri = "file://" + dir_ + "/deep";
    options.worker_id = id;
    options.heartbeat_interval = absl::Milliseconds(100);
    options.tuning.handoff_poll_interval = absl::Milliseconds(50);
    options.tuning.min_backoff = absl::Milliseconds(20);
    options.tuning.max_backoff = absl::Milliseconds(200);
    options.tuning.kafka_cluster = kafka::ClusterKind::kDevBroker;
    auto worker = task::WorkerServer::Start(options);
    ASSERT_TRUE(worker.ok()) << worker.status();
    workers_.push_back(std::move(*worker));
  }

  uint64_t SupervisorCount(const metrics::MetricDef& def) {
    return metrics_.GetCounter(def, {{"datasource", "wiki"}})->Value();
  }

  // Produces `per_batch` records per partition every `every`, `batches` times.
  void ProduceOver(int batches, int64_t per_batch, absl::Duration every) {
    for (int i = 0; i < batches; ++i) {
      Produce(per_batch);
      absl::SleepFor(every);
    }
  }

  void Submit(int replicas, const std::string& intermediate_handoff_period = "") {
    v1::SupervisorSpec spec;
    spec.set_datasource("wiki");
    v1::IoConfig* io = spec.mutable_io_config();
    io->set_topic("wiki");
    (*io->mutable_consumer_properties())["bootstrap.servers"] = kafka_->bootstrap();
    io->set_task_count(1);
    io->set_replicas(replicas);
    io->set_task_duration("PT4S");
    io->set_start_delay("PT0.1S");
    io->set_period("PT0.2S");
    io->set_use_earliest_offset(true);
    io->set_completion_timeout("PT60S");
    io->set_poll_timeout("PT0.05S");
    v1::DataSchema* schema = spec.mutable_data_schema();
    schema->mutable_timestamp_spec()->set_column("timestamp");
    schema->mutable_timestamp_spec()->set_format("millis");
    schema->mutable_granularity_spec()->set_segment_granularity("HOUR");
    v1::MetricSpec* count = schema->add_metrics_spec();
    count->set_type("count");
    count->set_name("count");
    v1::MetricSpec* added = schema->add_metrics_spec();
    added->set_type("longSum");
    added->set_name("added");
    v1::TuningConfig* tuning = spec.mutable_tuning_config();
    tuning->set_max_rows_per_segment(60);
    tuning->set_max_rows_in_memory(25);
    tuning->set_checkpoint_retry_period("PT0.5S");
    tuning->set_chat_timeout("PT1S");
    tuning->set_chat_retries(3);
    tuning->set_handoff_condition_timeout("PT10S");
    if (!intermediate_handoff_period.empty()) {
      // Checkpoints by time only: the tasks never fill a sequence and park.
      tuning->set_max_rows_per_segment(1000000);
      tuning->set_intermediate_handoff_period(intermediate_handoff_period);
    }
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    v1::SubmitSupervisorRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitSupervisorResponse response;
    const grpc::Status status = stub_->SubmitSupervisor(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  void Produce(int64_t per_partition) {
    for (int32_t p = 0; p < 2; ++p) {
      std::vector<std::string> values;
      std::vector<std::string>& all = produced_[p];
      for (int64_t i = 0; i < per_partition; ++i) {
        values.push_back(Record(p, static_cast<int64_t>(all.size())));
        all.push_back(values.back());
      }
      ASSERT_TRUE(kafka_->Produce("wiki", p, values).ok());
    }
  }

  absl::StatusOr<v1::GetCommitLogResponse> CommitLog() {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    v1::GetCommitLogRequest ref;
    ref.set_datasource("wiki");
    v1::GetCommitLogResponse response;
    const grpc::Status status = stub_->GetCommitLog(&context, ref, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  std::vector<v1::SegmentDescriptor> Segments() {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    v1::ListSegmentsRequest request;
    request.set_datasource("wiki");
    v1::ListSegmentsResponse response;
    EXPECT_TRUE(stub_->ListSegments(&context, request, &response).ok());
    return {response.segments().begin(), response.segments().end()};
  }

  // Waits until the committed offsets reach `end` and audits the log.
  void WaitAndAudit(const OffsetMap& end, size_t min_sequences = 3) {
    OffsetMap committed;
    ASSERT_TRUE(WaitFor(
        [&] {
          auto log = CommitLog();
          if (log.ok()) committed = FromProto(log->committed_offsets());
          return committed == end;
        },
        absl::Seconds(60)))
        << "committed " << FormatOffsets(committed) << ", want "
        << FormatOffsets(end);
    auto log = CommitLog();
    ASSERT_TRUE(log.ok());
    const std::vector<v1::CommittedSequence> sequences(log->sequences().begin(),
                                                       log->sequences().end());
    EXPECT_GE(sequences.size(), min_sequences);
    const absl::Status verified =
        VerifyCommitLog(sequences, Segments(), deep_.get(), "", produced_, {{0, 0}, {1, 0}}, end);
    EXPECT_TRUE(verified.ok()) << verified;
  }

  std::string dir_;
  std::unique_ptr<MockKafka> kafka_;
  std::unique_ptr<DeepStorage> deep_;
  std::unique_ptr<supervisor::SupervisorServer> supervisor_;
  std::unique_ptr<v1::SupervisorService::Stub> stub_;
  std::vector<std::unique_ptr<task::WorkerServer>> workers_;
  Produced produced_;
  metrics::Registry metrics_;
};

TEST_F(TaskEndToEndTest, OneTaskPerGroupAcrossRollOvers) {
  StartWorker("worker-0");
  Produce(150);
  Submit(/*replicas=*/1);
  // Data keeps arriving while groups checkpoint, publish and roll over.
  ASSERT_TRUE(WaitFor(
      [&] {
        auto log = CommitLog();
        return log.ok() && log->sequences_size() >= 2;
      },
      absl::Seconds(60)));
  Produce(150);
  WaitAndAudit({{0, 300}, {1, 300}});
}

TEST_F(TaskEndToEndTest, TwoReplicasPublishEachSequenceOnce) {
  StartWorker("worker-0");
  StartWorker("worker-1");
  Produce(150);
  Submit(/*replicas=*/2);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto log = CommitLog();
        return log.ok() && log->sequences_size() >= 2;
      },
      absl::Seconds(60)));
  Produce(150);
  WaitAndAudit({{0, 300}, {1, 300}});
}

// Pauseless checkpoints with the default margin, every record produced
// before the run, one replica: the end is max + margin capped at the latest
// offset (the topic's real end here; nothing more arrives, so nothing is
// expected past it), the replica reads through to it, and
// every round sets the end without pausing; none falls back.
TEST_F(TaskEndToEndTest, OneReplicaCheckpointsWithoutPausingAndNeverFallsBack) {
  StartWorker("worker-0");
  Produce(400);
  Submit(/*replicas=*/1, /*intermediate_handoff_period=*/"PT0.5S");
  WaitAndAudit({{0, 400}, {1, 400}}, /*min_sequences=*/1);
  EXPECT_GT(SupervisorCount(metrics::kSupervisorPauselessCheckpoints), 0u);
  EXPECT_EQ(SupervisorCount(metrics::kSupervisorCheckpointFallbacks), 0u);
}

// Two replicas caught up with a live stream (records keep arriving while
// they read, checkpoints by time): a pauseless end lies past the records
// that exist by what the stream is expected to add during the round, the
// replicas read through to it as the records come, and rounds set it
// without pausing either replica. Every record is there once.
TEST_F(TaskEndToEndTest, TwoReplicasCaughtUpWithALiveStreamCheckpointWithoutPausing) {
  StartWorker("worker-0");
  StartWorker("worker-1");
  Produce(50);
  Submit(/*replicas=*/2, /*intermediate_handoff_period=*/"PT0.5S");
  // ~250 records/s per partition for 4 s, in small steady batches.
  ProduceOver(/*batches=*/200, /*per_batch=*/5, absl::Milliseconds(20));
  WaitAndAudit({{0, 1050}, {1, 1050}}, /*min_sequences=*/2);
  EXPECT_GT(SupervisorCount(metrics::kSupervisorPauselessCheckpoints), 0u);
}

// A pauseless end far past the records that exist (a huge expected-arrival
// window), then the stream stops: no replica can reach the end, so the next
// paused round (a checkpoint by time, a roll-over, or the stalled-checkpoint
// check) moves the checkpoint back to what the replicas read, and the
// sequence closes and publishes there. Nothing is lost or read twice.
TEST_F(TaskEndToEndTest, ACheckpointPastTheStreamsEndMovesBackWhenTheStreamStops) {
  supervisor::PauselessMarginOptions margin;
  margin.min_window = absl::Seconds(2);
  margin.stalled_checkpoint_after = absl::Seconds(1);
  StartSupervisor(/*pauseless=*/true, margin);
  StartWorker("worker-0");
  StartWorker("worker-1");
  Produce(50);
  Submit(/*replicas=*/2, /*intermediate_handoff_period=*/"PT0.5S");
  // The stream runs until a pauseless end has been set while it ran (on a
  // loaded machine the first round can come late: a stream that stopped
  // before it would leave nothing to move back), then a little longer.
  ProduceOver(/*batches=*/50, /*per_batch=*/5, absl::Milliseconds(20));
  for (int i = 0; i < 500 && SupervisorCount(metrics::kSupervisorPauselessCheckpoints) == 0;
       ++i) {
    ProduceOver(/*batches=*/1, /*per_batch=*/5, absl::Milliseconds(20));
  }
  ASSERT_GT(SupervisorCount(metrics::kSupervisorPauselessCheckpoints), 0u);
  ProduceOver(/*batches=*/10, /*per_batch=*/5, absl::Milliseconds(20));
  // The stream stops here; the ends set while it ran lie up to ~2,000
  // records past it.
  const int64_t produced = static_cast<int64_t>(produced_[0].size());
  WaitAndAudit({{0, produced}, {1, produced}}, /*min_sequences=*/1);
  EXPECT_GT(SupervisorCount(metrics::kSupervisorCheckpointsMovedBack), 0u);
}

// No margin, and a delay between recording a pauseless end and sending it,
// while records keep coming: the replica asked first has read past the end,
// the round falls back to pause-and-max (or replaces a replica that passed
// it), and exactly-once still holds.
TEST_F(TaskEndToEndTest, TwoReplicasFallBackToPauseAndMaxWhenTheyReadPastTheEnd) {
  supervisor::PauselessMarginOptions margin;
  margin.min_margin = 0;
  margin.max_margin = 0;
  StartSupervisor(/*pauseless=*/true, margin);
  ASSERT_TRUE(ConfigureFaultPoints("supervisor.checkpoint.before_pauseless_set=delay:300@*").ok());
  StartWorker("worker-0");
  StartWorker("worker-1");
  Produce(100);
  Submit(/*replicas=*/2, /*intermediate_handoff_period=*/"PT0.5S");
  ProduceOver(/*batches=*/30, /*per_batch=*/10, absl::Milliseconds(100));
  ASSERT_TRUE(WaitFor(
      [&] { return SupervisorCount(metrics::kSupervisorCheckpointFallbacks) > 0; },
      absl::Seconds(30)));
  ASSERT_TRUE(ConfigureFaultPoints("").ok());
  WaitAndAudit({{0, 400}, {1, 400}});
}

}  // namespace
}  // namespace sluice::testing
