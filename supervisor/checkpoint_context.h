// What the checkpoint classes (checkpoint_coordinator.h, pauseless_round.h,
// checkpoint_move_back.h) need from the stream supervisor that runs them: the
// store, the task client and actions, the metrics, and read-only access to
// what the loop knows of the stream. Callbacks, not a pointer to the
// supervisor: they see only this.
//
// Everything here is used on the stream supervisor's loop only; what it
// points to must outlive the classes that hold it.
#ifndef SLUICE_SUPERVISOR_CHECKPOINT_CONTEXT_H_
#define SLUICE_SUPERVISOR_CHECKPOINT_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/metrics/registry.h"
#include "supervisor/clock.h"
#include "supervisor/pauseless_margin.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/task_actions.h"
#include "supervisor/task_client.h"

namespace sluice::supervisor {

struct CheckpointContext {
  std::string datasource;
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  // Pause, Resume, GetCurrentOffsets, SetEndOffsets, GetTaskStatus.
  TaskClient* client = nullptr;
  // Task addresses and kills.
  TaskActions* actions = nullptr;
  // Checkpoint counts (common/metrics/catalog.h); null: none.
  metrics::Registry* metrics = nullptr;
  // Incremental rounds without pausing the replicas; off: every round
  // pauses them.
  bool pauseless_checkpoints = true;
  PauselessMarginOptions pauseless_margin;
  // What the loop knows of the stream, owned by the stream supervisor: the
  // last watermark query's answer, and the records per second each
  // partition's latest offset grew between the last two.
  const std::map<int32_t, PartitionWatermarks>* watermarks = nullptr;
  const std::map<int32_t, double>* produce_rates = nullptr;
  // tuningConfig.maxRowsPerSegment of the running spec (it may change live).
  std::function<int64_t()> max_rows_per_segment;
  // A checkpoint was recorded, moved or removed: RPC threads must see it
  // before a replica asks about it.
  std::function<void()> publish_view;
  // A failure worth the status' recent errors.
  std::function<void(const absl::Status&)> record_error;

  std::string Prefix() const { return absl::StrCat("[supervisor ", datasource, "] "); }
  // Counts a round outcome (`def`: a counter with a datasource label).
  void Count(const metrics::MetricDef& def) const {
    if (metrics != nullptr) metrics->GetCounter(def, {{"datasource", datasource}})->Increment();
  }
};

// Runs fn(0..n-1) on n threads (replicas are few) and waits.
template <typename Fn>
void ParallelFor(size_t n, Fn fn) {
  if (n == 1) {
    fn(0);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

inline std::string FormatMillis(absl::Duration d) {
  return absl::StrCat(absl::ToDoubleMilliseconds(d), " ms");
}

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_CHECKPOINT_CONTEXT_H_
