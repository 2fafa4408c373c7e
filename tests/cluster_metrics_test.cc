// The in-process cluster with metrics: each server records its RPCs in its
// own registry, served over HTTP; the test scrapes both endpoints over TCP
// and finds the calls it made, by method and status code. Then a small
// ingestion from a mock Kafka: every metric of the catalog shows a non-zero
// value, and the row counters the exact numbers produced.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/e2e/prometheus_text.h"
#include "common/metrics/catalog.h"
#include "common/metrics/http_get.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"
#include "sluice/v1/supervisor_service.grpc.pb.h"
#include "tests/grpc_introspection.h"
#include "tests/in_process_cluster.h"
#include "tests/task_mock_kafka.h"
#include "tests/task_test_util.h"

namespace sluice {
namespace {

class ClusterMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override { StartCluster({}); }

  void StartCluster(testing::InProcessClusterOptions options) {
    for (auto [registry, out] : {std::make_pair(&supervisor_metrics_, &supervisor_http_),
                                 std::make_pair(&worker_metrics_, &worker_http_)}) {
      auto http = metrics::MetricsHttpServer::StartIfListening("127.0.0.1:0", registry);
      ASSERT_TRUE(http.ok()) << http.status();
      *out = std::move(*http);
    }
    options.supervisor_metrics = &supervisor_metrics_;
    options.worker_metrics = &worker_metrics_;
    auto cluster = testing::InProcessCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  static std::shared_ptr<grpc::Channel> Dial(const std::string& address) {
    return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  }

  static std::vector<bench::PromSample> Samples(const metrics::MetricsHttpServer& http) {
    auto samples = bench::ParsePromText(Scrape(http));
    EXPECT_TRUE(samples.ok()) << samples.status();
    return samples.ok() ? *samples : std::vector<bench::PromSample>{};
  }

  static std::string Scrape(const metrics::MetricsHttpServer& http) {
    auto response = metrics::HttpGet(http.port(), "/metrics");
    EXPECT_TRUE(response.ok()) << response.status();
    if (!response.ok()) return "";
    EXPECT_EQ(response->status, 200);
    return response->body;
  }

  metrics::Registry supervisor_metrics_, worker_metrics_;  // outlive the servers
  std::unique_ptr<metrics::MetricsHttpServer> supervisor_http_, worker_http_;
  std::unique_ptr<testing::InProcessCluster> cluster_;
};

TEST_F(ClusterMetricsTest, ScrapesCountTheRpcsEachServerHandled) {
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(testing::CheckHealth(Dial(cluster_->supervisor().address())).ok());
  ASSERT_TRUE(testing::CheckHealth(Dial(cluster_->worker().address())).ok());
  auto unknown = testing::CheckHealth(Dial(cluster_->worker().address()), "no.such.Service");
  ASSERT_EQ(unknown.status().code(), absl::StatusCode::kNotFound) << unknown.status();

  // One SupervisorService call; whatever it answers is what must be counted.
  auto stub = v1::SupervisorService::NewStub(Dial(cluster_->supervisor().address()));
  grpc::ClientContext ctx;
  v1::ListSupervisorsRequest request;
  v1::ListSupervisorsResponse response;
  grpc::Status status = stub->ListSupervisors(&ctx, request, &response);
  const std::string code =
      absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));

  const std::string supervisor_text = Scrape(*supervisor_http_);
  EXPECT_TRUE(
      absl::StrContains(supervisor_text,
                        "sluice_grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Check\","
                        "grpc_service=\"grpc.health.v1.Health\"} 3\n"))
      << supervisor_text;
  EXPECT_TRUE(absl::StrContains(supervisor_text,
                                absl::StrCat("sluice_grpc_server_handled_total{grpc_code=\"", code,
                                             "\",grpc_method=\"ListSupervisors\","
                                             "grpc_service=\"sluice.v1.SupervisorService\"} 1\n")))
      << supervisor_text;
  EXPECT_TRUE(absl::StrContains(supervisor_text,
                                "sluice_grpc_server_handling_seconds_count{grpc_method=\"Check\","
                                "grpc_service=\"grpc.health.v1.Health\"} 3\n"))
      << supervisor_text;

  const std::string worker_text = Scrape(*worker_http_);
  EXPECT_TRUE(
      absl::StrContains(worker_text,
                        "sluice_grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Check\","
                        "grpc_service=\"grpc.health.v1.Health\"} 1\n"))
      << worker_text;
  EXPECT_TRUE(absl::StrContains(worker_text,
                                "sluice_grpc_server_handled_total{grpc_code="
                                "\"NOT_FOUND\",grpc_method=\"Check\","
                                "grpc_service=\"grpc.health.v1.Health\"} 1\n"))
      << worker_text;
  // Each process counts only its own calls.
  EXPECT_FALSE(absl::StrContains(worker_text, "ListSupervisors")) << worker_text;
}

TEST_F(ClusterMetricsTest, HealthzAnswersWhileTheProcessRuns) {
  auto response = metrics::HttpGet(worker_http_->port(), "/healthz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "ok\n");
}

// The cluster against a mock Kafka, ingesting for real.
class ClusterIngestMetricsTest : public ClusterMetricsTest {
 protected:
  static constexpr int kPartitions = 2;
  static constexpr int kValid = 120;      // per partition
  static constexpr int kUnparseable = 3;  // per partition
  static constexpr int kTooOld = 2;       // per partition, before the rejection window

  void SetUp() override {
    auto kafka = testing::MockKafka::Start();
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    ASSERT_TRUE(kafka_->CreateTopic("wiki", kPartitions).ok());
    testing::InProcessClusterOptions options;
    options.worker_knobs.kafka_cluster = kafka::ClusterKind::kDevBroker;
    options.worker_knobs.handoff_poll_interval = absl::Milliseconds(50);
    options.handoff_period = absl::Milliseconds(100);
    StartCluster(options);
  }

  void TearDown() override {
    cluster_.reset();
    kafka_.reset();
  }

  void ProduceBatch() {
    for (int32_t p = 0; p < kPartitions; ++p) {
      std::vector<std::string> values;
      for (int n = 0; n < kValid; ++n) values.push_back(testing::Record(p, n));
      for (int n = 0; n < kUnparseable; ++n) values.push_back("{\"timestamp\": ");
      for (int n = 0; n < kTooOld; ++n) {
        values.push_back(absl::StrCat("{\"timestamp\":", testing::kBaseTimeMs - 86400000 * 10,
                                      ",\"page\":\"old\"}"));
      }
      ASSERT_TRUE(kafka_->Produce("wiki", p, values).ok());
      end_[p] += static_cast<int64_t>(values.size());
    }
  }

  v1::SupervisorService::Stub* Stub() {
    if (!stub_) stub_ = v1::SupervisorService::NewStub(Dial(cluster_->supervisor().address()));
    return stub_.get();
  }

  void Submit(const std::string& datasource, v1::HandoffMode mode) {
    v1::SupervisorSpec spec;
    spec.set_datasource(datasource);
    v1::IoConfig* io = spec.mutable_io_config();
    io->set_topic("wiki");
    (*io->mutable_consumer_properties())["bootstrap.servers"] = kafka_->bootstrap();
    io->set_task_duration("PT1H");
    io->set_start_delay("PT0.1S");
    io->set_period("PT0.2S");
    io->set_use_earliest_offset(true);
    io->set_poll_timeout("PT0.05S");
    // kBaseTimeMs is 2026-11-30T00:00:00Z: the records 10 days older are thrown
    // away.
    io->set_late_message_rejection_start_date_time("2026-11-29T00:00:00Z");
    v1::DataSchema* schema = spec.mutable_data_schema();
    schema->mutable_timestamp_spec()->set_format("millis");
    v1::MetricSpec* count = schema->add_metrics_spec();
    count->set_type("count");
    count->set_name("count");
    v1::TuningConfig* tuning = spec.mutable_tuning_config();
    tuning->set_max_rows_per_segment(40);  // several checkpoints
    tuning->set_max_rows_in_memory(15);    // several persists
    tuning->set_handoff_mode(mode);
    // LOADER: nobody confirms, so every publish ends in a handoff timeout.
    tuning->set_handoff_condition_timeout(mode == v1::HANDOFF_MODE_LOADER ? "PT0.3S" : "PT30S");
    v1::SubmitSupervisorRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitSupervisorResponse response;
    grpc::ClientContext ctx;
    const grpc::Status status = Stub()->SubmitSupervisor(&ctx, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  void Suspend(const std::string& datasource) {
    v1::SuspendSupervisorRequest ref;
    ref.set_datasource(datasource);
    v1::SuspendSupervisorResponse summary;
    grpc::ClientContext ctx;
    const grpc::Status status = Stub()->SuspendSupervisor(&ctx, ref, &summary);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // Every record committed and every task of `datasource` finished.
  bool Done(const std::string& datasource) {
    v1::GetCommitLogRequest ref;
    ref.set_datasource(datasource);
    v1::GetCommitLogResponse log;
    grpc::ClientContext ctx;
    if (!Stub()->GetCommitLog(&ctx, ref, &log).ok()) return false;
    for (const auto& [p, end] : end_) {
      const auto it = log.committed_offsets().find(p);
      if (it == log.committed_offsets().end() || it->second != end) return false;
    }
    v1::SupervisorServiceListTasksRequest request;
    request.set_datasource(datasource);
    request.set_include_finished(true);
    v1::SupervisorServiceListTasksResponse tasks;
    grpc::ClientContext list_ctx;
    if (!Stub()->ListTasks(&list_ctx, request, &tasks).ok() || tasks.tasks_size() == 0) {
      return false;
    }
    for (const v1::SupervisorTaskRecord& t : tasks.tasks()) {
      if (t.state() != v1::TASK_STATE_SUCCESS) return false;
    }
    return true;
  }

  std::unique_ptr<testing::MockKafka> kafka_;
  std::unique_ptr<v1::SupervisorService::Stub> stub_;
  std::map<int32_t, int64_t> end_;
};

TEST_F(ClusterIngestMetricsTest, EveryCatalogMetricCountsASmallIngestion) {
  ProduceBatch();
  Submit("wiki", v1::HANDOFF_MODE_DEEP_STORAGE);
  Submit("wiki_loader", v1::HANDOFF_MODE_LOADER);
  const std::map<std::string, std::string> wiki = {{"datasource", "wiki"}};

  // While both tasks read (they stay READING once at the end of the topic):
  // the gauges of tasks by state.
  std::vector<bench::PromSample> reading_worker, reading_supervisor;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        reading_worker = Samples(*worker_http_);
        reading_supervisor = Samples(*supervisor_http_);
        return bench::SumSamples(reading_worker, metrics::kTaskTasks.name,
                                 {{"state", "READING"}}) == 2 &&
               bench::SumSamples(reading_supervisor, metrics::kSupervisorTasks.name,
                                 {{"datasource", "wiki"}, {"state", "READING"}}) == 1 &&
               bench::SumSamples(reading_worker, metrics::kTaskRowsProcessed.name) ==
                   2 * kPartitions * kValid;
      },
      absl::Seconds(30)));

  // Finish both (the last sequences publish), then leave records unread.
  Suspend("wiki");
  Suspend("wiki_loader");
  ASSERT_TRUE(
      testing::WaitFor([&] { return Done("wiki") && Done("wiki_loader"); }, absl::Seconds(30)));
  // One used segment of wiki damaged in deep storage after its handoff: the
  // re-verification of handed-off segments counts it (the verification-failure
  // metrics).
  {
    v1::ListSegmentsRequest list;
    list.set_datasource("wiki");
    v1::ListSegmentsResponse segments;
    grpc::ClientContext ctx;
    ASSERT_TRUE(Stub()->ListSegments(&ctx, list, &segments).ok());
    ASSERT_GT(segments.segments_size(), 0);
    std::string path = segments.segments(0).path();
    ASSERT_EQ(path.rfind("file://", 0), 0u) << path;
    path = path.substr(strlen("file://"));
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(64);
    char c = 0;
    f.read(&c, 1);
    f.seekp(64);
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
    f.close();
    auto pass =
        cluster_->supervisor().manager()->housekeeping()->used_segment_verifier()->VerifyOnce();
    ASSERT_TRUE(pass.ok()) << pass.status();
    EXPECT_GE(pass->failed, 1);
  }
  ProduceBatch();
  std::vector<bench::PromSample> worker, supervisor;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        supervisor = Samples(*supervisor_http_);
        return bench::SumSamples(supervisor, metrics::kSupervisorPartitionLag.name, wiki) ==
               static_cast<double>(kPartitions * (kValid + kUnparseable + kTooOld));
      },
      absl::Seconds(30)))
      << "lag of wiki: "
      << bench::SumSamples(supervisor, metrics::kSupervisorPartitionLag.name, wiki);
  worker = Samples(*worker_http_);

  // Exact counts where the input decides them.
  EXPECT_EQ(bench::SumSamples(worker, metrics::kTaskRowsProcessed.name, wiki),
            kPartitions * kValid);
  EXPECT_EQ(bench::SumSamples(worker, metrics::kTaskRowsUnparseable.name, wiki),
            kPartitions * kUnparseable);
  EXPECT_EQ(bench::SumSamples(worker, metrics::kTaskRowsThrownAway.name, wiki),
            kPartitions * kTooOld);
  EXPECT_EQ(bench::SumSamples(supervisor, metrics::kSupervisorWorkers.name, {{"state", "alive"}}),
            1);
  // The supervisor committed what the worker published (1 replica).
  EXPECT_EQ(bench::SumSamples(worker, metrics::kTaskSegmentsPublished.name, wiki),
            bench::SumSamples(supervisor, metrics::kSupervisorSegmentsPublished.name, wiki));
  EXPECT_GT(bench::SumSamples(supervisor, metrics::kSupervisorPublishes.name,
                              {{"datasource", "wiki"}, {"code", "OK"}}),
            1);
  EXPECT_GT(bench::SumSamples(worker, metrics::kTaskHandoffTimeouts.name,
                              {{"datasource", "wiki_loader"}}),
            0);
  EXPECT_EQ(bench::SumSamples(worker, metrics::kTaskHandoffTimeouts.name, wiki), 0);

  // Every metric of the catalog has a non-zero value in one of the scrapes
  // (for histograms: observations). Except the pauseless checkpoint
  // fallbacks: a round falls back only when a replica has read past the
  // proposed end, which this small ingestion does not arrange (whether it
  // happens here depends on timing); task_e2e_test forces one and waits for
  // this counter. And the fenced transactions: only a deposed leader has
  // them (one supervisor here; supervisor/leader_elector_test and
  // tests/fault:failover_faults_test depose one).
  for (const metrics::MetricDef* def : metrics::kCatalog) {
    if (def == &metrics::kSupervisorCheckpointFallbacks) continue;
    if (def == &metrics::kSupervisorFencedTransactions) continue;
    // Replicas here are byte-identical, as they should be; publisher_test
    // makes one diverge.
    if (def == &metrics::kSupervisorReplicaDivergences) continue;
    // Only an operator's HandoffTaskGroups counts early handoffs;
    // stream_supervisor_test asks for one and checks this counter.
    if (def == &metrics::kSupervisorEarlyHandoffs) continue;
    // A checkpoint moves back only when a pauseless end outran a stream
    // that then stopped; tests/task_e2e_test arranges that and checks it.
    if (def == &metrics::kSupervisorCheckpointsMovedBack) continue;
    // Only a datasource with autoScalerConfig scales; stream_supervisor_test
    // scales one out and in and checks this counter.
    if (def == &metrics::kSupervisorScalingActions) continue;
    // A time lag above 0 needs a task behind records produced over time;
    // here each batch is read at once (0 is its value, present but zero).
    // stream_status_test computes positive ones.
    if (def == &metrics::kSupervisorPartitionTimeLag) continue;
    // Only a datasource with icebergTable stages snapshots, and only after
    // the safety age does the sweeper remove files; supervisor/
    // iceberg_commit_test counts the stagings; tests/iceberg's cluster tests
    // see the sweeper's removals in the status, counted beside this metric
    // (IcebergUpkeep::SweepOrphans).
    if (def == &metrics::kSupervisorIcebergStageSeconds) continue;
    if (def == &metrics::kSupervisorIcebergOrphansRemoved) continue;
    // Only a datasource with a compaction config (or an operator's
    // CompactDataSource) compacts; supervisor/compaction:compactor_test
    // checks these after a compaction, tests/fault:compaction_faults_test
    // runs compactions in the real binaries.
    if (def == &metrics::kSupervisorCompactions) continue;
    if (def == &metrics::kSupervisorCompactionSeconds) continue;
    if (def == &metrics::kSupervisorCompactedRows) continue;
    // The binaries register the process's own gauges at start-up (not this
    // in-process cluster); metrics_auth_process_test scrapes them from both.
    if (def == &metrics::kProcessResidentMemory) continue;
    // Only a login Kafka refuses counts; tests/real_kafka:security_test
    // refuses some and checks both counters.
    if (def == &metrics::kTaskKafkaAuthFailures) continue;
    if (def == &metrics::kSupervisorKafkaAuthFailures) continue;
    const std::string name = def->type == metrics::MetricType::kHistogram
                                 ? absl::StrCat(def->name, "_count")
                                 : std::string(def->name);
    double total = 0;
    for (const auto* samples : {&reading_worker, &reading_supervisor, &worker, &supervisor}) {
      total += bench::SumSamples(*samples, name);
    }
    EXPECT_GT(total, 0) << name << " stayed at zero";
  }
}

}  // namespace
}  // namespace sluice
