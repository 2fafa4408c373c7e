// The dashboard and the alert rules of k8s/monitoring name only metrics the
// binaries export (common/metrics/catalog.h), and the dashboard shows what an
// operator of streaming ingestion watches.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/metrics/catalog.h"
#include "tests/monitoring/monitoring_files.h"

namespace sluice::monitoring {
namespace {

// Exported series names: counters and gauges as declared, histograms as
// their _bucket, _sum and _count series.
std::map<std::string, const metrics::MetricDef*> ExportedSeries() {
  std::map<std::string, const metrics::MetricDef*> series;
  for (const metrics::MetricDef* def : metrics::kCatalog) {
    if (def->type == metrics::MetricType::kHistogram) {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        series[absl::StrCat(def->name, suffix)] = def;
      }
    } else {
      series[std::string(def->name)] = def;
    }
  }
  return series;
}

TEST(DashboardMetricsTest, EveryDashboardQueryNamesExportedSeries) {
  auto queries = ReadDashboardQueries(MonitoringFile("grafana-dashboard.json"));
  ASSERT_TRUE(queries.ok()) << queries.status();
  const auto exported = ExportedSeries();
  for (const DashboardQuery& query : *queries) {
    const std::set<std::string> names = MetricNamesIn(query.expr);
    EXPECT_FALSE(names.empty()) << query.panel << ": " << query.expr;
    for (const std::string& name : names) {
      EXPECT_TRUE(exported.count(name) > 0)
          << query.panel << ": " << name << " is not a series the binaries export";
    }
  }
}

TEST(DashboardMetricsTest, EveryRuleNamesExportedSeries) {
  std::ifstream in(MonitoringFile("sluice-alerts.rules.yml"));
  ASSERT_TRUE(in) << MonitoringFile("sluice-alerts.rules.yml");
  std::stringstream text;
  text << in.rdbuf();
  const std::set<std::string> names = MetricNamesIn(text.str());
  EXPECT_GE(names.size(), 10u);
  const auto exported = ExportedSeries();
  for (const std::string& name : names) {
    EXPECT_TRUE(exported.count(name) > 0) << name << " is not a series the binaries export";
  }
}

TEST(DashboardMetricsTest, TheCheckCatchesAMisspelledMetric) {
  const auto exported = ExportedSeries();
  for (const std::string& name : MetricNamesIn(
           "sum(rate(sluice_task_rows_procesed_total[5m])) / $sluice_datasource_x")) {
    EXPECT_FALSE(exported.count(name) > 0) << name;
  }
  EXPECT_EQ(MetricNamesIn("histogram_quantile(0.9, rate(sluice_task_publish_seconds_bucket[1m]))"),
            (std::set<std::string>{"sluice_task_publish_seconds_bucket"}));
}

// What the dashboard must show, by the metric that carries it.
TEST(DashboardMetricsTest, CoversWhatOperatorsWatch) {
  auto queries = ReadDashboardQueries(MonitoringFile("grafana-dashboard.json"));
  ASSERT_TRUE(queries.ok()) << queries.status();
  std::set<std::string> used;
  for (const DashboardQuery& query : *queries) {
    for (const std::string& name : MetricNamesIn(query.expr)) {
      used.insert(std::string(absl::StripSuffix(
          absl::StripSuffix(absl::StripSuffix(name, "_bucket"), "_count"), "_sum")));
    }
  }
  const std::map<std::string, const metrics::MetricDef*> wanted = {
      {"ingest rate", &metrics::kTaskRowsProcessed},
      {"lag in records", &metrics::kSupervisorPartitionLag},
      {"lag in time", &metrics::kSupervisorPartitionTimeLag},
      {"checkpoint round latency", &metrics::kSupervisorCheckpointSeconds},
      {"publish latency", &metrics::kTaskPublishSeconds},
      {"publish failures", &metrics::kSupervisorPublishes},
      {"segments handed off", &metrics::kSupervisorHandoffSeconds},
      {"handoff timeouts", &metrics::kTaskHandoffTimeouts},
      {"parse errors", &metrics::kTaskRowsUnparseable},
      {"worker memory", &metrics::kProcessResidentMemory},
      {"datasource health", &metrics::kSupervisorDatasourceHealthy},
      {"workers lost", &metrics::kSupervisorWorkers},
  };
  for (const auto& [what, def] : wanted) {
    EXPECT_TRUE(used.count(std::string(def->name)) > 0) << what << " (" << def->name << ")";
  }
  auto titles = ReadDashboardPanelTitles(MonitoringFile("grafana-dashboard.json"));
  ASSERT_TRUE(titles.ok()) << titles.status();
  std::set<std::string> unique(titles->begin(), titles->end());
  EXPECT_EQ(unique.size(), titles->size()) << "two panels share a title";
}

TEST(DashboardMetricsTest, TheRulesHaveTheAlertsOperatorsPageOn) {
  auto alerts = ReadAlertNames(MonitoringFile("sluice-alerts.rules.yml"));
  ASSERT_TRUE(alerts.ok()) << alerts.status();
  const std::set<std::string> have(alerts->begin(), alerts->end());
  for (const char* alert : {"SluiceLagGrowing", "SluicePublishesFailing",
                            "SluiceDatasourceUnhealthy", "SluiceHandoffTimedOut",
                            "SluiceWorkerLost", "SluiceReplicaDivergence"}) {
    EXPECT_TRUE(have.count(alert) > 0) << alert;
  }
  EXPECT_EQ(have.size(), alerts->size()) << "an alert name is used twice";
}

}  // namespace
}  // namespace sluice::monitoring
