// Reading back what a sluice process serves on /metrics (Prometheus text
// format 0.0.4): the samples, sums over series, and histograms with their
// quantiles. The benchmark uses it to take latencies from the services' own
// histograms instead of timing from outside.
//
//   SLUICE_ASSIGN_OR_RETURN(std::vector<PromSample> samples,
//   ParsePromText(body)); double rows = SumSamples(samples,
//   "sluice_task_rows_processed_total"); PromHistogram h =
//   MergedHistogram(samples, "sluice_supervisor_checkpoint_seconds"); double
//   p99 = h.Quantile(0.99);
#ifndef SLUICE_BENCH_E2E_PROMETHEUS_TEXT_H_
#define SLUICE_BENCH_E2E_PROMETHEUS_TEXT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace bench {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Every sample line of `text` (comments and blank lines skipped).
// INVALID_ARGUMENT names the first line that is not a sample.
absl::StatusOr<std::vector<PromSample>> ParsePromText(absl::string_view text);

// Sum of the samples named `name` whose labels include every pair of
// `labels` (0 when there is none).
double SumSamples(const std::vector<PromSample>& samples, absl::string_view name,
                  const std::map<std::string, std::string>& labels = {});

// A histogram as exported: cumulative counts per upper bound (the last bound
// is +Inf), sum and count.
struct PromHistogram {
  std::vector<double> bounds;
  std::vector<double> cumulative;
  double sum = 0;
  double count = 0;

  // The q-quantile (0 < q <= 1) the way Prometheus' histogram_quantile
  // estimates it: linear within the bucket that holds it, the lower bound of
  // the first bucket being 0; the highest finite bound if it falls in +Inf.
  // NaN when the histogram is empty.
  double Quantile(double q) const;
  // Fraction of observations <= `bound`, exact when `bound` is one of the
  // bucket bounds (else the nearest bound below). NaN when empty.
  double FractionAtOrBelow(double bound) const;
  double Mean() const { return count > 0 ? sum / count : 0; }
};

// The series of histogram `name` (its _bucket, _sum and _count samples,
// possibly scraped from several processes)
// whose labels include `labels`, added together. Series with different
// bucket bounds cannot be merged: INVALID_ARGUMENT.
absl::StatusOr<PromHistogram> MergedHistogram(
    const std::vector<PromSample>& samples, absl::string_view name,
    const std::map<std::string, std::string>& labels = {});

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_PROMETHEUS_TEXT_H_
