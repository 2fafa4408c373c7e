// Checks a TaskSpec received in RunTask (or restored from disk) and derives
// what a task needs from it: partitions, checkpoints, tuning with defaults,
// parsed durations, segment granularity.
#ifndef SLUICE_TASK_TASK_SPEC_H_
#define SLUICE_TASK_TASK_SPEC_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/granularity.h"
#include "common/spec.h"
#include "common/stream_partitions.h"
#include "sluice/v1/task.pb.h"
#include "common/offsets.h"

namespace sluice::task {

struct TaskSettings {
  // Sorted.
  std::vector<int32_t> partitions;
  // Topic-pattern tasks: the (topic, partition) of each of `partitions`.
  StreamPartitionMap stream_partitions;
  // Sequence id -> start offsets, ids ascending ({0: start_offsets} when the
  // spec lists none).
  std::vector<std::pair<int32_t, OffsetMap>> checkpoints;
  // With every default filled in.
  v1::TuningConfig tuning;
  v1::DataSchema data_schema;
  SpecTimings timings;
  Granularity segment_granularity;
  absl::Duration poll_timeout;
};

// INVALID_ARGUMENT naming the field for a spec no task can run.
absl::StatusOr<TaskSettings> CheckTaskSpec(const v1::TaskSpec& spec);

// A worker's ingestion memory per task slot (`share` > 0) caps the task's
// maxBytesInMemory (Druid's Indexer divides globalIngestionHeapLimitBytes so).
// Returns whether it lowered it.
bool CapMaxBytesInMemory(int64_t share, TaskSettings* settings);

}  // namespace sluice::task

#endif  // SLUICE_TASK_TASK_SPEC_H_
