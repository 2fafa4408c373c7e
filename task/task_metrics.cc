#include "task/task_metrics.h"

#include "common/metrics/catalog.h"

namespace sluice::task {

namespace {

metrics::Registry* Unexported() {
  static metrics::Registry* const unexported = new metrics::Registry();
  return unexported;
}

}  // namespace

TaskMetrics TaskMetrics::For(metrics::Registry* registry, const std::string& datasource) {
  if (registry == nullptr) registry = Unexported();
  const metrics::Labels labels = {{"datasource", datasource}};
  TaskMetrics m;
  m.rows_processed = registry->GetCounter(metrics::kTaskRowsProcessed, labels);
  m.rows_unparseable = registry->GetCounter(metrics::kTaskRowsUnparseable, labels);
  m.rows_thrown_away = registry->GetCounter(metrics::kTaskRowsThrownAway, labels);
  m.persists = registry->GetCounter(metrics::kTaskPersists, labels);
  m.persist_seconds = registry->GetHistogram(metrics::kTaskPersistSeconds, labels);
  m.checkpoints = registry->GetCounter(metrics::kTaskCheckpoints, labels);
  m.checkpoint_seconds = registry->GetHistogram(metrics::kTaskCheckpointSeconds, labels);
  m.checkpoint_paused_seconds =
      registry->GetHistogram(metrics::kTaskCheckpointPausedSeconds, labels);
  m.segments_pushed = registry->GetCounter(metrics::kTaskSegmentsPushed, labels);
  m.segments_published = registry->GetCounter(metrics::kTaskSegmentsPublished, labels);
  m.publish_seconds = registry->GetHistogram(metrics::kTaskPublishSeconds, labels);
  m.handoff_seconds = registry->GetHistogram(metrics::kTaskHandoffSeconds, labels);
  m.handoff_timeouts = registry->GetCounter(metrics::kTaskHandoffTimeouts, labels);
  m.registry_ = registry;
  m.datasource_ = datasource;
  return m;
}

metrics::Counter* TaskMetrics::KafkaAuthFailures(const std::string& mechanism) const {
  return (registry_ != nullptr ? registry_ : Unexported())
      ->GetCounter(metrics::kTaskKafkaAuthFailures,
                               {{"datasource", datasource_}, {"mechanism", mechanism}});
}

}  // namespace sluice::task
