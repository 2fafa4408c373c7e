// ScrapeGauges: the scrape-time gauges' callbacks (scrape_gauges.h).
#include "supervisor/scrape_gauges.h"

#include "common/metrics/catalog.h"
#include "supervisor/supervisor_gauges.h"

namespace sluice::supervisor {

ScrapeGauges::ScrapeGauges(metrics::Registry* sink, RunningSupervisors* supervisors,
                           WorkerRegistry* workers) {
  // Computed at scrape time, from the status each supervisor shows.
  auto statuses = [supervisors] {
    std::vector<v1::SupervisorStatus> out;
    for (auto& supervisor : supervisors->All()) out.push_back(supervisor->Status());
    return out;
  };
  gauges_.push_back(sink->AddGaugeCallback(
      metrics::kSupervisorPartitionLag, [statuses] { return PartitionLagSamples(statuses()); }));
  gauges_.push_back(sink->AddGaugeCallback(
      metrics::kSupervisorPartitionTimeLag,
      [statuses] { return PartitionTimeLagSamples(statuses()); }));
  gauges_.push_back(sink->AddGaugeCallback(
      metrics::kSupervisorTasks, [statuses] { return TaskStateSamples(statuses()); }));
  gauges_.push_back(sink->AddGaugeCallback(
      metrics::kSupervisorDatasourceHealthy,
      [statuses] { return DatasourceHealthSamples(statuses()); }));
  gauges_.push_back(sink->AddGaugeCallback(
      metrics::kSupervisorDatasourceState,
      [statuses] { return DatasourceStateSamples(statuses()); }));
  gauges_.push_back(sink->AddGaugeCallback(
      metrics::kSupervisorWorkers, [workers] { return WorkerStateSamples(workers->List()); }));
}

ScrapeGauges::~ScrapeGauges() { gauges_.clear(); }

}  // namespace sluice::supervisor
