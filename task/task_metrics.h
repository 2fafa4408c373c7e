// The series one task records (common/metrics/catalog.h), looked up once per
// task so that the hot path only does relaxed atomic adds.
#ifndef SLUICE_TASK_TASK_METRICS_H_
#define SLUICE_TASK_TASK_METRICS_H_

#include <string>

#include "common/metrics/registry.h"

namespace sluice::task {

struct TaskMetrics {
  metrics::Counter* rows_processed = nullptr;
  metrics::Counter* rows_unparseable = nullptr;
  metrics::Counter* rows_thrown_away = nullptr;
  metrics::Counter* persists = nullptr;
  metrics::Histogram* persist_seconds = nullptr;
  metrics::Counter* checkpoints = nullptr;
  metrics::Histogram* checkpoint_seconds = nullptr;
  metrics::Histogram* checkpoint_paused_seconds = nullptr;
  metrics::Counter* segments_pushed = nullptr;
  metrics::Counter* segments_published = nullptr;
  metrics::Histogram* publish_seconds = nullptr;
  metrics::Histogram* handoff_seconds = nullptr;
  metrics::Counter* handoff_timeouts = nullptr;

  // Authentication failures of the task's Kafka consumer, by the spec's
  // mechanism (kafka::AuthMechanism).
  metrics::Counter* KafkaAuthFailures(const std::string& mechanism) const;

  // The series of `datasource` in `registry`; with a null registry, series
  // of a private registry nobody exports (so callers never check for null).
  static TaskMetrics For(metrics::Registry* registry, const std::string& datasource);

 private:
  metrics::Registry* registry_ = nullptr;
  std::string datasource_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_METRICS_H_
