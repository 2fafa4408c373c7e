#include "common/metrics/process_metrics.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/metrics/catalog.h"

namespace sluice::metrics {

absl::StatusOr<int64_t> ResidentMemoryBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0;
  int64_t resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages) || resident_pages < 0) {
    return absl::InternalError("cannot read the resident set size from /proc/self/statm");
  }
  return resident_pages * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

std::unique_ptr<Registry::CallbackHandle> AddProcessGauges(Registry* registry,
                                                           absl::string_view component) {
  return registry->AddGaugeCallback(
      kProcessResidentMemory, [component = std::string(component)] {
        std::vector<GaugeSample> samples;
        if (absl::StatusOr<int64_t> rss = ResidentMemoryBytes(); rss.ok()) {
          samples.push_back({{{"component", component}}, static_cast<double>(*rss)});
        }
        return samples;
      });
}

}  // namespace sluice::metrics
