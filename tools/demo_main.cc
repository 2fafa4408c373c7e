// sluice-demo: the whole system on this machine, from an empty topic to an
// audited set of segments (tools/demo/demo.h). scripts/demo.sh builds and
// runs it.
//
//   sluice-demo                         # 300,000 records, about 1-3 minutes
//   sluice-demo --records=20000 --task_duration=PT10S
//   sluice-demo --keep_running          # then explore with sluicectl
//
// Exit codes: 0 everything committed exactly once and stopped cleanly;
// 1 something is wrong (the output says what); 2 bad flags; 130 interrupted.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "gflags/gflags.h"
#include "glog/logging.h"
#include "tools/demo/demo.h"

DEFINE_string(kafka, "dev",
              "dev: the embedded dev broker; real: Apache Kafka 4.4 started for the demo "
              "(tools/kafka/run_kafka.sh, jars from scripts/install_deps.sh)");
DEFINE_int64(records, 300000, "wiki edits to produce");
DEFINE_double(malformed_fraction, 0.0002, "fraction of malformed records (counted, not lost)");
DEFINE_double(rate, 5000, "records per second produced (0: as fast as possible)");
DEFINE_uint64(seed, 1, "seed of the record generator");
DEFINE_int32(partitions, 4, "partitions of the topic");
DEFINE_int32(workers, 2, "task worker processes");
DEFINE_int32(task_count, 2, "ioConfig.taskCount: reading task groups");
DEFINE_int32(replicas, 2, "ioConfig.replicas: tasks per group, on different workers");
DEFINE_int64(max_rows_per_segment, 25000,
             "tuningConfig.maxRowsPerSegment: a full segment triggers a checkpoint and a handoff");
DEFINE_string(task_duration, "PT20S", "ioConfig.taskDuration: groups roll over after this long");
DEFINE_string(intermediate_handoff_period, "",
              "tuningConfig.intermediateHandoffPeriod of the demo's spec, e.g. PT5S (empty: none)");
DEFINE_bool(live_timestamps, false,
            "stamp each record with the wall-clock time it is produced (for measuring freshness)");
DEFINE_bool(iceberg_table, true, "the spec has an Iceberg table (false: segments only)");
DEFINE_string(segment_granularity, "HOUR",
              "segmentGranularity of the demo's spec (e.g. MINUTE, FIVE_MINUTE, HOUR)");
DEFINE_string(compaction, "",
              "the spec's compaction section as JSON, e.g. "
              "'{\"skipOffsetFromLatest\":\"PT2M\",\"period\":\"PT5S\"}' (empty: none); the "
              "demo then waits for compaction to merge every interval older than the skip offset");
DEFINE_int32(compaction_wait_seconds, 180,
             "with --compaction: fail if intervals older than the skip offset still hold more "
             "than --compacted_max_segments segments after this long");
DEFINE_int32(compacted_max_segments, 2, "with --compaction: used segments allowed per interval");
DEFINE_string(summary_json, "", "write the run's figures (ingestion, compaction) as JSON here");
DEFINE_int32(timeout_seconds, 300, "fail if not everything is committed after this long");
DEFINE_string(root_dir, "",
              "directory for the processes' data and logs (default: a new /tmp/sluice-demo.*, "
              "removed after a successful run)");
DEFINE_bool(keep_data, false, "keep the data directory after a successful run");
DEFINE_string(iceberg_python, "",
              "a Python with pyiceberg and DuckDB; with --iceberg_query_script, the demo ends by "
              "querying its Iceberg table (scripts/demo.sh passes both)");
DEFINE_string(iceberg_query_script, "", "tools/demo/query_table.py");
DEFINE_bool(console, true, "serve the supervisor's web console on a free loopback port");
DEFINE_bool(keep_running, false,
            "after the audit, keep the processes running for exploring (Ctrl-C stops them)");

int main(int argc, char** argv) {
  // Ctrl-C and SIGTERM are taken by a thread, so the demo can stop the
  // processes cleanly; blocked here before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // Output piped into `head` must not kill the demo halfway (its processes
  // would die with it, uncleanly).
  signal(SIGPIPE, SIG_IGN);

  gflags::SetUsageMessage("sluice-demo [--records=N] [--keep_running] ...");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  // Library logs (Kafka client notices) only when they are warnings.
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = 1;
  google::InitGoogleLogging(argv[0]);
  if (argc > 1) {
    std::cerr << "sluice-demo: unexpected argument \"" << argv[1] << "\"\n";
    return sluice::demo::kDemoUsage;
  }

  static std::atomic<bool> interrupted{false};
  std::thread([stop_signals] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    interrupted.store(true);
  }).detach();

  sluice::demo::DemoOptions options;
  options.kafka = FLAGS_kafka;
  options.records = FLAGS_records;
  options.malformed_fraction = FLAGS_malformed_fraction;
  options.rate = FLAGS_rate;
  options.seed = FLAGS_seed;
  options.partitions = FLAGS_partitions;
  options.workers = FLAGS_workers;
  options.task_count = FLAGS_task_count;
  options.replicas = FLAGS_replicas;
  options.max_rows_per_segment = FLAGS_max_rows_per_segment;
  options.task_duration = FLAGS_task_duration;
  options.intermediate_handoff_period = FLAGS_intermediate_handoff_period;
  options.live_timestamps = FLAGS_live_timestamps;
  options.iceberg_table = FLAGS_iceberg_table;
  options.segment_granularity = FLAGS_segment_granularity;
  options.compaction_json = FLAGS_compaction;
  options.compaction_wait = absl::Seconds(FLAGS_compaction_wait_seconds);
  options.compacted_max_segments = FLAGS_compacted_max_segments;
  options.summary_json = FLAGS_summary_json;
  options.timeout = absl::Seconds(FLAGS_timeout_seconds);
  options.root_dir = FLAGS_root_dir;
  options.keep_data = FLAGS_keep_data;
  options.keep_running = FLAGS_keep_running;
  options.console = FLAGS_console;
  options.iceberg_python = FLAGS_iceberg_python;
  options.iceberg_query_script = FLAGS_iceberg_query_script;
  options.interrupted = [] { return interrupted.load(); };
  return sluice::demo::RunDemo(options, std::cout);
}
