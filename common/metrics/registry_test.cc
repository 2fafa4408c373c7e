#include "common/metrics/registry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/metrics/catalog.h"

namespace sluice {
namespace metrics {
namespace {

TEST(Registry, EmptyRendersNothing) {
  Registry registry;
  EXPECT_EQ(registry.Render(), "");
}

TEST(Registry, CounterSeriesAreSharedByNameAndLabels) {
  Registry registry;
  Counter* a = registry.GetCounter("rows_total", "Rows.", {{"datasource", "wiki"}, {"p", "1"}});
  // Same labels in another order: the same series.
  Counter* b = registry.GetCounter("rows_total", "ignored", {{"p", "1"}, {"datasource", "wiki"}});
  Counter* c = registry.GetCounter("rows_total", "Rows.", {{"datasource", "other"}, {"p", "1"}});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  a->Increment();
  b->Increment(41);
  c->Increment(7);
  EXPECT_EQ(a->Value(), 42u);
  EXPECT_EQ(registry.Render(),
            "# HELP rows_total Rows.\n"
            "# TYPE rows_total counter\n"
            "rows_total{datasource=\"other\",p=\"1\"} 7\n"
            "rows_total{datasource=\"wiki\",p=\"1\"} 42\n");
}

TEST(Registry, GaugesAndEscaping) {
  Registry registry;
  Gauge* g = registry.GetGauge("lag", "Lag with \\ and\nnewline.", {{"ds", "a\"b\\c\nd"}});
  g->Set(10);
  g->Add(-2.5);
  EXPECT_EQ(g->Value(), 7.5);
  Gauge* plain = registry.GetGauge("up", "Up.");
  plain->Set(1);
  EXPECT_EQ(registry.Render(),
            "# HELP lag Lag with \\\\ and\\nnewline.\n"
            "# TYPE lag gauge\n"
            "lag{ds=\"a\\\"b\\\\c\\nd\"} 7.5\n"
            "# HELP up Up.\n"
            "# TYPE up gauge\n"
            "up 1\n");
}

TEST(Registry, HistogramBucketsSumAndCount) {
  Registry registry;
  const double bounds[] = {0.1, 1, 10};
  Histogram* h =
      registry.GetHistogram("persist_seconds", "Persist time.", bounds, {{"datasource", "wiki"}});
  for (double v : {0.05, 0.1, 0.5, 2.0, 20.0}) h->Observe(v);
  h->ObserveDuration(absl::Milliseconds(250));
  Histogram::Snapshot snap = h->Read();
  EXPECT_EQ(snap.count, 6u);
  EXPECT_DOUBLE_EQ(snap.sum, 22.9);
  EXPECT_EQ(snap.cumulative, (std::vector<uint64_t>{2, 4, 5, 6}));
  std::string text = registry.Render();
  EXPECT_EQ(text,
            "# HELP persist_seconds Persist time.\n"
            "# TYPE persist_seconds histogram\n"
            "persist_seconds_bucket{datasource=\"wiki\",le=\"0.1\"} 2\n"
            "persist_seconds_bucket{datasource=\"wiki\",le=\"1\"} 4\n"
            "persist_seconds_bucket{datasource=\"wiki\",le=\"10\"} 5\n"
            "persist_seconds_bucket{datasource=\"wiki\",le=\"+Inf\"} 6\n"
            "persist_seconds_sum{datasource=\"wiki\"} " +
                FormatDouble(snap.sum) +
                "\n"
                "persist_seconds_count{datasource=\"wiki\"} 6\n");
}

TEST(Registry, FamiliesRenderSortedByName) {
  Registry registry;
  registry.GetCounter("zeta_total", "z")->Increment();
  registry.GetGauge("alpha", "a")->Set(2);
  auto handle = registry.AddGaugeCallback("middle", "m", [] {
    return std::vector<GaugeSample>{{{{"state", "READING"}}, 3}};
  });
  std::string text = registry.Render();
  size_t a = text.find("# HELP alpha"), m = text.find("# HELP middle"),
         z = text.find("# HELP zeta_total");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(m, std::string::npos);
  ASSERT_NE(z, std::string::npos);
  EXPECT_LT(a, m);
  EXPECT_LT(m, z);
}

TEST(Registry, GaugeCallbackSeriesComeAndGo) {
  Registry registry;
  absl::Mutex mu;
  std::vector<GaugeSample> current = {{{{"datasource", "wiki"}, {"partition", "0"}}, 5},
                                      {{{"partition", "1"}, {"datasource", "wiki"}}, 0}};
  auto handle = registry.AddGaugeCallback(kSupervisorPartitionLag, [&] {
    absl::MutexLock lock(&mu);
    return current;
  });
  EXPECT_EQ(registry.Render(),
            "# HELP sluice_supervisor_partition_lag " + std::string(kSupervisorPartitionLag.help) +
                "\n# TYPE sluice_supervisor_partition_lag gauge\n"
                "sluice_supervisor_partition_lag{datasource=\"wiki\",partition=\"0\"} 5\n"
                "sluice_supervisor_partition_lag{datasource=\"wiki\",partition=\"1\"} 0\n");
  {
    absl::MutexLock lock(&mu);
    current.pop_back();  // partition 1 went away
  }
  std::string text = registry.Render();
  EXPECT_NE(text.find("partition=\"0\"} 5"), std::string::npos);
  EXPECT_EQ(text.find("partition=\"1\""), std::string::npos);
  handle.reset();
  EXPECT_EQ(registry.Render(), "");
  // The name is free again.
  auto again = registry.AddGaugeCallback("sluice_supervisor_partition_lag", "h",
                                         [] { return std::vector<GaugeSample>{}; });
  EXPECT_EQ(registry.Render(),
            "# HELP sluice_supervisor_partition_lag h\n"
            "# TYPE sluice_supervisor_partition_lag gauge\n");
}

TEST(Registry, CallbackMayUseTheRegistry) {
  Registry registry;
  Counter* scrapes = registry.GetCounter("scrapes_total", "Scrapes.");
  auto handle = registry.AddGaugeCallback("from_callback", "h", [&] {
    scrapes->Increment();
    registry.GetCounter("made_in_callback_total", "h")->Increment();
    return std::vector<GaugeSample>{{{}, static_cast<double>(scrapes->Value())}};
  });
  registry.Render();
  std::string text = registry.Render();
  EXPECT_NE(text.find("from_callback 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("made_in_callback_total 1\n"), std::string::npos) << text;
}

TEST(Registry, CatalogDefinitions) {
  Registry registry;
  registry.GetCounter(kTaskRowsProcessed, {{"datasource", "wiki"}})->Increment(3);
  registry.GetHistogram(kTaskPersistSeconds, {{"datasource", "wiki"}})->Observe(0.2);
  std::string text = registry.Render();
  EXPECT_NE(text.find("# TYPE sluice_task_rows_processed_total counter\n"
                      "sluice_task_rows_processed_total{datasource=\"wiki\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sluice_task_persist_seconds_bucket{datasource=\"wiki\",le=\"0.25\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sluice_task_persist_seconds_bucket{datasource=\"wiki\",le=\"0.1\"} 0\n"),
            std::string::npos)
      << text;
}

TEST(Registry, CatalogIsWellFormed) {
  std::set<std::string> names;
  for (const MetricDef* def : kCatalog) {
    EXPECT_TRUE(IsValidMetricName(def->name)) << def->name;
    EXPECT_TRUE(names.insert(def->name).second) << "duplicate " << def->name;
    EXPECT_EQ(absl::string_view(def->name).substr(0, 7), "sluice_") << def->name;
    bool is_counter = absl::string_view(def->name).size() > 6 &&
                      absl::string_view(def->name).substr(strlen(def->name) - 6) == "_total";
    EXPECT_EQ(is_counter, def->type == MetricType::kCounter) << def->name;
    EXPECT_EQ(def->type == MetricType::kHistogram, !def->buckets.empty()) << def->name;
    EXPECT_NE(std::string(def->help), "") << def->name;
  }
}

TEST(Registry, ConcurrentUpdatesAreNotLost) {
  Registry registry;
  Counter* counter = registry.GetCounter("c_total", "c");
  Gauge* gauge = registry.GetGauge("g", "g");
  const double bounds[] = {1};
  Histogram* hist = registry.GetHistogram("h", "h", bounds);
  constexpr int kThreads = 4, kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        counter->Increment();
        gauge->Add(1);
        hist->Observe(i % 2 == 0 ? 0.5 : 2.0);
        if (i % 5000 == 0) registry.Render();  // scrapes race with updates
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter->Value(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(gauge->Value(), double{kThreads} * kPerThread);
  Histogram::Snapshot snap = hist->Read();
  EXPECT_EQ(snap.count, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(snap.cumulative[0], uint64_t{kThreads} * kPerThread / 2);
  EXPECT_DOUBLE_EQ(snap.sum, kThreads * (kPerThread / 2) * 2.5);
}

using RegistryDeathTest = ::testing::Test;

TEST(RegistryDeathTest, ProgrammerErrorsFailLoudly) {
  Registry registry;
  registry.GetCounter("rows_total", "r");
  EXPECT_DEATH(registry.GetGauge("rows_total", "r"), "rows_total is a counter, not a gauge");
  EXPECT_DEATH(registry.GetCounter("bad-name", "r"), "invalid metric name");
  EXPECT_DEATH(registry.GetCounter("ok_total", "r", {{"__x", "v"}}), "invalid label name");
  EXPECT_DEATH(registry.GetCounter("ok_total", "r", {{"a", "1"}, {"a", "2"}}), "given twice");
  const double bounds[] = {1, 2};
  const double other[] = {1, 3};
  const double unsorted[] = {2, 1};
  registry.GetHistogram("h", "h", bounds);
  EXPECT_DEATH(registry.GetHistogram("h", "h", other), "other buckets");
  EXPECT_DEATH(registry.GetHistogram("h2", "h", unsorted), "strictly increasing");
  EXPECT_DEATH(registry.GetHistogram("h3", "h", bounds, {{"le", "1"}}), "reserved");
  EXPECT_DEATH(registry.GetCounter(kTaskRowsProcessed, {{"ds", "wiki"}}),
               "takes labels \\{datasource\\}, got \\{ds\\}");
  EXPECT_DEATH(registry.GetGauge(kTaskRowsProcessed, {{"datasource", "wiki"}}),
               "is a counter, not a gauge");
  auto handle = registry.AddGaugeCallback(kTaskTasks, [] {
    return std::vector<GaugeSample>{{{{"datasource", "x"}}, 1}};
  });
  EXPECT_DEATH(registry.Render(), "takes labels \\{state\\}, got \\{datasource\\}");
  EXPECT_DEATH(
      registry.AddGaugeCallback("rows_total", "r", [] { return std::vector<GaugeSample>{}; }),
      "already registered as a counter");
}

}  // namespace
}  // namespace metrics
}  // namespace sluice
