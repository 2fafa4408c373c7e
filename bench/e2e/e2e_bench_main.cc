// e2e_bench: the end-to-end benchmark. Run it with
//   bench/e2e/run.sh [flags]
// which builds it with -c opt and passes the repository's docs path. Prints
// the Markdown section and (with --out_doc) replaces its broker's "## End to
// end: <broker>" section in it.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/e2e/e2e_bench.h"
#include "bench/e2e/markdown_report.h"
#include "tests/testing/subprocess.h"

DEFINE_string(broker, "real",
              "real: Apache Kafka 4.4 (tools/kafka/run_kafka.sh; the jars from "
              "scripts/install_deps.sh); dev: the dev broker (librdkafka's mock cluster)");
DEFINE_int64(records, 4000000, "records pre-loaded for the throughput runs (2-5M)");
DEFINE_int32(partitions, 4, "partitions of the benchmark topics");
DEFINE_double(malformed_fraction, 0.0005, "fraction of malformed records");
DEFINE_uint64(seed, 42, "seed of the record generator");
DEFINE_int64(max_rows_per_segment, 500000, "maxRowsPerSegment of the 1-task runs");
DEFINE_int64(max_bytes_in_memory, 0, "maxBytesInMemory of every run (0: the spec default)");
DEFINE_int32(repetitions, 3, "rounds of (kcat, raw, sluice rollup off, sluice rollup on); medians");
DEFINE_int64(checkpoint_records, 1000000, "records of the 2-replica checkpoint run");
DEFINE_int64(checkpoint_max_rows_per_segment, 10000, "maxRowsPerSegment of the 2-replica run");
DEFINE_string(work_dir, "", "run directory, kept afterwards (default: a new /tmp/sluice-bench.*)");
DEFINE_string(out_doc, "", "Markdown file whose \"## End to end\" section is replaced");
DEFINE_string(kcat, "", "kcat binary (default: from PATH)");
DEFINE_string(git_revision, "", "for the report");
DEFINE_string(only, "",
              "experiments: run only these parts, comma-separated: baselines, off, on, replicas, "
              "scaling, one_worker, iceberg (rollup off into an Iceberg table; part of every "
              "default run too) (the docs are not written then)");
DEFINE_double(checkpoint_live_rate, 0,
              "records/s of a live producer the 2-replica run reads while it runs "
              "(0: a preloaded backlog)");
DEFINE_bool(classic_checkpoints, false,
            "experiments: every checkpoint round pauses the replicas (no pauseless rounds)");
DEFINE_string(compare_bin_dir, "",
              "a directory with sluice-supervisor, sluice-task and raw_consume linked with "
              "another librdkafka (bench/e2e/run.sh --compare_librdkafka): every round also "
              "runs raw_consume and the sluice rollup off/on runs with them (--broker=real)");
DEFINE_string(compare_label, "the comparison library",
              "the --compare_bin_dir library's name (or build's, without --compare_librdkafka)");
DEFINE_string(compare_librdkafka, "",
              "set by bench/e2e/run.sh --compare_librdkafka (which built --compare_bin_dir); "
              "only shown in the report's command");
DEFINE_string(consumer_properties, "",
              "experiments: extra consumer properties of the sluice specs, k=v,k=v");

int main(int argc, char** argv) {
  // The command a reader can repeat: run.sh's own arguments, not the two it
  // adds.
  std::vector<std::string> user_args;
  // (The flags are parsed below: look for run.sh's --compare_librdkafka here.)
  bool librdkafka_comparison = false;
  for (int i = 1; i < argc; ++i) {
    if (absl::StartsWith(argv[i], "--compare_librdkafka=")) librdkafka_comparison = true;
  }
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (absl::StartsWith(arg, "--out_doc=") || absl::StartsWith(arg, "--git_revision=")) continue;
    // run.sh's --compare_librdkafka=X becomes these two, and is passed on
    // for the command line.
    if (librdkafka_comparison &&
        (absl::StartsWith(arg, "--compare_bin_dir=") || absl::StartsWith(arg, "--compare_label="))) {
      continue;
    }
    // Quoted when it holds a space, so the command can be pasted back.
    user_args.emplace_back(absl::StrContains(arg, ' ') ? absl::StrCat("'", arg, "'")
                                                        : std::string(arg));
  }
  std::string command = "bash bench/e2e/run.sh";
  if (!user_args.empty()) absl::StrAppend(&command, " ", absl::StrJoin(user_args, " "));
  gflags::SetUsageMessage("sluice end-to-end benchmark; see bench/e2e/run.sh");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);

  sluice::bench::E2eBenchOptions options;
  if (!FLAGS_kcat.empty()) {
    options.kcat_binary = FLAGS_kcat;
  } else if (auto kcat = sluice::testing::FindInPath("kcat"); kcat.ok()) {
    options.kcat_binary = *kcat;
  } else {
    fprintf(stderr, "e2e_bench: %s (apt-get install kcat)\n", kcat.status().ToString().c_str());
    return 2;
  }
  if (FLAGS_work_dir.empty()) {
    char tmpl[] = "/tmp/sluice-bench.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      perror("mkdtemp");
      return 1;
    }
    options.work_dir = tmpl;
  } else {
    options.work_dir = FLAGS_work_dir;
  }
  options.broker = FLAGS_broker;
  options.records = FLAGS_records;
  options.partitions = FLAGS_partitions;
  options.malformed_fraction = FLAGS_malformed_fraction;
  options.seed = FLAGS_seed;
  options.max_rows_per_segment = FLAGS_max_rows_per_segment;
  options.max_bytes_in_memory = FLAGS_max_bytes_in_memory;
  options.repetitions = std::max(1, FLAGS_repetitions);
  options.checkpoint_records = FLAGS_checkpoint_records;
  options.checkpoint_max_rows_per_segment = FLAGS_checkpoint_max_rows_per_segment;
  options.classic_checkpoints = FLAGS_classic_checkpoints;
  options.checkpoint_live_rate = FLAGS_checkpoint_live_rate;
  for (absl::string_view part : absl::StrSplit(FLAGS_only, ',', absl::SkipEmpty())) {
    options.only.insert(std::string(part));
  }
  for (absl::string_view kv : absl::StrSplit(FLAGS_consumer_properties, ',', absl::SkipEmpty())) {
    const std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    options.consumer_properties[p.first] = p.second;
  }
  options.compare_bin_dir = FLAGS_compare_bin_dir;
  options.compare_label = FLAGS_compare_label;
  options.compare_librdkafka = !FLAGS_compare_librdkafka.empty();
  options.command = command;
  options.git_revision = FLAGS_git_revision;

  absl::StatusOr<std::string> section = sluice::bench::RunE2eBench(options);
  if (!section.ok()) {
    fprintf(stderr, "e2e_bench: %s\n(logs under %s)\n", section.status().ToString().c_str(),
            options.work_dir.c_str());
    return 1;
  }
  printf("%s", section->c_str());
  if (!FLAGS_out_doc.empty() && options.only.empty()) {
    std::string doc;
    {
      std::ifstream in(FLAGS_out_doc);
      std::stringstream buffer;
      buffer << in.rdbuf();
      doc = buffer.str();
    }
    std::ofstream out(FLAGS_out_doc, std::ios::trunc);
    const std::string heading = sluice::bench::E2eSectionHeading(options.broker);
    out << sluice::bench::ReplaceMarkdownSection(doc, heading, *section);
    if (!out) {
      fprintf(stderr, "e2e_bench: cannot write %s\n", FLAGS_out_doc.c_str());
      return 1;
    }
    fprintf(stderr, "e2e_bench: wrote the \"%s\" section of %s\n", heading.c_str() + 3,
            FLAGS_out_doc.c_str());
  }
  return 0;
}
