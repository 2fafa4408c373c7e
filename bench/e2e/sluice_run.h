// One end-to-end sluice run over a pre-loaded topic: submit a spec (one task
// group, `replicas` tasks), let the tasks read everything with incremental
// handoffs along the way, then suspend the supervisor so the last sequence
// is published too, and collect what the services recorded: the task's
// start time and the supervisor's commit log (for the throughput), the
// services' latency histograms, each worker's peak RSS.
//
// Throughput is taken from the services' own clocks: from the task's
// start_time_ms (it starts reading) to the committed_at_ms of the last
// sequence in the commit log. The harness polls the tasks' offsets (every
// `poll_interval`) only to know when to suspend; that reaction time is part
// of the measured tail and is reported separately (all_read_seen_ms).
//
// A run fails unless rows + unparseable + thrown away in the commit log add
// up to every record of the topic: figures over lost or duplicated data
// would be meaningless.
#ifndef SLUICE_BENCH_E2E_SLUICE_RUN_H_
#define SLUICE_BENCH_E2E_SLUICE_RUN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cluster.h"
#include "bench/e2e/prometheus_text.h"

namespace sluice {
namespace bench {

struct SluiceRunOptions {
  std::string datasource;
  std::string bootstrap;
  std::string topic;
  // What the topic holds: partition -> [start, end).
  std::map<int32_t, int64_t> start_offsets;
  std::map<int32_t, int64_t> end_offsets;
  int replicas = 1;
  // The spec's taskCount (groups; each reads its share of the partitions).
  int task_count = 1;
  bool rollup = false;
  std::string query_granularity = "NONE";
  // Dimensions of the spec; empty: all six of the wiki records (channel,
  // page, user, namespace, countryName, isRobot).
  std::vector<std::string> dimensions;
  // Added to the spec's consumer properties.
  std::map<std::string, std::string> consumer_properties;
  std::string segment_granularity = "HOUR";
  int64_t max_rows_per_segment = 0;  // 0: the spec default
  int64_t max_rows_in_memory = 0;
  int64_t max_bytes_in_memory = 0;
  // The spec names an Iceberg table (sluice.<datasource>): every commit is
  // also a snapshot (docs/iceberg.md).
  bool iceberg_table = false;
  absl::Duration poll_interval = absl::Milliseconds(10);
  // Runs once the spec is submitted (e.g. starts a live producer filling
  // the topic up to end_offsets).
  std::function<void()> after_submit;
  absl::Duration timeout = absl::Minutes(20);
};

struct SluiceRunResult {
  int64_t records = 0;  // rows + unparseable + thrown away (== the topic)
  int64_t rows = 0;     // records that became rows (before rollup)
  int64_t unparseable = 0;
  int64_t thrown_away = 0;
  int64_t segment_rows = 0;  // rows in the published segments (after rollup)
  int64_t segment_bytes = 0;
  int sequences = 0;
  int segments = 0;
  // Wall-clock milliseconds (the services' clocks, same machine).
  int64_t task_start_ms = 0;     // first task's start_time_ms
  int64_t all_read_seen_ms = 0;  // harness saw every replica at the end
  int64_t last_commit_ms = 0;    // committed_at_ms of the last sequence
  // Per committed sequence, oldest first: committed_at_ms.
  std::vector<int64_t> commit_times_ms;
  // Histograms as the services exported them after the run.
  PromHistogram supervisor_checkpoint_seconds;
  PromHistogram task_checkpoint_seconds;  // all workers merged
  // Per checkpoint per replica: time its read loop was parked (workers
  // merged); rounds the supervisor ran without pausing, and rounds a
  // replica refused (fallback).
  PromHistogram task_checkpoint_paused_seconds;
  double pauseless_rounds = 0;
  double fallback_rounds = 0;
  PromHistogram task_publish_seconds;
  // The supervisor's publish transactions and Iceberg stagings (per attempt).
  PromHistogram supervisor_publish_transaction_seconds;
  PromHistogram supervisor_iceberg_stage_seconds;
  PromHistogram task_persist_seconds;
  // gRPC handling time on the workers (all merged) of the calls a
  // checkpoint round makes: where a round's time goes.
  PromHistogram worker_pause_seconds;
  PromHistogram worker_set_end_offsets_seconds;
  // Per worker that ran a task of the run: VmHWM at the end of the run.
  std::vector<int64_t> worker_peak_rss_bytes;
  // How many of the run's tasks each of those workers ran.
  std::vector<int> worker_tasks;
  // CPU (user + system) from the submit until every task ended: of all
  // workers together, and of the dev broker serving the run.
  absl::Duration worker_cpu;
  absl::Duration broker_cpu;

  double RecordsPerSecond() const;
  // Nanoseconds of worker (broker) CPU per record; 0 without records.
  double WorkerCpuPerRecordNs() const;
  double BrokerCpuPerRecordNs() const;
};

// Runs the datasource on `processes` (which must have >= replicas workers).
absl::StatusOr<SluiceRunResult> RunSluice(BenchCluster& processes, const SluiceRunOptions& options);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_SLUICE_RUN_H_
