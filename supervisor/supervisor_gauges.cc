#include "supervisor/supervisor_gauges.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"

namespace sluice::supervisor {

namespace {

// One sample per (datasource, partition) of the map `field` picks.
template <typename Field>
std::vector<metrics::GaugeSample> PerPartition(const std::vector<v1::SupervisorStatus>& statuses,
                                               Field field) {
  std::vector<metrics::GaugeSample> samples;
  for (const v1::SupervisorStatus& status : statuses) {
    for (const auto& [partition, value] : field(status)) {
      samples.push_back(
          {{{"datasource", status.datasource()}, {"partition", absl::StrCat(partition)}},
           static_cast<double>(value)});
    }
  }
  return samples;
}

}  // namespace

std::vector<metrics::GaugeSample> PartitionLagSamples(
    const std::vector<v1::SupervisorStatus>& statuses) {
  return PerPartition(statuses, [](const v1::SupervisorStatus& s) -> const auto& {
    return s.lag();
  });
}

std::vector<metrics::GaugeSample> PartitionTimeLagSamples(
    const std::vector<v1::SupervisorStatus>& statuses) {
  return PerPartition(statuses, [](const v1::SupervisorStatus& s) -> const auto& {
    return s.time_lag_ms();
  });
}

std::vector<metrics::GaugeSample> TaskStateSamples(
    const std::vector<v1::SupervisorStatus>& statuses) {
  std::vector<metrics::GaugeSample> samples;
  for (const v1::SupervisorStatus& status : statuses) {
    std::map<std::string, int> by_state;
    for (const auto* groups : {&status.active_groups(), &status.publishing_groups()}) {
      for (const v1::TaskGroupStatus& group : *groups) {
        for (const v1::TaskSummary& task : group.tasks()) {
          ++by_state[ShortEnumName(task.state())];
        }
      }
    }
    for (const auto& [state, count] : by_state) {
      samples.push_back(
          {{{"datasource", status.datasource()}, {"state", state}}, static_cast<double>(count)});
    }
  }
  return samples;
}

std::vector<metrics::GaugeSample> DatasourceHealthSamples(
    const std::vector<v1::SupervisorStatus>& statuses) {
  std::vector<metrics::GaugeSample> samples;
  for (const v1::SupervisorStatus& status : statuses) {
    samples.push_back({{{"datasource", status.datasource()}}, status.healthy() ? 1.0 : 0.0});
  }
  return samples;
}

std::vector<metrics::GaugeSample> DatasourceStateSamples(
    const std::vector<v1::SupervisorStatus>& statuses) {
  std::vector<metrics::GaugeSample> samples;
  for (const v1::SupervisorStatus& status : statuses) {
    samples.push_back(
        {{{"datasource", status.datasource()}, {"state", ShortEnumName(status.state())}}, 1.0});
  }
  return samples;
}

std::vector<metrics::GaugeSample> WorkerStateSamples(const std::vector<v1::WorkerInfo>& workers) {
  int alive = 0;
  int lost = 0;
  for (const v1::WorkerInfo& worker : workers) ++(worker.alive() ? alive : lost);
  return {{{{"state", "alive"}}, static_cast<double>(alive)},
          {{{"state", "lost"}}, static_cast<double>(lost)}};
}

}  // namespace sluice::supervisor
