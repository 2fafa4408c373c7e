#include "common/metrics/registry.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace sluice {
namespace metrics {

const char* MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// ---- values ----

namespace {

void AtomicAdd(std::atomic<double>& target, double delta) {
  double old = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(old, old + delta, std::memory_order_relaxed)) {
  }
}

}  // namespace

void Gauge::Add(double delta) { AtomicAdd(value_, delta); }

Histogram::Histogram(absl::Span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()), counts_(new std::atomic<uint64_t>[bounds.size() + 1]) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    CHECK(std::isfinite(bounds_[i])) << "histogram bucket bounds must be finite";
    CHECK(i == 0 || bounds_[i - 1] < bounds_[i])
        << "histogram bucket bounds must be strictly increasing";
  }
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double value) {
  // First bound >= value; NaN lands in the +Inf bucket.
  size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.cumulative.reserve(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.count = running;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

// ---- registry ----

struct Registry::Series {
  Labels labels;  // sorted by name
  std::unique_ptr<Counter> counter;
  std::unique_ptr<Gauge> gauge;
  std::unique_ptr<Histogram> histogram;
};

struct Registry::Family {
  std::string name;
  std::string help;
  MetricType type;
  std::vector<double> buckets;
  // Keyed by the formatted label set, so series print in a stable order.
  std::map<std::string, std::unique_ptr<Series>> series;
};

struct Registry::CallbackFamily {
  std::string name;
  std::string help;
  // Held while `fn` runs; the handle's destructor takes it to wait for a
  // running callback and then clears `fn`.
  absl::Mutex mu;
  std::function<std::vector<GaugeSample>()> fn ABSL_GUARDED_BY(mu);
};

namespace {

Labels SortedLabels(absl::string_view metric, const Labels& labels) {
  Labels sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    CHECK(IsValidLabelName(sorted[i].first))
        << "metric " << metric << ": invalid label name \"" << sorted[i].first << "\"";
    CHECK(i == 0 || sorted[i - 1].first != sorted[i].first)
        << "metric " << metric << ": label \"" << sorted[i].first << "\" given twice";
  }
  return sorted;
}

void CheckDefLabels(const MetricDef& def, const Labels& labels) {
  std::vector<std::string> want = absl::StrSplit(def.label_names, ',', absl::SkipEmpty());
  std::vector<std::string> got;
  for (const auto& label : labels) got.push_back(label.first);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  CHECK(want == got) << "metric " << def.name << " takes labels {" << absl::StrJoin(want, ",")
                     << "}, got {" << absl::StrJoin(got, ",") << "}";
}

void CheckDefType(const MetricDef& def, MetricType type) {
  CHECK(def.type == type) << "metric " << def.name << " is a " << MetricTypeName(def.type)
                          << ", not a " << MetricTypeName(type);
}

void AppendHeader(std::string* out, const std::string& name, const std::string& help,
                  MetricType type) {
  absl::StrAppend(out, "# HELP ", name, " ", EscapeHelp(help), "\n# TYPE ", name, " ",
                  MetricTypeName(type), "\n");
}

}  // namespace

Registry::Registry() = default;
Registry::~Registry() = default;

Registry::Series* Registry::GetSeries(absl::string_view name, absl::string_view help,
                                      MetricType type, absl::Span<const double> buckets,
                                      const Labels& labels) {
  CHECK(IsValidMetricName(name)) << "invalid metric name \"" << name << "\"";
  Labels sorted = SortedLabels(name, labels);
  if (type == MetricType::kHistogram) {
    for (const auto& label : sorted) {
      CHECK(label.first != "le") << "histogram " << name << ": label \"le\" is reserved";
    }
  }
  std::string key = FormatLabels(sorted);

  absl::MutexLock lock(&mu_);
  const std::string name_str(name);
  CHECK(callbacks_.count(name_str) == 0)
      << "metric " << name << " is already registered as a gauge callback";
  std::unique_ptr<Family>& family = families_[name_str];
  if (family == nullptr) {
    family = std::make_unique<Family>();
    family->name = name_str;
    family->help = std::string(help);
    family->type = type;
    family->buckets.assign(buckets.begin(), buckets.end());
  }
  CHECK(family->type == type) << "metric " << name << " is a " << MetricTypeName(family->type)
                              << ", not a " << MetricTypeName(type);
  if (type == MetricType::kHistogram) {
    CHECK(
        std::equal(family->buckets.begin(), family->buckets.end(), buckets.begin(), buckets.end()))
        << "histogram " << name << " was registered with other buckets";
  }
  std::unique_ptr<Series>& series = family->series[key];
  if (series == nullptr) {
    series = std::make_unique<Series>();
    series->labels = std::move(sorted);
    switch (type) {
      case MetricType::kCounter:
        series->counter = std::make_unique<Counter>();
        break;
      case MetricType::kGauge:
        series->gauge = std::make_unique<Gauge>();
        break;
      case MetricType::kHistogram:
        series->histogram = std::make_unique<Histogram>(buckets);
        break;
    }
  }
  return series.get();
}

Counter* Registry::GetCounter(absl::string_view name, absl::string_view help,
                              const Labels& labels) {
  return GetSeries(name, help, MetricType::kCounter, {}, labels)->counter.get();
}

Gauge* Registry::GetGauge(absl::string_view name, absl::string_view help, const Labels& labels) {
  return GetSeries(name, help, MetricType::kGauge, {}, labels)->gauge.get();
}

Histogram* Registry::GetHistogram(absl::string_view name, absl::string_view help,
                                  absl::Span<const double> buckets, const Labels& labels) {
  return GetSeries(name, help, MetricType::kHistogram, buckets, labels)->histogram.get();
}

Counter* Registry::GetCounter(const MetricDef& def, const Labels& labels) {
  CheckDefType(def, MetricType::kCounter);
  CheckDefLabels(def, labels);
  return GetCounter(def.name, def.help, labels);
}

Gauge* Registry::GetGauge(const MetricDef& def, const Labels& labels) {
  CheckDefType(def, MetricType::kGauge);
  CheckDefLabels(def, labels);
  return GetGauge(def.name, def.help, labels);
}

Histogram* Registry::GetHistogram(const MetricDef& def, const Labels& labels) {
  CheckDefType(def, MetricType::kHistogram);
  CheckDefLabels(def, labels);
  return GetHistogram(def.name, def.help, def.buckets, labels);
}

std::unique_ptr<Registry::CallbackHandle> Registry::AddGaugeCallback(
    absl::string_view name, absl::string_view help, std::function<std::vector<GaugeSample>()> fn) {
  CHECK(IsValidMetricName(name)) << "invalid metric name \"" << name << "\"";
  CHECK(fn != nullptr) << "gauge callback " << name << " has no function";
  auto family = std::make_shared<CallbackFamily>();
  family->name = std::string(name);
  family->help = std::string(help);
  {
    absl::MutexLock fn_lock(&family->mu);
    family->fn = std::move(fn);
  }
  absl::MutexLock lock(&mu_);
  CHECK(families_.count(family->name) == 0) << "metric " << name << " is already registered as a "
                                            << MetricTypeName(families_.at(family->name)->type);
  CHECK(callbacks_.emplace(family->name, family).second)
      << "metric " << name << " already has a gauge callback";
  return std::unique_ptr<CallbackHandle>(new CallbackHandle(this, family->name, family));
}

std::unique_ptr<Registry::CallbackHandle> Registry::AddGaugeCallback(
    const MetricDef& def, std::function<std::vector<GaugeSample>()> fn) {
  CheckDefType(def, MetricType::kGauge);
  // The samples' label names are checked against `def` at every scrape.
  auto checked = [def, fn = std::move(fn)]() {
    std::vector<GaugeSample> samples = fn();
    for (const GaugeSample& sample : samples) CheckDefLabels(def, sample.labels);
    return samples;
  };
  return AddGaugeCallback(def.name, def.help, std::move(checked));
}

void Registry::RemoveCallback(const std::string& name) {
  absl::MutexLock lock(&mu_);
  callbacks_.erase(name);
}

Registry::CallbackHandle::CallbackHandle(Registry* registry, std::string name,
                                         std::shared_ptr<CallbackFamily> family)
    : registry_(registry), name_(std::move(name)), family_(std::move(family)) {}

Registry::CallbackHandle::~CallbackHandle() {
  registry_->RemoveCallback(name_);
  // A scrape that already picked the family up may still be running `fn`.
  absl::MutexLock lock(&family_->mu);
  family_->fn = nullptr;
}

std::string Registry::Render() const {
  // Rendered families by name; static ones under mu_, callbacks after it.
  std::map<std::string, std::string> texts;
  std::vector<std::shared_ptr<CallbackFamily>> callbacks;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, family] : families_) {
      std::string& out = texts[name];
      AppendHeader(&out, name, family->help, family->type);
      for (const auto& [key, series] : family->series) {
        switch (family->type) {
          case MetricType::kCounter:
            absl::StrAppend(&out, name, key, " ", series->counter->Value(), "\n");
            break;
          case MetricType::kGauge:
            absl::StrAppend(&out, name, key, " ", FormatDouble(series->gauge->Value()), "\n");
            break;
          case MetricType::kHistogram: {
            Histogram::Snapshot snap = series->histogram->Read();
            const std::vector<double>& bounds = series->histogram->bounds();
            for (size_t i = 0; i <= bounds.size(); ++i) {
              std::pair<std::string, std::string> le(
                  "le", i < bounds.size() ? FormatDouble(bounds[i]) : "+Inf");
              absl::StrAppend(&out, name, "_bucket", FormatLabels(series->labels, &le), " ",
                              snap.cumulative[i], "\n");
            }
            absl::StrAppend(&out, name, "_sum", key, " ", FormatDouble(snap.sum), "\n");
            absl::StrAppend(&out, name, "_count", key, " ", snap.count, "\n");
            break;
          }
        }
      }
    }
    for (const auto& entry : callbacks_) callbacks.push_back(entry.second);
  }
  for (const auto& family : callbacks) {
    std::vector<GaugeSample> samples;
    {
      absl::MutexLock lock(&family->mu);
      if (family->fn == nullptr) continue;  // unregistered meanwhile
      samples = family->fn();
    }
    std::map<std::string, double> rows;  // sorted, last duplicate wins
    for (GaugeSample& sample : samples) {
      rows[FormatLabels(SortedLabels(family->name, sample.labels))] = sample.value;
    }
    std::string& out = texts[family->name];
    AppendHeader(&out, family->name, family->help, MetricType::kGauge);
    for (const auto& [key, value] : rows) {
      absl::StrAppend(&out, family->name, key, " ", FormatDouble(value), "\n");
    }
  }
  std::string all;
  for (const auto& entry : texts) all += entry.second;
  return all;
}

}  // namespace metrics
}  // namespace sluice
