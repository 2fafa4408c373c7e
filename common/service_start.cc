#include "common/service_start.h"

#include <glog/logging.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> StartServiceBasics(
    absl::string_view component, const std::string& fault_points,
    const std::string& metrics_listen, metrics::Registry* registry) {
  if (absl::Status faults = ConfigureFaultPoints(fault_points); !faults.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--fault_points: ", faults.message()));
  }
  absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> http =
      metrics::MetricsHttpServer::StartIfListening(metrics_listen, registry);
  if (!http.ok()) {
    return absl::Status(http.status().code(),
                        absl::StrCat("cannot serve metrics: ", http.status().message()));
  }
  if (*http != nullptr) LOG(INFO) << component << " metrics on port " << (*http)->port();
  return http;
}

}  // namespace sluice
