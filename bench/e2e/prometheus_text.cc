#include "bench/e2e/prometheus_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice {
namespace bench {
namespace {

bool ParseValue(absl::string_view text, double* value) {
  if (text == "+Inf" || text == "Inf") {
    *value = std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == "-Inf") {
    *value = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == "NaN") {
    *value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  return absl::SimpleAtod(text, value);
}

// Parses `{a="x",b="y"}` at the start of `*rest` and consumes it.
bool ParseLabels(absl::string_view* rest, std::map<std::string, std::string>* labels) {
  if (!absl::ConsumePrefix(rest, "{")) return false;
  while (true) {
    if (absl::ConsumePrefix(rest, "}")) return true;
    const size_t eq = rest->find('=');
    if (eq == absl::string_view::npos) return false;
    std::string name(rest->substr(0, eq));
    rest->remove_prefix(eq + 1);
    if (!absl::ConsumePrefix(rest, "\"")) return false;
    std::string value;
    while (true) {
      if (rest->empty()) return false;
      const char c = rest->front();
      rest->remove_prefix(1);
      if (c == '"') break;
      if (c == '\\') {
        if (rest->empty()) return false;
        const char e = rest->front();
        rest->remove_prefix(1);
        value.push_back(e == 'n' ? '\n' : e);
      } else {
        value.push_back(c);
      }
    }
    (*labels)[name] = std::move(value);
    absl::ConsumePrefix(rest, ",");
  }
}

bool Includes(const std::map<std::string, std::string>& labels,
              const std::map<std::string, std::string>& wanted) {
  for (const auto& [k, v] : wanted) {
    const auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<PromSample>> ParsePromText(absl::string_view text) {
  std::vector<PromSample> samples;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    PromSample sample;
    const size_t name_end = line.find_first_of("{ ");
    if (name_end == absl::string_view::npos || name_end == 0) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", line));
    }
    sample.name = std::string(line.substr(0, name_end));
    absl::string_view rest = line.substr(name_end);
    if (rest.front() == '{' && !ParseLabels(&rest, &sample.labels)) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": bad labels: ", line));
    }
    rest = absl::StripLeadingAsciiWhitespace(rest);
    // An optional timestamp may follow the value.
    const absl::string_view value = rest.substr(0, rest.find(' '));
    if (!ParseValue(value, &sample.value)) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": bad value: ", line));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

double SumSamples(const std::vector<PromSample>& samples, absl::string_view name,
                  const std::map<std::string, std::string>& labels) {
  double sum = 0;
  for (const PromSample& s : samples) {
    if (s.name == name && Includes(s.labels, labels)) sum += s.value;
  }
  return sum;
}

absl::StatusOr<PromHistogram> MergedHistogram(const std::vector<PromSample>& samples,
                                              absl::string_view name,
                                              const std::map<std::string, std::string>& labels) {
  const std::string bucket = absl::StrCat(name, "_bucket");
  // Per series (labels without `le`): bound -> cumulative count.
  std::map<std::map<std::string, std::string>, std::map<double, double>> series;
  PromHistogram h;
  for (const PromSample& s : samples) {
    if (s.name != bucket || !Includes(s.labels, labels)) continue;
    std::map<std::string, std::string> key = s.labels;
    const auto le = key.find("le");
    double bound = 0;
    if (le == key.end() || !ParseValue(le->second, &bound)) {
      return absl::InvalidArgumentError(absl::StrCat(bucket, " sample without a valid le"));
    }
    key.erase(le);
    series[key][bound] += s.value;  // the same series from several processes adds up
  }
  bool first = true;
  for (const auto& [key, buckets] : series) {
    std::vector<double> bounds;
    for (const auto& [bound, count] : buckets) bounds.push_back(bound);
    if (first) {
      h.bounds = bounds;
      h.cumulative.assign(bounds.size(), 0);
      first = false;
    } else if (bounds != h.bounds) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": series with different buckets cannot be merged"));
    }
    size_t i = 0;
    for (const auto& [bound, count] : buckets) h.cumulative[i++] += count;
  }
  h.sum = SumSamples(samples, absl::StrCat(name, "_sum"), labels);
  h.count = SumSamples(samples, absl::StrCat(name, "_count"), labels);
  return h;
}

double PromHistogram::Quantile(double q) const {
  if (count <= 0 || cumulative.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double total = cumulative.back();
  const double rank = q * total;
  size_t i = 0;
  while (i < cumulative.size() && cumulative[i] < rank) ++i;
  if (i >= bounds.size()) i = bounds.size() - 1;
  if (std::isinf(bounds[i])) {
    // Above every finite bound: the highest finite bound is all we know.
    return bounds.size() >= 2 ? bounds[bounds.size() - 2] : 0;
  }
  const double lower = i == 0 ? 0 : bounds[i - 1];
  const double below = i == 0 ? 0 : cumulative[i - 1];
  const double in_bucket = cumulative[i] - below;
  if (in_bucket <= 0) return bounds[i];
  return lower + (bounds[i] - lower) * (rank - below) / in_bucket;
}

double PromHistogram::FractionAtOrBelow(double bound) const {
  if (count <= 0 || cumulative.empty()) return std::numeric_limits<double>::quiet_NaN();
  double at = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (bounds[i] <= bound * (1 + 1e-9)) at = cumulative[i];
  }
  return at / cumulative.back();
}

}  // namespace bench
}  // namespace sluice
