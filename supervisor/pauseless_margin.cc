#include "supervisor/pauseless_margin.h"

#include <algorithm>
#include <cmath>

namespace sluice::supervisor {

std::map<int32_t, double> ReadRates(const OffsetObservation& before,
                                    const OffsetObservation& now) {
  std::map<int32_t, double> rates;
  const double seconds = absl::ToDoubleSeconds(now.at - before.at);
  for (const auto& [p, offset] : now.offsets) {
    double& rate = rates[p];
    const auto it = before.offsets.find(p);
    if (it == before.offsets.end() || !(seconds > 0) || offset == kEndOfPartition ||
        it->second == kEndOfPartition || offset <= it->second) {
      continue;
    }
    rate = static_cast<double>(offset - it->second) / seconds;
  }
  return rates;
}

std::map<int32_t, int64_t> PauselessMargins(const std::map<int32_t, double>& rates,
                                            absl::Duration window,
                                            const PauselessMarginOptions& options) {
  const double seconds =
      absl::ToDoubleSeconds(std::max(window, options.min_window)) * options.safety_factor;
  std::map<int32_t, int64_t> margins;
  for (const auto& [p, rate] : rates) {
    const double want = std::ceil(rate * seconds);
    int64_t margin = options.max_margin;
    if (want < static_cast<double>(options.max_margin)) margin = static_cast<int64_t>(want);
    margins[p] = std::clamp(margin, options.min_margin, options.max_margin);
  }
  return margins;
}

int64_t ExpectedArrivals(double rate, absl::Duration window,
                         const PauselessMarginOptions& options) {
  const double seconds =
      absl::ToDoubleSeconds(std::max(window, options.min_window)) * options.safety_factor;
  const double expected = std::floor(rate * seconds);
  if (!(expected > 0)) return 0;
  if (expected >= static_cast<double>(options.max_margin)) return options.max_margin;
  return static_cast<int64_t>(expected);
}

OffsetMap PauselessEndOffsets(const OffsetMap& max, const std::map<int32_t, int64_t>& margins) {
  OffsetMap end = max;
  for (auto& [p, offset] : end) {
    if (offset == kEndOfPartition) continue;
    const auto it = margins.find(p);
    if (it != margins.end()) offset += it->second;
  }
  return end;
}

}  // namespace sluice::supervisor
