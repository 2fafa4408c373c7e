// Metrics of the process itself, computed at scrape time: its resident memory
// (sluice_process_resident_memory_bytes, common/metrics/catalog.h), read from
// /proc/self/statm. Both binaries register it once their metrics endpoint
// runs (common/service_flags.cc).
#ifndef SLUICE_COMMON_METRICS_PROCESS_METRICS_H_
#define SLUICE_COMMON_METRICS_PROCESS_METRICS_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/metrics/registry.h"

namespace sluice::metrics {

// The resident set size of this process in bytes: the second field of
// /proc/self/statm (pages) times the page size. INTERNAL when the file cannot
// be read or parsed.
absl::StatusOr<int64_t> ResidentMemoryBytes();

// Registers sluice_process_resident_memory_bytes{component=<component>} on
// `registry` (which must outlive the handle). A scrape that cannot read the
// value leaves the sample out.
std::unique_ptr<Registry::CallbackHandle> AddProcessGauges(Registry* registry,
                                                           absl::string_view component);

}  // namespace sluice::metrics

#endif  // SLUICE_COMMON_METRICS_PROCESS_METRICS_H_
