// The samples of the supervisor's scrape-time gauges (common/metrics/
// catalog.h): partition lag, tasks by state, health and state per datasource,
// workers alive and lost. Pure functions of what the stream supervisors and the worker
// registry show; the manager registers them as gauge callbacks.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_GAUGES_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_GAUGES_H_

#include <vector>

#include "common/metrics/registry.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice::supervisor {

// One sample per (datasource, partition): its lag.
std::vector<metrics::GaugeSample> PartitionLagSamples(
    const std::vector<v1::SupervisorStatus>& statuses);

// One sample per (datasource, partition) whose time lag is known: it, in
// milliseconds.
std::vector<metrics::GaugeSample> PartitionTimeLagSamples(
    const std::vector<v1::SupervisorStatus>& statuses);

// One sample per (datasource, task state) that has tasks, over the active
// and publishing groups.
std::vector<metrics::GaugeSample> TaskStateSamples(
    const std::vector<v1::SupervisorStatus>& statuses);

// One sample per datasource: 1 if its status says healthy, else 0.
std::vector<metrics::GaugeSample> DatasourceHealthSamples(
    const std::vector<v1::SupervisorStatus>& statuses);

// One sample per datasource, labelled with its state's short name
// ("RUNNING", "UNABLE_TO_CONNECT_TO_STREAM", ...), value 1.
std::vector<metrics::GaugeSample> DatasourceStateSamples(
    const std::vector<v1::SupervisorStatus>& statuses);

// Two samples: state=alive and state=lost.
std::vector<metrics::GaugeSample> WorkerStateSamples(const std::vector<v1::WorkerInfo>& workers);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_GAUGES_H_
