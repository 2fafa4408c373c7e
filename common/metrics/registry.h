// A small Prometheus metrics registry: counters, gauges, histograms with fixed
// buckets, labelled series, gauges computed at scrape time, and rendering in
// the text exposition format 0.0.4 (served by MetricsHttpServer, see
// http_server.h).
//
// Usage (look a series up once, keep the pointer, update it on the hot path):
//
//   metrics::Registry registry;                        // one per process
//   metrics::Counter* rows = registry.GetCounter(
//       "sluice_task_rows_processed_total", "Rows ingested.", {{"datasource", ds}});
//   rows->Increment();                                  // one relaxed atomic add
//   metrics::Histogram* persist = registry.GetHistogram(
//       "sluice_task_persist_seconds", "Time to persist.",
//       metrics::kLatencySecondsBuckets, {{"datasource", ds}});
//   persist->ObserveDuration(absl::Now() - start);
//
// The names the services export are listed once in catalog.h (and in
// docs/operations.md); pass a MetricDef from there instead of name and help:
//   registry.GetCounter(metrics::kTaskRowsProcessed, {{"datasource", ds}}).
//
// Series live as long as the registry: pointers returned by Get* stay valid
// until it is destroyed. Label values should come from small sets
// (datasource, partition, state), never from ids that grow without bound;
// for sets that shrink (a datasource goes away) use AddGaugeCallback, whose
// series exist only while the callback returns them.
//
// Misuse that only a programmer can cause (an invalid metric or label name,
// one name used with two types, catalog labels that differ from the
// definition) fails a CHECK with a message that names the metric.
//
// Thread safety: everything may be called from any thread. Get* take a mutex;
// Counter/Gauge/Histogram updates are lock-free atomics.
#ifndef SLUICE_COMMON_METRICS_REGISTRY_H_
#define SLUICE_COMMON_METRICS_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/metrics/text_format.h"

namespace sluice {
namespace metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// "counter", "gauge", "histogram": the # TYPE word.
const char* MetricTypeName(MetricType type);

// Upper bounds (seconds) for latencies from a millisecond to ten minutes.
inline constexpr double kLatencySecondsBuckets[] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};

// Upper bounds (seconds) for a sequence's publish: 100 ms steps up to a
// second, where a 500k-row sequence lands and its 500 ms target lies (with
// the latency buckets, p99 was interpolated across (0.25 s, 0.5 s] and
// (0.5 s, 1 s]); then as the latency buckets.
inline constexpr double kPublishSecondsBuckets[] = {
    0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.5, 2.5, 5, 10, 30, 60, 120, 300, 600};

// A metric the project exports, declared once (see catalog.h).
struct MetricDef {
  const char* name;
  MetricType type;
  const char* help;
  // Label names every series of this metric carries, comma separated, in any
  // order ("datasource,partition"); "" for none.
  const char* label_names;
  // Histograms only: bucket upper bounds, strictly increasing.
  absl::Span<const double> buckets = {};
};

// A monotonically increasing count. Neither copyable nor movable.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void Increment(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A value that goes up and down. Neither copyable nor movable.
class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double delta);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted into fixed buckets, plus their sum and count.
// Neither copyable nor movable.
class Histogram {
 public:
  // `bounds`: finite upper bounds, strictly increasing (CHECKed); the +Inf
  // bucket is implicit.
  explicit Histogram(absl::Span<const double> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double value);
  void ObserveDuration(absl::Duration d) { Observe(absl::ToDoubleSeconds(d)); }

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (== count)
    double sum = 0;
    uint64_t count = 0;
  };
  // Under concurrent Observe calls the parts may be off by the observations
  // in flight; each part on its own is exact.
  Snapshot Read() const;

  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  // counts_[i]: observations <= bounds_[i] and > bounds_[i-1]; the last entry
  // counts those above every bound.
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// One labelled value returned by a gauge callback.
struct GaugeSample {
  Labels labels;
  double value = 0;
};

class Registry {
 public:
  Registry();
  ~Registry();  // every CallbackHandle must be gone by now
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The series of `name` with `labels` (order does not matter), created on
  // first use. `help` is taken from the first call.
  Counter* GetCounter(absl::string_view name, absl::string_view help, const Labels& labels = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  Gauge* GetGauge(absl::string_view name, absl::string_view help, const Labels& labels = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  // Every series of one histogram must use the same buckets.
  Histogram* GetHistogram(absl::string_view name, absl::string_view help,
                          absl::Span<const double> buckets, const Labels& labels = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // The same for a catalog definition; `labels` must carry exactly the
  // definition's label names.
  Counter* GetCounter(const MetricDef& def, const Labels& labels = {});
  Gauge* GetGauge(const MetricDef& def, const Labels& labels = {});
  Histogram* GetHistogram(const MetricDef& def, const Labels& labels = {});

  // Keeps a gauge family whose series are whatever `fn` returns at each
  // scrape (e.g. per-partition lag, task counts by state). `fn` runs on the
  // scraping thread without registry locks held, so it may use the registry;
  // it must be thread-safe. The family disappears when the returned handle is
  // destroyed; the destructor waits for a running `fn` to return.
  class CallbackHandle;
  std::unique_ptr<CallbackHandle> AddGaugeCallback(absl::string_view name, absl::string_view help,
                                                   std::function<std::vector<GaugeSample>()> fn)
      ABSL_LOCKS_EXCLUDED(mu_);
  std::unique_ptr<CallbackHandle> AddGaugeCallback(const MetricDef& def,
                                                   std::function<std::vector<GaugeSample>()> fn);

  // Every family, sorted by name, in the text format 0.0.4.
  std::string Render() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Series;
  struct Family;
  struct CallbackFamily;

  Series* GetSeries(absl::string_view name, absl::string_view help, MetricType type,
                    absl::Span<const double> buckets, const Labels& labels)
      ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveCallback(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);

  // Guards the family maps and the series maps inside them. Metric values
  // are atomics and need no lock.
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Family>> families_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<CallbackFamily>> callbacks_ ABSL_GUARDED_BY(mu_);
};

// Unregisters its gauge callback when destroyed. Must not outlive the
// registry.
class Registry::CallbackHandle {
 public:
  ~CallbackHandle();
  CallbackHandle(const CallbackHandle&) = delete;
  CallbackHandle& operator=(const CallbackHandle&) = delete;

 private:
  friend class Registry;
  CallbackHandle(Registry* registry, std::string name, std::shared_ptr<CallbackFamily> family);
  Registry* registry_;
  std::string name_;
  std::shared_ptr<CallbackFamily> family_;
};

}  // namespace metrics
}  // namespace sluice

#endif  // SLUICE_COMMON_METRICS_REGISTRY_H_
