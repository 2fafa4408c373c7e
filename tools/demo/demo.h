// The sluice demo (what scripts/demo.sh runs): a whole deployment as real
// processes on this machine, a wiki-edit stream ingested with replicas and
// incremental handoffs, live progress, the published segments and the
// exactly-once audit, then a clean stop.
//
//   1. the dev Kafka broker (topic `wiki`), the supervisor and the task
//      workers start (tools/cluster/process_cluster.h);
//   2. a spec is submitted (taskCount, replicas, a small maxRowsPerSegment so
//      that segments are handed off while reading goes on, a short
//      taskDuration so that groups roll over) and the records are produced
//      while the tasks read (tools/produce/wiki_producer.h);
//   3. a progress line every `progress_interval` until everything produced
//      is committed;
//   4. the segments (once handed off) and the audit (tools/audit/live_audit.h,
//      with the producer's exact counts: total, per partition, malformed);
//   5. every process is stopped with SIGTERM and must exit cleanly.
//
//   DemoOptions options;
//   options.records = 300000;
//   int exit_code = RunDemo(options, std::cout);
#ifndef SLUICE_TOOLS_DEMO_DEMO_H_
#define SLUICE_TOOLS_DEMO_DEMO_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "absl/time/time.h"

namespace sluice {
namespace demo {

// Exit codes of RunDemo.
inline constexpr int kDemoOk = 0;
// Something is wrong: audit failure, a process that died or did not stop
// cleanly, a timeout, an error starting up.
inline constexpr int kDemoFailed = 1;
// Bad options.
inline constexpr int kDemoUsage = 2;
// Interrupted (SIGINT/SIGTERM) before the end.
inline constexpr int kDemoInterrupted = 130;

struct DemoOptions {
  // Where the processes keep their data and logs. Empty: a new directory
  // /tmp/sluice-demo.XXXXXX, removed at the end of a successful run unless
  // keep_data.
  std::string root_dir;
  bool keep_data = false;
  // The stream.
  int64_t records = 300000;
  double malformed_fraction = 0.0002;
  // Records per second (0: as fast as Kafka takes them).
  double rate = 5000;
  uint64_t seed = 1;
  // "dev": the embedded dev broker (librdkafka's mock cluster); "real": an
  // Apache Kafka 4.4 node started for the demo (tools/kafka/run_kafka.sh,
  // jars from scripts/install_deps.sh).
  std::string kafka = "dev";
  // The deployment and the spec.
  int partitions = 4;
  int workers = 2;
  int task_count = 2;
  int replicas = 2;
  int64_t max_rows_per_segment = 25000;
  std::string task_duration = "PT20S";
  // tuningConfig.intermediateHandoffPeriod (ISO-8601; empty: none, the
  // groups hand off at roll-over and when segments fill).
  std::string intermediate_handoff_period;
  // Stamp each record with the wall-clock time it is produced (instead of
  // timestamps ending about now), so how soon a row is readable after it
  // was produced can be read from the table (bench/iceberg_freshness.sh).
  bool live_timestamps = false;
  // The spec has an Iceberg table (sluice.wiki); false: segments only.
  bool iceberg_table = true;
  // dataSchema.granularitySpec.segmentGranularity of the demo's spec.
  std::string segment_granularity = "HOUR";
  // The spec's "compaction" section as JSON (docs/compaction.md), e.g.
  // {"skipOffsetFromLatest": "PT2M", "period": "PT5S"}. Empty: none. With
  // one, the demo also waits (at most `compaction_wait`) until every
  // interval older than the skip offset holds at most
  // `compacted_max_segments` used segments, all handed off, shows the used
  // segments per interval instead of the segment table, and prints the
  // compaction figures (bench/compaction/run.sh).
  std::string compaction_json;
  absl::Duration compaction_wait = absl::Minutes(3);
  int compacted_max_segments = 2;
  // Where to write the run's figures as JSON (ingestion time, records,
  // intervals, compaction totals); empty: nowhere.
  std::string summary_json;
  // Give up (and fail) when not everything is committed after this long.
  absl::Duration timeout = absl::Minutes(5);
  absl::Duration progress_interval = absl::Milliseconds(1500);
  // After the audit, keep everything running (printing the addresses and
  // commands to try) until `interrupted` returns true.
  bool keep_running = false;
  // Serve the supervisor's web console on a free loopback port (printed).
  bool console = true;
  // After the audit, read the datasource's Iceberg table with engines sluice
  // did not write: `iceberg_python` (a Python with pyiceberg and DuckDB,
  // scripts/install_iceberg_readers.sh) runs `iceberg_query_script`
  // (tools/demo/query_table.py) on the metadata store. Empty: no query.
  std::string iceberg_python;
  std::string iceberg_query_script;
  // Polled throughout; true stops the demo (and the processes) early.
  std::function<bool()> interrupted;
};

// Runs the demo, writing everything a user reads to `out`. Returns one of the
// exit codes above.
int RunDemo(const DemoOptions& options, std::ostream& out);

}  // namespace demo
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEMO_DEMO_H_
