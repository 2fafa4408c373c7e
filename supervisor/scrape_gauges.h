// ScrapeGauges: the supervisor's gauges computed at scrape time (lag, time
// lag, tasks by state, datasource health and state, workers by state), from
// the status each running stream supervisor shows and the worker registry;
// registered while the object lives (supervisor_gauges.h has the samples).
#ifndef SLUICE_SUPERVISOR_SCRAPE_GAUGES_H_
#define SLUICE_SUPERVISOR_SCRAPE_GAUGES_H_

#include <memory>
#include <vector>

#include "common/metrics/registry.h"
#include "supervisor/running_supervisors.h"
#include "supervisor/worker_registry.h"

namespace sluice::supervisor {

class ScrapeGauges {
 public:
  // All three must outlive the object.
  ScrapeGauges(metrics::Registry* sink, RunningSupervisors* supervisors,
               WorkerRegistry* workers);
  // Unregisters them (waits for a running scrape).
  ~ScrapeGauges();

 private:
  std::vector<std::unique_ptr<metrics::Registry::CallbackHandle>> gauges_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SCRAPE_GAUGES_H_
