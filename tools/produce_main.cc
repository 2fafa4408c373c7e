// sluice-produce: produces Wikipedia-edit-like JSON records to a Kafka topic
// and reports how many went to each partition (tools/produce/wiki_producer.h).
//
//   sluice-produce --bootstrap=127.0.0.1:9092 --topic=wiki --records=300000
//       --malformed_fraction=0.0005 --rate=20000     (one command line)
//
// Progress lines go to stderr; the per-partition report to stdout (and as
// JSON to --summary_json). Exit codes: 0 every record delivered, 1 a Kafka
// error (nothing is retried beyond the producer's own retries), 2 bad flags.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/time_util.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "tools/produce/wiki_producer.h"

DEFINE_string(bootstrap, "", "Kafka bootstrap servers, host:port[,host:port...]");
DEFINE_string(bootstrap_file, "",
              "read the bootstrap servers from this file (e.g. the dev broker's --bootstrap_file)");
DEFINE_string(topic, "wiki", "topic to produce to (must exist)");
DEFINE_int64(records, 100000, "records to produce (0: until --duration)");
DEFINE_double(rate, 0, "records per second at most (0: as fast as possible)");
DEFINE_string(duration, "", "stop after this long, e.g. 30s or 2m (empty: no limit)");
DEFINE_uint64(seed, 1, "generator seed: the same seed gives the same records");
DEFINE_double(malformed_fraction, 0, "fraction of broken records (bad JSON, timestamp, number)");
DEFINE_string(start_time, "2026-11-30T02:00:00Z", "timestamp of the first record (ISO-8601)");
DEFINE_int64(mean_step_ms, 1, "mean time between two records' timestamps");
DEFINE_string(producer_properties, "",
              "extra librdkafka producer properties, NAME=VALUE,... (override the defaults)");
DEFINE_string(summary_json, "", "also write the per-partition report as JSON to this file");
DEFINE_string(metadata_timeout, "15s", "how long to wait for the topic's partitions and offsets");
DEFINE_bool(progress, true, "print a progress line to stderr every second");

namespace {

int Run(int argc, char** argv) {
  gflags::SetUsageMessage("sluice-produce --bootstrap=HOST:PORT --topic=wiki --records=N");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  auto usage = [](const std::string& message) {
    std::cerr << "sluice-produce: " << message << "\n";
    return 2;
  };
  if (argc > 1) return usage(absl::StrCat("unexpected argument \"", argv[1], "\""));

  sluice::produce::ProduceOptions options;
  std::string bootstrap = FLAGS_bootstrap;
  if (!FLAGS_bootstrap_file.empty()) {
    std::ifstream in(FLAGS_bootstrap_file);
    if (!in || !std::getline(in, bootstrap)) {
      return usage(absl::StrCat("cannot read --bootstrap_file=", FLAGS_bootstrap_file));
    }
  }
  bootstrap = std::string(absl::StripAsciiWhitespace(bootstrap));
  if (bootstrap.empty()) return usage("give --bootstrap or --bootstrap_file");
  auto extra = sluice::produce::ParseProperties(FLAGS_producer_properties);
  if (!extra.ok()) return usage(absl::StrCat("--producer_properties: ", extra.status().message()));
  options.properties = *extra;
  options.properties["bootstrap.servers"] = bootstrap;
  options.topic = FLAGS_topic;
  options.records = FLAGS_records;
  options.rate = FLAGS_rate;
  if (!FLAGS_duration.empty() && !absl::ParseDuration(FLAGS_duration, &options.duration)) {
    return usage(absl::StrCat("--duration=", FLAGS_duration, " is not a duration (e.g. 30s)"));
  }
  if (!absl::ParseDuration(FLAGS_metadata_timeout, &options.metadata_timeout) ||
      options.metadata_timeout <= absl::ZeroDuration()) {
    return usage(
        absl::StrCat("--metadata_timeout=", FLAGS_metadata_timeout, " is not a positive duration"));
  }
  options.rows.seed = FLAGS_seed;
  options.rows.malformed_fraction = FLAGS_malformed_fraction;
  options.rows.mean_step_ms = FLAGS_mean_step_ms;
  auto start = sluice::ParseIsoInstantMillis(FLAGS_start_time);
  if (!start.ok()) return usage(absl::StrCat("--start_time: ", start.status().message()));
  options.rows.start_ms = *start;
  if (FLAGS_mean_step_ms < 0) return usage("--mean_step_ms must be >= 0");
  if (FLAGS_progress) {
    options.on_progress = [](const sluice::produce::ProduceProgress& p) {
      const double seconds = absl::ToDoubleSeconds(p.elapsed);
      std::cerr << absl::StrFormat("[produce] %.1fs: %d records produced, %d delivered (%.0f/s)\n",
                                   seconds, p.produced, p.delivered,
                                   seconds > 0 ? p.produced / seconds : 0.0);
    };
  }

  absl::StatusOr<sluice::produce::ProduceResult> result =
      sluice::produce::ProduceWikiRecords(options);
  if (!result.ok()) {
    std::cerr << "sluice-produce: " << result.status() << "\n";
    return absl::IsInvalidArgument(result.status()) ? 2 : 1;
  }
  std::cout << result->ToString();
  if (!FLAGS_summary_json.empty()) {
    std::ofstream out(FLAGS_summary_json);
    out << result->ToJson() << "\n";
    if (!out) {
      std::cerr << "sluice-produce: cannot write " << FLAGS_summary_json << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
