// The end-to-end benchmark: one invocation pre-loads topics on a
// broker (real Apache Kafka by default, the dev broker with --broker=dev),
// measures the consume baselines (kcat, raw librdkafka) and
// sluice end to end on the same data, and renders the figures as Markdown
// with the ratios to the baselines and the targets:
//   - sluice end to end >= 1.0x the kcat rate measured in the same run;
//   - checkpoint round p99 <= 10 ms (2 replicas);
//   - worker peak RSS <= maxBytesInMemory + 100 MB.
// Figures are medians over `repetitions` interleaved rounds (kcat, raw,
// sluice rollup off, sluice rollup on in each round), so that load from
// other processes on the machine hits baselines and sluice alike.
//
// Not part of the test suite: run bench/e2e/run.sh.
#ifndef SLUICE_BENCH_E2E_E2E_BENCH_H_
#define SLUICE_BENCH_E2E_E2E_BENCH_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {
namespace bench {

struct E2eBenchOptions {
  std::string kcat_binary;
  // "real" (the default): Apache Kafka (tools/kafka/run_kafka.sh, jars from
  // scripts/install_deps.sh), with the JVM's default JIT and G1 as in
  // production; "dev": the dev broker (librdkafka's mock cluster).
  std::string broker = "real";
  // Run directory (broker, data, logs); kept afterwards for inspection.
  std::string work_dir;

  // The throughput topic and the 1-task runs.
  int64_t records = 4000000;
  int partitions = 4;
  double malformed_fraction = 0.0005;
  uint64_t seed = 42;
  int64_t max_rows_per_segment = 500000;
  // 0: the spec default (134217728).
  int64_t max_bytes_in_memory = 0;
  int repetitions = 3;

  // The checkpoint topic and the 2-replica run: small segments, many
  // checkpoints.
  int64_t checkpoint_records = 1000000;
  int64_t checkpoint_max_rows_per_segment = 10000;
  // > 0: the 2-replica run reads a live stream produced at this rate while
  // it runs, instead of a preloaded backlog (pauseless checkpoints' common
  // case: replicas caught up with the producer).
  double checkpoint_live_rate = 0;

  // Parts to run, for experiments: any of "baselines", "off", "on",
  // "replicas", "scaling" (rollup off with 1, 2 and 4 tasks), "one_worker"
  // (4 tasks on one worker sharing maxBytesInMemory), "iceberg" (rollup off
  // into an Iceberg table, after each round's "off" run, with the ratio;
  // only when named); empty: all (only a full run belongs in
  // docs/benchmarks.md).
  std::set<std::string> only;
  // Checkpoint rounds pause every replica (BenchClusterOptions).
  bool classic_checkpoints = false;
  // Extra consumer properties of every sluice spec (experiments; they are
  // listed in the report).
  std::map<std::string, std::string> consumer_properties;

  // The comparison (real Kafka only): a directory holding a second
  // sluice-supervisor, sluice-task and raw_consume (built from the same
  // sources but linked with another librdkafka by bench/e2e/run.sh
  // --compare_librdkafka=debian, or another build of sluice), and its name
  // for the report. A second supervisor and 2 workers run those binaries on the same
  // broker and topic; every round then measures raw_consume and the rollup
  // off/on runs for both sets, alternating which goes first, and the report
  // gains a table with both libraries' rows. Empty: no comparison.
  std::string compare_bin_dir;
  std::string compare_label;
  // True: compare_bin_dir holds this build relinked with another librdkafka
  // (run.sh --compare_librdkafka). False: another build of sluice (e.g. an
  // earlier revision, its three binaries copied there), so the report names
  // builds, not libraries.
  bool compare_librdkafka = true;

  // For the report header.
  std::string command;
  std::string git_revision;
};

// The heading of the section a run on `broker` writes: "## End to end:
// Apache Kafka 4.4.0" or "## End to end: dev broker" (each broker keeps its
// own section in docs/benchmarks.md).
std::string E2eSectionHeading(const std::string& broker);

// Runs everything; returns the Markdown section E2eSectionHeading(broker)
// (the caller prints it and writes it into docs/benchmarks.md). Progress goes
// to stderr.
absl::StatusOr<std::string> RunE2eBench(const E2eBenchOptions& options);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_E2E_BENCH_H_
