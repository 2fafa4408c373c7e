// A real Prometheus (Debian's prometheus package) scrapes a real supervisor
// and two task workers (process cluster on 127.0.0.1, authentication on: a
// reader's bearer token) with k8s/monitoring's alerting rules loaded, while
// records are ingested. Then:
// - every query of the Grafana dashboard runs (Prometheus accepts it) and
//   those of the panels that show a healthy ingestion return series;
// - every rule evaluates without error, and none is pending or firing;
// - a worker killed with kill -9 turns SluiceWorkerLost pending.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/metrics/http_get.h"
#include "tests/monitoring/monitoring_files.h"
#include "tests/testing/subprocess.h"
#include "tools/cluster/free_ports.h"
#include "tools/cluster/process_cluster.h"
#include "tools/cluster/wiki_datasource.h"
#include "tools/produce/wiki_producer.h"

namespace sluice::monitoring {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr int kRecords = 20000;

std::string UrlEncode(absl::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

// The "data" of a Prometheus HTTP API answer; an error names the path and
// Prometheus' own error text.
absl::StatusOr<Value> PrometheusData(int port, const std::string& path) {
  absl::StatusOr<metrics::HttpGetResponse> response = metrics::HttpGet(port, path);
  if (!response.ok()) return response.status();
  Struct answer;
  if (!google::protobuf::util::JsonStringToMessage(response->body, &answer).ok()) {
    return absl::InternalError(absl::StrCat(path, ": not JSON: ", response->body.substr(0, 300)));
  }
  if (response->status != 200 || JsonString(answer, "status") != "success") {
    return absl::InvalidArgumentError(absl::StrCat(path, ": HTTP ", response->status, " ",
                                                   JsonString(answer, "errorType"), ": ",
                                                   JsonString(answer, "error")));
  }
  const Value* data = JsonField(answer, "data");
  if (data == nullptr) return absl::InternalError(absl::StrCat(path, ": no data"));
  return *data;
}

// The number of series an instant query returns.
absl::StatusOr<int> SeriesCount(int port, const std::string& promql) {
  absl::StatusOr<Value> data = PrometheusData(port, "/api/v1/query?query=" + UrlEncode(promql));
  if (!data.ok()) return data.status();
  const Value* result = JsonField(data->struct_value(), "result");
  if (result == nullptr || !result->has_list_value()) return 0;
  return result->list_value().values_size();
}

// Alerts pending or firing: name -> state.
absl::StatusOr<std::map<std::string, std::string>> ActiveAlerts(int port) {
  absl::StatusOr<Value> data = PrometheusData(port, "/api/v1/alerts");
  if (!data.ok()) return data.status();
  std::map<std::string, std::string> alerts;
  const Value* list = JsonField(data->struct_value(), "alerts");
  if (list == nullptr || !list->has_list_value()) return alerts;
  for (const Value& alert : list->list_value().values()) {
    const Value* labels = JsonField(alert.struct_value(), "labels");
    if (labels == nullptr) continue;
    alerts[JsonString(labels->struct_value(), "alertname")] =
        JsonString(alert.struct_value(), "state");
  }
  return alerts;
}

// Grafana's label_values(METRIC, LABEL) is not PromQL: the same series set
// is `group by (LABEL) (METRIC)`.
std::string AsPromQL(const std::string& expr) {
  if (!absl::StartsWith(expr, "label_values(")) return Instantiate(expr);
  const std::string inner = expr.substr(13, expr.size() - 14);
  const size_t comma = inner.rfind(',');
  return absl::StrCat("group by (", inner.substr(comma + 1), ") (", inner.substr(0, comma), ")");
}

// Panels that only have series once something went wrong or a feature this
// cluster does not use ran: failures (publishes, Kafka logins), compaction,
// Iceberg staging, autoscaling (rate() and increase() of a counter that
// never moved from its first sample still return a 0 series; these counters
// are created at their first event).
const std::set<std::string>& PanelsThatMayBeEmpty() {
  static const auto* panels = new std::set<std::string>{
      "Publish failures", "Compactions", "Iceberg staging", "Autoscaling", "gRPC errors",
      "Kafka authentication failures"};
  return *panels;
}

class PrometheusLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto prometheus = testing::FindInPath("prometheus");
    ASSERT_TRUE(prometheus.ok())
        << "prometheus not found: run scripts/install_deps.sh --tests (Debian package prometheus)";
    prometheus_binary_ = *prometheus;
    auto root = testing::MakeTempDir("prometheus_live");
    ASSERT_TRUE(root.ok()) << root.status();
    root_ = *root;
    auto ports = cluster::PickStablePorts(4);
    ASSERT_TRUE(ports.ok()) << ports.status();
    metrics_ports_ = {(*ports)[0], (*ports)[1], (*ports)[2]};
    prometheus_port_ = (*ports)[3];

    cluster::ProcessClusterOptions options;
    options.root_dir = root_ + "/cluster";
    options.workers = 2;
    options.topics = {"wiki:2"};
    options.extra_flags[cluster::kSupervisor] = {
        absl::StrCat("--metrics_listen=127.0.0.1:", metrics_ports_[0])};
    for (int i = 0; i < 2; ++i) {
      options.extra_flags[cluster::WorkerName(i)] = {
          absl::StrCat("--metrics_listen=127.0.0.1:", metrics_ports_[i + 1])};
    }
    auto cluster = cluster::ProcessCluster::Create(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->Start().ok());
    absl::Status healthy = cluster_->WaitHealthy(absl::Seconds(60));
    ASSERT_TRUE(healthy.ok()) << healthy;
  }

  void TearDown() override {
    if (prometheus_ != nullptr) (void)prometheus_->Stop(absl::Seconds(10));
    if (cluster_ != nullptr) (void)cluster_->StopAll();
  }

  void StartPrometheus() {
    const std::string config = root_ + "/prometheus.yml";
    std::ofstream out(config);
    out << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        << "rule_files:\n  - " << MonitoringFile("sluice-alerts.rules.yml") << "\n"
        << "scrape_configs:\n  - job_name: sluice\n"
        << "    authorization:\n      type: Bearer\n      credentials_file: "
        << cluster_->token_file("reader") << "\n"
        << "    static_configs:\n      - targets: ["
        << absl::StrJoin(metrics_ports_, ", ",
                         [](std::string* o, int p) { absl::StrAppend(o, "'127.0.0.1:", p, "'"); })
        << "]\n";
    out.close();
    testing::SubprocessOptions options;
    options.binary = prometheus_binary_;
    options.args = {absl::StrCat("--config.file=", config),
                    absl::StrCat("--storage.tsdb.path=", root_, "/tsdb"),
                    absl::StrCat("--web.listen-address=127.0.0.1:", prometheus_port_),
                    "--log.level=warn"};
    options.name = "prometheus";
    auto started = testing::Subprocess::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    prometheus_ = *std::move(started);
    ASSERT_TRUE(testing::WaitForPort(prometheus_port_, absl::Seconds(30), prometheus_.get()).ok())
        << prometheus_->StderrTail();
  }

  // Waits until Prometheus scrapes every target successfully.
  void WaitForTargetsUp() {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    std::string last;
    while (absl::Now() < deadline) {
      absl::StatusOr<int> up = SeriesCount(prometheus_port_, "up{job=\"sluice\"} == 1");
      if (up.ok() && *up == 3) return;
      last = up.ok() ? absl::StrCat(*up, " of 3 up") : up.status().ToString();
      absl::SleepFor(absl::Milliseconds(500));
    }
    FAIL() << "targets not up: " << last << "\n" << prometheus_->StderrTail();
  }

  std::string root_;
  std::string prometheus_binary_;
  std::vector<int> metrics_ports_;
  int prometheus_port_ = 0;
  std::unique_ptr<cluster::ProcessCluster> cluster_;
  std::unique_ptr<testing::Subprocess> prometheus_;
};

TEST_F(PrometheusLiveTest, DashboardQueriesAndRulesOnALiveCluster) {
  ASSERT_NO_FATAL_FAILURE(StartPrometheus());
  ASSERT_NO_FATAL_FAILURE(WaitForTargetsUp());

  cluster::WikiSpecOptions spec;
  spec.bootstrap_servers = cluster_->bootstrap_servers();
  spec.replicas = 2;
  spec.max_rows_per_segment = 2500;  // several checkpoints, publishes and handoffs
  spec.task_duration = "PT10S";       // the last rows publish at roll-over
  ASSERT_TRUE(cluster::SubmitSpec(*cluster_->SupervisorStub(), cluster::WikiSpec(spec)).ok());
  produce::ProduceOptions produce;
  produce.properties = {{"bootstrap.servers", cluster_->bootstrap_servers()}};
  produce.topic = "wiki";
  produce.records = kRecords;
  produce.rate = 2000;
  produce.rows.malformed_fraction = 0.001;
  auto produced = produce::ProduceWikiRecords(produce);
  ASSERT_TRUE(produced.ok()) << produced.status();
  std::map<int32_t, int64_t> ends;
  for (const auto& [partition, count] : produced->partitions) ends[partition] = count.end_offset;
  absl::Status committed = cluster::WaitUntilCommitted(*cluster_->SupervisorStub(), "wiki", ends,
                                                       absl::Minutes(2));
  ASSERT_TRUE(committed.ok()) << committed;
  // A few scrapes after the last commit, so rate() windows hold it.
  absl::SleepFor(absl::Seconds(5));

  // Every dashboard query is valid PromQL against the real metrics, and the
  // panels of a healthy ingestion show data.
  auto queries = ReadDashboardQueries(MonitoringFile("grafana-dashboard.json"));
  ASSERT_TRUE(queries.ok()) << queries.status();
  std::map<std::string, int> series_by_panel;
  for (const DashboardQuery& query : *queries) {
    const std::string promql = AsPromQL(query.expr);
    absl::StatusOr<int> series = SeriesCount(prometheus_port_, promql);
    ASSERT_TRUE(series.ok()) << query.panel << ": " << promql << ": " << series.status();
    series_by_panel[query.panel] += *series;
  }
  for (const auto& [panel, series] : series_by_panel) {
    if (PanelsThatMayBeEmpty().count(panel) > 0) continue;
    EXPECT_GT(series, 0) << "panel \"" << panel << "\" shows nothing on a live cluster";
  }
  // The numbers are the cluster's: 2 replicas read every valid record.
  absl::StatusOr<Value> processed = PrometheusData(
      prometheus_port_,
      "/api/v1/query?query=" + UrlEncode("sum(sluice_task_rows_processed_total{datasource=\"wiki\"})"));
  ASSERT_TRUE(processed.ok()) << processed.status();
  const Value& sample = JsonField(processed->struct_value(), "result")->list_value().values(0);
  const double rows =
      std::stod(JsonField(sample.struct_value(), "value")->list_value().values(1).string_value());
  EXPECT_EQ(rows, 2.0 * (kRecords - produced->malformed));
  absl::StatusOr<int> workers_alive =
      SeriesCount(prometheus_port_, "sluice_supervisor_workers{state=\"alive\"} == 2");
  ASSERT_TRUE(workers_alive.ok());
  EXPECT_EQ(*workers_alive, 1);

  // Every rule evaluated without error.
  absl::StatusOr<Value> rules = PrometheusData(prometheus_port_, "/api/v1/rules");
  ASSERT_TRUE(rules.ok()) << rules.status();
  int evaluated = 0;
  for (const Value& group : JsonField(rules->struct_value(), "groups")->list_value().values()) {
    for (const Value& rule : JsonField(group.struct_value(), "rules")->list_value().values()) {
      EXPECT_EQ(JsonString(rule.struct_value(), "health"), "ok")
          << JsonString(rule.struct_value(), "name") << ": "
          << JsonString(rule.struct_value(), "lastError");
      ++evaluated;
    }
  }
  auto alert_names = ReadAlertNames(MonitoringFile("sluice-alerts.rules.yml"));
  ASSERT_TRUE(alert_names.ok());
  EXPECT_EQ(evaluated, static_cast<int>(alert_names->size()));

  // A healthy cluster pages no one.
  auto active = ActiveAlerts(prometheus_port_);
  ASSERT_TRUE(active.ok()) << active.status();
  EXPECT_TRUE(active->empty()) << "alert active on a healthy cluster: " << active->begin()->first;

  // kill -9 of a worker: the supervisor declares it lost, the alert goes
  // pending (it fires after its 2 minutes).
  ASSERT_TRUE(cluster_->Kill(cluster::WorkerName(1), SIGKILL).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  std::string state;
  while (absl::Now() < deadline && state.empty()) {
    auto now_active = ActiveAlerts(prometheus_port_);
    ASSERT_TRUE(now_active.ok()) << now_active.status();
    if (auto it = now_active->find("SluiceWorkerLost"); it != now_active->end()) {
      state = it->second;
    }
    absl::SleepFor(absl::Seconds(1));
  }
  EXPECT_EQ(state, "pending") << "SluiceWorkerLost did not turn pending within 90 s";
}

}  // namespace
}  // namespace sluice::monitoring
