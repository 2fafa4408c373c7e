// What each sluice binary does first once its flags are parsed, the same way
// in every main: arm the fault points given by --fault_points, and serve the
// Prometheus endpoint when --metrics_listen is set. Flags stay in main; the
// values come in as arguments.
#ifndef SLUICE_COMMON_SERVICE_START_H_
#define SLUICE_COMMON_SERVICE_START_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/metrics/http_server.h"
#include "common/metrics/registry.h"

namespace sluice {

// Arms `fault_points` (INVALID_ARGUMENT naming the bad entry) and, when
// `metrics_listen` is not empty, starts the metrics endpoint on `registry`
// (which must outlive it) and logs its port under `component` ("[worker]").
// Returns the endpoint, or null when metrics are off.
absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> StartServiceBasics(
    absl::string_view component, const std::string& fault_points,
    const std::string& metrics_listen, metrics::Registry* registry);

}  // namespace sluice

#endif  // SLUICE_COMMON_SERVICE_START_H_
