#include "bench/e2e/e2e_bench.h"

#include <thread>

#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "bench/e2e/bench_cluster.h"
#include "bench/e2e/consume_baselines.h"
#include "bench/e2e/fsync_baseline.h"
#include "bench/e2e/markdown_report.h"
#include "bench/e2e/process_cpu.h"
#include "bench/e2e/sluice_run.h"
#include "bench/e2e/topic_preload.h"
#include "common/file_util.h"
#include "common/kafka/library_version.h"
#include "common/kafka/metadata_client.h"
#include "common/status_macros.h"
#include "tests/testing/subprocess.h"
#include "tools/kafka/real_kafka.h"

namespace sluice {
namespace bench {
namespace {

constexpr int64_t kSpecDefaultMaxBytesInMemory = 134217728;
// The RSS target's allowance on top of maxBytesInMemory: 100 MB.
constexpr int64_t kRssAllowanceBytes = 100 * 1000 * 1000;
constexpr char kTopic[] = "bench";
// "dev broker" or "Kafka": which broker the figures are of (--broker).
std::string g_broker = "dev broker";
constexpr char kCheckpointTopic[] = "bench_ckpt";

void Progress(const std::string& line) {
  fprintf(stderr, "[bench %s] %s\n",
          absl::FormatTime("%H:%M:%S", absl::Now(), absl::LocalTimeZone()).c_str(), line.c_str());
}

double Median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string ReadFirstLine(const std::string& path, absl::string_view prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, prefix)) return line;
  }
  return "";
}

std::string MachineDescription() {
  std::string cpu = ReadFirstLine("/proc/cpuinfo", "model name");
  if (const size_t colon = cpu.find(':'); colon != std::string::npos) {
    cpu = std::string(absl::StripAsciiWhitespace(cpu.substr(colon + 1)));
  }
  std::string mem = ReadFirstLine("/proc/meminfo", "MemTotal:");
  int64_t mem_kb = 0;
  sscanf(mem.c_str(), "MemTotal: %ld", &mem_kb);
  utsname u;
  uname(&u);
  return absl::StrFormat("%s, %ld cores, %.0f GiB RAM, Linux %s", cpu,
                         sysconf(_SC_NPROCESSORS_ONLN), static_cast<double>(mem_kb) / (1 << 20),
                         u.release);
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  in >> one >> five >> fifteen;
  return absl::StrFormat("%.2f / %.2f / %.2f", one, five, fifteen);
}

struct TopicRange {
  std::map<int32_t, int64_t> start;
  std::map<int32_t, int64_t> end;
  int64_t records = 0;
};

// Produces `records` and checks that the broker keeps all of them (the dev
// broker's retention cap must be lifted, or consumers would read a tail).
absl::StatusOr<TopicRange> Preload(const std::string& bootstrap, const std::string& topic,
                                   int partitions, int64_t records, const WikiRowOptions& rows) {
  PreloadOptions preload;
  preload.bootstrap = bootstrap;
  preload.topic = topic;
  preload.partitions = partitions;
  preload.records = records;
  preload.rows = rows;
  SLUICE_ASSIGN_OR_RETURN(PreloadResult produced, PreloadTopic(preload));
  Progress(absl::StrFormat(
      "produced %d records (%d malformed, %s) to %s in %s: %s records/s", produced.records,
      produced.malformed, FormatMiB(produced.bytes), topic, absl::FormatDuration(produced.elapsed),
      FormatCount(produced.records / absl::ToDoubleSeconds(produced.elapsed))));
  SLUICE_ASSIGN_OR_RETURN(auto metadata,
                          kafka::MetadataClient::Create({{"bootstrap.servers", bootstrap}}));
  SLUICE_ASSIGN_OR_RETURN(auto marks, metadata->QueryAllWatermarks(topic, absl::Seconds(30)));
  TopicRange range;
  for (const auto& [p, m] : marks) {
    range.start[p] = m.earliest;
    range.end[p] = m.latest;
    range.records += m.latest - m.earliest;
  }
  if (range.records != records) {
    return absl::FailedPreconditionError(
        absl::StrCat(topic, " holds ", range.records, " readable records after producing ", records,
                     ": is the dev broker's retention cap lifted? (see tools/README.md)"));
  }
  return range;
}

struct Figures {
  std::vector<double> kcat, kcat_tuned, raw;
  std::vector<SluiceRunResult> off, on;
  // Rollup off with the datasource's Iceberg table on (the other published
  // form: the supervisor writes Parquet and commits a snapshot per sequence).
  std::vector<SluiceRunResult> iceberg;
  // Rollup off with taskCount 1, 2, 4 on the two workers (one round).
  std::vector<std::pair<int, SluiceRunResult>> scaling;
  // Rollup off, taskCount 4 on one worker with --capacity=4
  // --ingestion_memory_bytes=maxBytesInMemory (empty: not run).
  std::vector<SluiceRunResult> one_worker;
  std::vector<double> raw_cpu_per_record_ns;
  std::vector<double> kcat_cpu_per_record_ns;
  // The dev broker's CPU per record while it served each baseline.
  std::vector<double> kcat_broker_cpu_per_record_ns;
  std::vector<double> raw_broker_cpu_per_record_ns;
  // The librdkafka comparison (E2eBenchOptions::compare_bin_dir): index 0 is
  // the default build's library, 1 the compared one. raw_consume in its own
  // process (records/s, CPU per record) and the sluice runs of each.
  struct Library {
    std::vector<double> raw, raw_cpu_per_record_ns;
    std::vector<SluiceRunResult> off, on;
  };
  Library library[2];
};

double MedianRate(const std::vector<SluiceRunResult>& runs) {
  std::vector<double> rates;
  for (const SluiceRunResult& r : runs) rates.push_back(r.RecordsPerSecond());
  return Median(rates);
}

// The run whose rate is the median (the lower middle one for an even count).
const SluiceRunResult& MedianRun(const std::vector<SluiceRunResult>& runs) {
  static const SluiceRunResult* const kNone = new SluiceRunResult();
  if (runs.empty()) return *kNone;  // a part that did not run: every figure n/a
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return runs[a].RecordsPerSecond() < runs[b].RecordsPerSecond();
  });
  return runs[order[(order.size() - 1) / 2]];
}

absl::Status MeasureBaselines(const E2eBenchOptions& options, const BenchCluster& processes,
                              const TopicRange& range, Figures* f) {
  const std::string bootstrap = processes.bootstrap_servers();
  auto broker_cpu = [&]() { return ProcessCpu(processes.BrokerPid()); };
  const std::vector<std::string> kcat_tuning = {"-X", "fetch.wait.max.ms=10",
                                                "-X", "queued.min.messages=1000000",
                                                "-X", "queued.max.messages.kbytes=1048576",
                                                "-X", "fetch.max.bytes=104857600",
                                                "-X", "max.partition.fetch.bytes=10485760"};
  SLUICE_ASSIGN_OR_RETURN(const absl::Duration broker_before_kcat, broker_cpu());
  SLUICE_ASSIGN_OR_RETURN(ConsumeResult kcat,
                          RunKcat(options.kcat_binary, bootstrap, kTopic, {}, range.records));
  SLUICE_ASSIGN_OR_RETURN(const absl::Duration broker_after_kcat, broker_cpu());
  f->kcat.push_back(kcat.RecordsPerSecond());
  f->kcat_cpu_per_record_ns.push_back(CpuNanosPerRecord(kcat.cpu, kcat.records));
  f->kcat_broker_cpu_per_record_ns.push_back(
      CpuNanosPerRecord(broker_after_kcat - broker_before_kcat, kcat.records));
  Progress(absl::StrFormat("kcat: %s records/s; CPU per record: kcat %.0f ns, %s %.0f ns",
                           FormatCount(kcat.RecordsPerSecond()), f->kcat_cpu_per_record_ns.back(),
                           g_broker, f->kcat_broker_cpu_per_record_ns.back()));
  SLUICE_ASSIGN_OR_RETURN(ConsumeResult tuned, RunKcat(options.kcat_binary, bootstrap, kTopic,
                                                       kcat_tuning, range.records));
  f->kcat_tuned.push_back(tuned.RecordsPerSecond());
  Progress(absl::StrCat("kcat tuned: ", FormatCount(tuned.RecordsPerSecond()), " records/s"));
  SLUICE_ASSIGN_OR_RETURN(const absl::Duration broker_before_raw, broker_cpu());
  SLUICE_ASSIGN_OR_RETURN(ConsumeResult raw,
                          ConsumeRaw(bootstrap, kTopic, range.start, range.end, absl::Minutes(5)));
  SLUICE_ASSIGN_OR_RETURN(const absl::Duration broker_after_raw, broker_cpu());
  if (raw.records != range.records) {
    return absl::DataLossError(
        absl::StrCat("the raw consumer read ", raw.records, " of ", range.records, " records"));
  }
  f->raw.push_back(raw.RecordsPerSecond());
  f->raw_cpu_per_record_ns.push_back(CpuNanosPerRecord(raw.cpu, raw.records));
  f->raw_broker_cpu_per_record_ns.push_back(
      CpuNanosPerRecord(broker_after_raw - broker_before_raw, raw.records));
  Progress(absl::StrFormat(
      "raw librdkafka: %s records/s; CPU per record: consumer %.0f ns, %s %.0f ns",
      FormatCount(raw.RecordsPerSecond()), f->raw_cpu_per_record_ns.back(), g_broker,
      f->raw_broker_cpu_per_record_ns.back()));
  return absl::OkStatus();
}

// One raw_consume run of library `which` (0: the default build's, from the
// runfiles; 1: --compare_bin_dir's).
absl::Status MeasureRawProcess(const std::string& binary, const std::string& label,
                               const std::string& bootstrap, const TopicRange& range,
                               Figures::Library* into) {
  SLUICE_ASSIGN_OR_RETURN(ConsumeResult raw,
                          RunRawConsumeBinary(binary, bootstrap, kTopic, range.start, range.end));
  into->raw.push_back(raw.RecordsPerSecond());
  into->raw_cpu_per_record_ns.push_back(CpuNanosPerRecord(raw.cpu, raw.records));
  Progress(absl::StrFormat("raw_consume, %s: %s records/s; %.0f ns CPU per record (process)",
                           label, FormatCount(raw.RecordsPerSecond()),
                           into->raw_cpu_per_record_ns.back()));
  return absl::OkStatus();
}

absl::StatusOr<SluiceRunResult> RunOnce(BenchCluster& processes, const std::string& bootstrap,
                                        const TopicRange& range, const std::string& name,
                                        SluiceRunOptions run) {
  // Fresh workers: their peak RSS is this run's.
  SLUICE_RETURN_IF_ERROR(processes.RestartWorkers());
  run.datasource = name;
  run.bootstrap = bootstrap;
  run.start_offsets = range.start;
  run.end_offsets = range.end;
  SLUICE_ASSIGN_OR_RETURN(SluiceRunResult result, RunSluice(processes, run));
  int64_t rss = 0;
  for (int64_t r : result.worker_peak_rss_bytes) rss = std::max(rss, r);
  Progress(
      absl::StrFormat("%s: %d records (%d rows -> %d after rollup, %d unparseable) in %.2f s = "
                      "%s records/s; "
                      "%d sequences, %d segments; last commit %d ms after all was read; worker "
                      "VmHWM %s; CPU per record: workers %.0f ns, %s %.0f ns",
                      name, result.records, result.rows, result.segment_rows, result.unparseable,
                      (result.last_commit_ms - result.task_start_ms) / 1000.0,
                      FormatCount(result.RecordsPerSecond()), result.sequences, result.segments,
                      result.last_commit_ms - result.all_read_seen_ms, FormatMiB(rss),
                      result.WorkerCpuPerRecordNs(), g_broker, result.BrokerCpuPerRecordNs()));
  return result;
}

std::string HistogramRow(const std::string& what, const PromHistogram& h, const std::string& target,
                         const std::string& verdict) {
  return absl::StrCat("| ", what, " | ", FormatSeconds(h.Quantile(0.5)), " | ",
                      FormatSeconds(h.Quantile(0.99)), " | ", FormatSeconds(h.Mean()), " | ",
                      static_cast<int64_t>(h.count), " | ", target, " | ", verdict, " |\n");
}

// The observations of several runs' histograms of one metric together
// (their bounds are the catalog's, hence equal; a run whose bounds differ is
// left out).
PromHistogram SumHistograms(const std::vector<const PromHistogram*>& parts) {
  PromHistogram sum;
  for (const PromHistogram* h : parts) {
    if (h->count == 0) continue;
    if (sum.count == 0) {
      sum = *h;
      continue;
    }
    if (h->bounds != sum.bounds) continue;
    for (size_t i = 0; i < sum.cumulative.size(); ++i) sum.cumulative[i] += h->cumulative[i];
    sum.sum += h->sum;
    sum.count += h->count;
  }
  return sum;
}

// A 1-replica, rollup-off run of the throughput topic with the options'
// segment, memory and consumer settings.
SluiceRunOptions ThroughputRun(const E2eBenchOptions& options, int task_count) {
  SluiceRunOptions run;
  run.topic = kTopic;
  run.task_count = task_count;
  run.max_rows_per_segment = options.max_rows_per_segment;
  run.max_bytes_in_memory = options.max_bytes_in_memory;
  run.consumer_properties = options.consumer_properties;
  return run;
}

std::string Render(const E2eBenchOptions& options, const Figures& f,
                   const SluiceRunResult& checkpoint_run, const FsyncLatency& fsync,
                   const std::string& started, const std::string& load_before,
                   const std::string& load_after) {
  const double kcat = Median(f.kcat);
  const double kcat_tuned = Median(f.kcat_tuned);
  const double raw = Median(f.raw);
  const double off = MedianRate(f.off);
  const double on = MedianRate(f.on);
  const int64_t max_bytes =
      options.max_bytes_in_memory > 0 ? options.max_bytes_in_memory : kSpecDefaultMaxBytesInMemory;

  std::string out = absl::StrCat(E2eSectionHeading(options.broker), "\n\n");
  absl::StrAppend(&out,
                  "Written by `bench/e2e/run.sh` (`//bench/e2e:e2e_bench`); do not edit by "
                  "hand.\n\n",
                  "- command: `", options.command, "`\n", "- machine: ", MachineDescription(), "\n",
                  "- date: ", started, "; git ",
                  options.git_revision.empty() ? "?" : options.git_revision, "\n",
                  "- load average (1/5/15 min) before: ", load_before, "; after: ", load_after,
                  " (the machine is shared; every ratio below compares figures of the same "
                  "run)\n",
                  absl::StrFormat("- data: %d wiki-edit-like JSON records (~214 B, %.2f%% "
                                  "malformed) on %d "
                                  "partitions of %s; %d "
                                  "round(s), medians shown\n",
                                  options.records, options.malformed_fraction * 100,
                                  options.partitions,
                                  options.broker == "real"
                                      ? "Apache Kafka 4.4.0 (1 node, KRaft, tools/kafka)"
                                      : "the dev broker (1 mock broker)",
                                  options.repetitions),
                  "- processes: tools/cluster's ProcessCluster on loopback (", g_broker,
                  ", supervisor, 2 workers; the workers restart before each sluice run)\n",
                  "- sluice runs: taskCount 1, replicas 1, maxRowsPerSegment ",
                  options.max_rows_per_segment, ", maxBytesInMemory ", max_bytes,
                  ", HOUR segments; rollup on = queryGranularity MINUTE and the 4 "
                  "low-cardinality dimensions "
                  "(channel, namespace, countryName, isRobot; page and user would make "
                  "every row unique). Rate = records / (task "
                  "start_time_ms -> committed_at_ms of the last sequence in the commit "
                  "log); the last "
                  "sequence is closed by suspending the supervisor once the task has read "
                  "everything\n\n");

  if (!options.consumer_properties.empty()) {
    absl::StrAppend(&out, "- extra consumer properties of the sluice specs: `",
                    absl::StrJoin(options.consumer_properties, ",", absl::PairFormatter("=")),
                    "`\n\n");
  }
  absl::StrAppend(&out, "### Throughput\n\n");
  MarkdownTable throughput(
      {"reader", "records/s", "vs kcat", "vs kcat tuned", "vs raw librdkafka", "notes"});
  throughput.AddRow({"`kcat -C -e -o beginning -q > /dev/null`", FormatCount(kcat), "1.00x",
                     FormatRatio(kcat / kcat_tuned), FormatRatio(kcat / raw),
                     absl::StrFormat("%.0f ns CPU/record; %s %.0f ns/record",
                                     Median(f.kcat_cpu_per_record_ns), g_broker,
                                     Median(f.kcat_broker_cpu_per_record_ns))});
  throughput.AddRow({"kcat, dev broker fetch tuning (`-X fetch.wait.max.ms=10 ...`)",
                     FormatCount(kcat_tuned), FormatRatio(kcat_tuned / kcat), "1.00x",
                     FormatRatio(kcat_tuned / raw), ""});
  throughput.AddRow({"raw librdkafka, `rd_kafka_consume_batch_queue`, fetch tuning",
                     FormatCount(raw), FormatRatio(raw / kcat), FormatRatio(raw / kcat_tuned),
                     "1.00x",
                     absl::StrFormat("%.0f ns CPU/record; %s %.0f ns/record",
                                     Median(f.raw_cpu_per_record_ns), g_broker,
                                     Median(f.raw_broker_cpu_per_record_ns))});
  auto sluice_row = [&](const char* what, double rate, const std::vector<SluiceRunResult>& runs) {
    if (runs.empty()) return;
    const SluiceRunResult& r = MedianRun(runs);
    throughput.AddRow({what, FormatCount(rate), FormatRatio(rate / kcat),
                       FormatRatio(rate / kcat_tuned), FormatRatio(rate / raw),
                       absl::StrFormat("%.0f ns CPU/record (workers); %s %.0f "
                                       "ns/record; %d rows in %d segments, %d sequences; "
                                       "tail after last read: %d ms",
                                       r.WorkerCpuPerRecordNs(), g_broker,
                                       r.BrokerCpuPerRecordNs(),
                                       r.segment_rows, r.segments, r.sequences,
                                       r.last_commit_ms - r.all_read_seen_ms)});
  };
  sluice_row("sluice end to end, rollup off", off, f.off);
  sluice_row("sluice end to end, rollup on (MINUTE, 4 dimensions)", on, f.on);
  sluice_row("sluice end to end, rollup off, into an Iceberg table (Parquet + a snapshot per "
             "sequence)",
             MedianRate(f.iceberg), f.iceberg);
  absl::StrAppend(&out, throughput.Render(), "\n");
  if (!f.iceberg.empty() && !f.off.empty()) {
    const SluiceRunResult& with_table = MedianRun(f.iceberg);
    const SluiceRunResult& native = MedianRun(f.off);
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "Both published forms, rollup off (medians): the Iceberg table's run at %s the "
            "records/s of segments only and %s the workers' CPU per record (the Parquet "
            "conversion runs in the supervisor); publish per sequence p99 %.0f ms (segments "
            "only %.0f ms), the supervisor's snapshot staging p99 %.0f ms.\n\n",
            FormatRatio(MedianRate(f.iceberg) / MedianRate(f.off)),
            FormatRatio(with_table.WorkerCpuPerRecordNs() / native.WorkerCpuPerRecordNs()),
            1000 * with_table.task_publish_seconds.Quantile(0.99),
            1000 * native.task_publish_seconds.Quantile(0.99),
            1000 * with_table.supervisor_iceberg_stage_seconds.Quantile(0.99)));
  }

  if (!options.compare_bin_dir.empty()) {
    const bool libraries = options.compare_librdkafka;
    const std::string labels[2] = {
        libraries ? kafka::LibrdkafkaDescription() + " (the default build)"
                  : absl::StrCat("git ", options.git_revision.empty() ? "?" : options.git_revision,
                                 " (this build)"),
        options.compare_label};
    const char* set = libraries ? "library" : "build";
    if (libraries) {
      absl::StrAppend(
          &out, "### librdkafka: ", labels[0], " vs ", labels[1], "\n\n",
          "The same sources built twice: the default build, and the same object files linked "
          "with the other library (`bench/e2e/run.sh --compare_librdkafka`).");
    } else {
      absl::StrAppend(&out, "### Two builds: ", labels[0], " vs ", labels[1], "\n\n",
                      "Two builds of sluice (`--compare_bin_dir` held the other one's "
                      "sluice-supervisor, sluice-task and raw_consume).");
    }
    absl::StrAppend(
        &out,
        " A second supervisor and 2 workers ran those binaries on the same broker and topic; "
        "every round ran both ",
        libraries ? "libraries" : "builds",
        "' raw consumer (`//bench/e2e:raw_consume`, the raw librdkafka baseline in a process of "
        "its own: elapsed time and CPU of the whole process, as for kcat) and sluice runs, "
        "alternating which ",
        set, " went first. Medians over the rounds; the kcat figure is the one above.\n\n");
    MarkdownTable libs({set, "reader", "records/s", "vs kcat",
                        absl::StrCat("vs raw (same ", set, ")"), "CPU per record",
                        absl::StrCat("CPU vs raw (same ", set, ")")});
    for (int l = 0; l < 2; ++l) {
      const Figures::Library& lib = f.library[l];
      const double lib_raw = Median(lib.raw);
      const double lib_raw_cpu = Median(lib.raw_cpu_per_record_ns);
      libs.AddRow({labels[l], "raw librdkafka (`raw_consume`), fetch tuning", FormatCount(lib_raw),
                   FormatRatio(lib_raw / kcat), "1.00x", absl::StrFormat("%.0f ns", lib_raw_cpu),
                   "1.00x"});
      auto row = [&](const char* what, const std::vector<SluiceRunResult>& runs) {
        if (runs.empty()) return;
        const SluiceRunResult& r = MedianRun(runs);
        const double rate = MedianRate(runs);
        libs.AddRow({labels[l], what, FormatCount(rate), FormatRatio(rate / kcat),
                     FormatRatio(rate / lib_raw),
                     absl::StrFormat("%.0f ns (workers)", r.WorkerCpuPerRecordNs()),
                     FormatRatio(r.WorkerCpuPerRecordNs() / lib_raw_cpu)});
      };
      row("sluice end to end, rollup off", lib.off);
      row("sluice end to end, rollup on", lib.on);
    }
    absl::StrAppend(&out, libs.Render(), "\n");
    auto ratio_line = [&](const char* what, double first, double second) {
      return absl::StrFormat("%s %s", what, FormatRatio(first / second));
    };
    const Figures::Library& a = f.library[0];
    const Figures::Library& b = f.library[1];
    absl::StrAppend(
        &out, labels[0], " / ", labels[1], ": ",
        absl::StrJoin(
            {ratio_line("raw records/s", Median(a.raw), Median(b.raw)),
             ratio_line("raw CPU per record", Median(a.raw_cpu_per_record_ns),
                        Median(b.raw_cpu_per_record_ns)),
             ratio_line("rollup off records/s", MedianRate(a.off), MedianRate(b.off)),
             ratio_line("rollup off worker CPU per record", MedianRun(a.off).WorkerCpuPerRecordNs(),
                        MedianRun(b.off).WorkerCpuPerRecordNs()),
             ratio_line("rollup on records/s", MedianRate(a.on), MedianRate(b.on)),
             ratio_line("rollup on worker CPU per record", MedianRun(a.on).WorkerCpuPerRecordNs(),
                        MedianRun(b.on).WorkerCpuPerRecordNs())},
            "; "),
        " (records/s: above 1 is faster; CPU: below 1 is cheaper).\n\n");
  }

  const double raw_cpu = Median(f.raw_cpu_per_record_ns);
  if (!f.scaling.empty() || !f.one_worker.empty()) {
    absl::StrAppend(
        &out, "### Scaling\n\n",
        "Rollup off on the same topic, one round each: taskCount 1, 2 and 4 (the ", options.partitions,
        " partitions shared out) on the 2 workers; then taskCount 4 on **one** worker started "
        "with `--capacity=4 --ingestion_memory_bytes=", max_bytes,
        "` (the four tasks share one task's maxBytesInMemory).\n\n");
    MarkdownTable scaling({"tasks", "workers", "records/s", "vs kcat", "worker CPU/record",
                           "vs raw librdkafka CPU/record", "worker VmHWM (highest)"});
    auto scaling_row = [&](int tasks, int workers, const SluiceRunResult& r) {
      int64_t rss = 0;
      for (int64_t v : r.worker_peak_rss_bytes) rss = std::max(rss, v);
      scaling.AddRow({absl::StrCat(tasks), absl::StrCat(workers), FormatCount(r.RecordsPerSecond()),
                      FormatRatio(r.RecordsPerSecond() / kcat),
                      absl::StrFormat("%.0f ns", r.WorkerCpuPerRecordNs()),
                      raw_cpu > 0 ? FormatRatio(r.WorkerCpuPerRecordNs() / raw_cpu) : "n/a",
                      FormatMiB(rss)});
    };
    for (const auto& [tasks, r] : f.scaling) scaling_row(tasks, 2, r);
    for (const SluiceRunResult& r : f.one_worker) scaling_row(4, 1, r);
    absl::StrAppend(&out, scaling.Render(), "\n");
  }

  absl::StrAppend(
      &out, "### Latency\n\n",
      absl::StrFormat("Checkpoint rounds: %d records on topic `%s`, taskCount "
                      "1, replicas 2 (2 workers), "
                      "maxRowsPerSegment %d, rollup off; %d sequences "
                      "committed. Quantiles are estimated "
                      "from the services' Prometheus histograms (buckets 1, "
                      "2.5, 5, 10, 25, 50, 100 ms, "
                      "...; publish: 100 ms steps up to 1 s), as "
                      "`histogram_quantile` would; the shares at or below "
                      "10 ms (checkpoint) and 500 ms (publish) are exact.\n\n",
                      options.checkpoint_records, kCheckpointTopic,
                      options.checkpoint_max_rows_per_segment, checkpoint_run.sequences));
  absl::StrAppend(&out, "| latency | p50 | p99 | mean | count | target | result |\n",
                  "| --- | --- | --- | --- | --- | --- | --- |\n");
  // Publish per sequence, rollup off, every round's sequences: the share at
  // or below 500 ms is exact (0.5 s is a bucket bound).
  std::vector<const PromHistogram*> off_publishes;
  for (const SluiceRunResult& r : f.off) off_publishes.push_back(&r.task_publish_seconds);
  const PromHistogram publish = SumHistograms(off_publishes);
  std::string publish_verdict = "not exported";
  if (publish.count > 0) {
    const double share = publish.FractionAtOrBelow(0.5);
    publish_verdict = absl::StrFormat("%s (%.1f%% <= 500 ms)", share >= 0.99 ? "met" : "NOT met",
                                      share * 100);
  }
  const PromHistogram& round = checkpoint_run.supervisor_checkpoint_seconds;
  std::string round_verdict = "not exported";
  if (round.count > 0) {
    const double share = round.FractionAtOrBelow(0.01);
    round_verdict =
        absl::StrFormat("%s (%.1f%% <= 10 ms)", share >= 0.99 ? "met" : "NOT met", share * 100);
  }
  absl::StrAppend(
      &out, absl::StrFormat(
                "| baseline: write 4 KiB + fsync in the run directory (exact, %d samples) | "
                "%s | %s | %s | %d | | |\n",
                fsync.samples, FormatSeconds(fsync.p50_seconds), FormatSeconds(fsync.p99_seconds),
                FormatSeconds(fsync.mean_seconds), fsync.samples));
  absl::StrAppend(&out,
                  HistogramRow("checkpoint round, supervisor (request -> SetEndOffsets on both "
                               "replicas), 2 replicas",
                               round, "p99 <= 10 ms", round_verdict),
                  HistogramRow("task paused for its checkpoint (request -> end offsets), 2 "
                               "replicas",
                               checkpoint_run.task_checkpoint_seconds, "", ""),
                  HistogramRow("task read loop paused per checkpoint per replica (0 when "
                               "pauseless), 2 replicas",
                               checkpoint_run.task_checkpoint_paused_seconds, "~0", ""),
                  HistogramRow("Pause handled by a worker (parks the read loop), 2 replicas",
                               checkpoint_run.worker_pause_seconds, "", ""),
                  HistogramRow("SetEndOffsets handled by a worker (sequence file fsynced), 2 "
                               "replicas",
                               checkpoint_run.worker_set_end_offsets_seconds, "", ""),
                  HistogramRow("publish per sequence (closed -> committed), 2 replicas",
                               checkpoint_run.task_publish_seconds, "", ""),
                  HistogramRow(absl::StrCat("publish per sequence, 1 task, rollup off (",
                                            f.off.size(), " rounds)"),
                               publish, "p99 <= 500 ms", publish_verdict),
                  HistogramRow("publish per sequence, 1 task, rollup on",
                               MedianRun(f.on).task_publish_seconds, "", ""),
                  HistogramRow("intermediate persist, 1 task, rollup off",
                               MedianRun(f.off).task_persist_seconds, "", ""),
                  "\n");

  {
    const double rounds = checkpoint_run.pauseless_rounds + checkpoint_run.fallback_rounds;
    const PromHistogram& paused = checkpoint_run.task_checkpoint_paused_seconds;
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "Checkpoint rounds %s: %.0f without pausing any replica, %.0f fell back (a replica "
            "had read past the proposed end: pause-and-max, or that replica replaced); fallback "
            "share %.1f%%. Paused per checkpoint per replica: mean %s over %.0f, %.1f%% at or "
            "below 1 ms.\n\n",
            options.classic_checkpoints ? "(classic: --classic_checkpoints, every round pauses)"
                                        : "(pauseless)",
            checkpoint_run.pauseless_rounds, checkpoint_run.fallback_rounds,
            rounds > 0 ? 100.0 * checkpoint_run.fallback_rounds / rounds : 0.0,
            FormatSeconds(paused.Mean()), paused.count,
            paused.count > 0 ? 100.0 * paused.FractionAtOrBelow(0.001) : 0.0));
  }
  absl::StrAppend(&out, "### Worker memory\n\n",
                  "The bound is maxBytesInMemory + 100 MB per task a worker runs with its "
                  "own maxBytesInMemory (every run but the last), and maxBytesInMemory + 100 MB "
                  "for the worker whose four tasks share one task's (`--ingestion_memory_bytes`)."
                  "\n\n");
  MarkdownTable memory({"run", "records", "maxBytesInMemory", "tasks on the worker",
                        "worker VmHWM (peak RSS)", "bound", "result"});
  int64_t peak_over = std::numeric_limits<int64_t>::min();  // highest VmHWM - bound
  std::string peak_what;
  auto memory_row = [&](const std::string& what, const SluiceRunResult& r, int64_t records,
                        bool shared) {
    for (size_t i = 0; i < r.worker_peak_rss_bytes.size(); ++i) {
      const int64_t rss = r.worker_peak_rss_bytes[i];
      const int tasks = i < r.worker_tasks.size() ? r.worker_tasks[i] : 1;
      const int64_t bound = (shared ? 1 : tasks) * max_bytes + kRssAllowanceBytes;
      if (rss - bound > peak_over) {
        peak_over = rss - bound;
        peak_what = absl::StrCat(what, ": ", FormatMiB(rss), " vs ", FormatMiB(bound));
      }
      memory.AddRow({r.worker_peak_rss_bytes.size() > 1 ? absl::StrCat(what, ", worker ", i) : what,
                     FormatCount(records), FormatMiB(max_bytes), absl::StrCat(tasks),
                     FormatMiB(rss), FormatMiB(bound), rss <= bound ? "met" : "NOT met"});
    }
  };
  for (size_t i = 0; i < f.off.size(); ++i) {
    memory_row(absl::StrCat("rollup off, round ", i + 1), f.off[i], options.records, false);
  }
  for (size_t i = 0; i < f.on.size(); ++i) {
    memory_row(absl::StrCat("rollup on, round ", i + 1), f.on[i], options.records, false);
  }
  memory_row("2 replicas", checkpoint_run, options.checkpoint_records, false);
  for (const auto& [tasks, r] : f.scaling) {
    memory_row(absl::StrCat("scaling, ", tasks, " tasks on 2 workers"), r, options.records, false);
  }
  for (const SluiceRunResult& r : f.one_worker) {
    memory_row("4 tasks on one worker (--ingestion_memory_bytes)", r, options.records, true);
  }
  absl::StrAppend(&out, memory.Render(), "\n");

  absl::StrAppend(&out, "### Targets\n\n");
  MarkdownTable targets({"target", "measured", "result"});
  const double worst = std::min(off, on);
  targets.AddRow({"end to end >= 1.0x kcat (same run)",
                  absl::StrFormat("rollup off %s, rollup on %s", FormatRatio(off / kcat),
                                  FormatRatio(on / kcat)),
                  worst >= kcat ? "met" : "NOT met"});
  if (!f.off.empty() && raw_cpu > 0) {
    const double ratio = MedianRun(f.off).WorkerCpuPerRecordNs() / raw_cpu;
    targets.AddRow({"worker CPU per record <= 1.5x the raw librdkafka consumer's (rollup off)",
                    absl::StrFormat("%.0f ns vs %.0f ns: %s",
                                    MedianRun(f.off).WorkerCpuPerRecordNs(), raw_cpu,
                                    FormatRatio(ratio)),
                    ratio <= 1.5 ? "met" : "NOT met"});
  }
  targets.AddRow({"publish per sequence p99 <= 500 ms (1 task, rollup off)",
                  publish.count > 0 ? FormatSeconds(publish.Quantile(0.99)) : "n/a",
                  publish_verdict});
  targets.AddRow({"checkpoint round p99 <= 10 ms (2 replicas)",
                  round.count > 0 ? FormatSeconds(round.Quantile(0.99)) : "n/a", round_verdict});
  targets.AddRow({"worker RSS within its bound (Worker memory above)",
                  peak_what.empty() ? "n/a"
                                    : absl::StrCat("closest to or furthest over: ", peak_what),
                  peak_what.empty() ? "n/a" : peak_over <= 0 ? "met" : "NOT met"});
  absl::StrAppend(&out, targets.Render());
  return out;
}

}  // namespace

std::string E2eSectionHeading(const std::string& broker) {
  return broker == "dev" ? "## End to end: dev broker"
                         : absl::StrCat("## End to end: Apache Kafka ", kafka::kKafkaVersion);
}

absl::StatusOr<std::string> RunE2eBench(const E2eBenchOptions& options) {
  const std::string started =
      absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone());
  const std::string load_before = LoadAverage();
  SLUICE_RETURN_IF_ERROR(MakeDirs(options.work_dir));
  Progress(absl::StrCat("work directory ", options.work_dir));
  BenchClusterOptions cluster;
  cluster.root_dir = options.work_dir;
  cluster.workers = 2;
  cluster.classic_checkpoints = options.classic_checkpoints;
  std::unique_ptr<kafka::RealKafka> real_kafka;
  if (options.broker == "real") {
    g_broker = "Kafka";
    kafka::RealKafkaOptions k;
    k.dir = options.work_dir + "/kafka";
    k.heap = "1g";
    // Production's JIT and GC, not the tests' quick start.
    k.env = {{"KAFKA_JVM_OPTS", "-XX:+UseG1GC -XX:MaxGCPauseMillis=20"}};
    SLUICE_ASSIGN_OR_RETURN(real_kafka, kafka::RealKafka::Start(k));
    for (const char* topic : {kTopic, kCheckpointTopic}) {
      SLUICE_RETURN_IF_ERROR(real_kafka->CreateTopic(topic, options.partitions));
    }
    cluster.external_bootstrap_servers = real_kafka->bootstrap_servers();
    cluster.external_broker_pid = real_kafka->java_pid();
  } else if (options.broker == "dev") {
    cluster.topics = {absl::StrCat(kTopic, ":", options.partitions),
                      absl::StrCat(kCheckpointTopic, ":", options.partitions)};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--broker must be dev or real, not \"", options.broker, "\""));
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<BenchCluster> processes, BenchCluster::Start(cluster));
  const std::string bootstrap = processes->bootstrap_servers();
  Progress(absl::StrCat(g_broker, " at ", bootstrap, ", supervisor and 2 workers up"));
  // The librdkafka comparison: a second supervisor and 2 workers running the
  // other build's binaries on the same broker.
  std::unique_ptr<BenchCluster> compared;
  std::string raw_binaries[2];
  if (!options.compare_bin_dir.empty()) {
    if (options.broker != "real") {
      return absl::InvalidArgumentError(
          "--compare_bin_dir needs --broker=real (the comparison's workers would read the dev "
          "broker with real Kafka's consumer settings)");
    }
    SLUICE_ASSIGN_OR_RETURN(raw_binaries[0], testing::FindRunfile("bench/e2e/raw_consume"));
    raw_binaries[1] = options.compare_bin_dir + "/raw_consume";
    BenchClusterOptions other = cluster;
    other.root_dir = options.work_dir + "/compare";
    other.supervisor_binary = options.compare_bin_dir + "/sluice-supervisor";
    other.task_binary = options.compare_bin_dir + "/sluice-task";
    SLUICE_ASSIGN_OR_RETURN(compared, BenchCluster::Start(other));
    Progress(absl::StrCat("comparison (", options.compare_label, ", ", options.compare_bin_dir,
                          "): supervisor and 2 workers up"));
  }

  WikiRowOptions rows;
  rows.seed = options.seed;
  rows.malformed_fraction = options.malformed_fraction;
  SLUICE_ASSIGN_OR_RETURN(TopicRange range,
                          Preload(bootstrap, kTopic, options.partitions, options.records, rows));
  auto enabled = [&](const char* part) {
    return options.only.empty() || options.only.count(part) > 0;
  };
  TopicRange checkpoint_range;
  WikiRowOptions checkpoint_rows = rows;
  checkpoint_rows.seed = options.seed + 1;
  if (enabled("replicas") && options.checkpoint_live_rate <= 0) {
    SLUICE_ASSIGN_OR_RETURN(checkpoint_range,
                            Preload(bootstrap, kCheckpointTopic, options.partitions,
                                    options.checkpoint_records, checkpoint_rows));
  } else if (enabled("replicas")) {
    // Live: the topic is empty; record i goes to partition i % partitions.
    for (int p = 0; p < options.partitions; ++p) {
      checkpoint_range.start[p] = 0;
      checkpoint_range.end[p] = options.checkpoint_records / options.partitions +
                                (p < options.checkpoint_records % options.partitions ? 1 : 0);
    }
    checkpoint_range.records = options.checkpoint_records;
  }

  Figures f;
  for (int round = 1; round <= options.repetitions; ++round) {
    Progress(absl::StrCat("round ", round, " of ", options.repetitions));
    if (enabled("baselines"))
      SLUICE_RETURN_IF_ERROR(MeasureBaselines(options, *processes, range, &f));
    // The comparison's runs, in an order that alternates between rounds so
    // that neither library always runs first.
    std::vector<int> order = {0, 1};
    if (round % 2 == 0) std::swap(order[0], order[1]);
    BenchCluster* const sets[2] = {processes.get(), compared.get()};
    const std::string set_labels[2] = {kafka::LibrdkafkaDescription(), options.compare_label};
    // The default library's run is also the round's run of the main table
    // (`main_runs`).
    auto compare = [&](const std::string& what, const SluiceRunOptions& run,
                       std::vector<SluiceRunResult> Figures::Library::*into,
                       std::vector<SluiceRunResult>* main_runs) -> absl::Status {
      for (int l : order) {
        SLUICE_ASSIGN_OR_RETURN(
            SluiceRunResult r,
            RunOnce(*sets[l], bootstrap, range,
                    l == 0 ? absl::StrCat(what, "_", round) : absl::StrCat(what, "_compared_", round),
                    run));
        Progress(absl::StrCat("  (that was ", set_labels[l], ")"));
        if (l == 0) main_runs->push_back(r);
        (f.library[l].*into).push_back(std::move(r));
      }
      return absl::OkStatus();
    };
    if (compared != nullptr && enabled("baselines")) {
      for (int l : order) {
        SLUICE_RETURN_IF_ERROR(
            MeasureRawProcess(raw_binaries[l], set_labels[l], bootstrap, range, &f.library[l]));
      }
    }
    SluiceRunOptions run = ThroughputRun(options, /*task_count=*/1);
    if (compared != nullptr && enabled("off")) {
      SLUICE_RETURN_IF_ERROR(compare("rollup_off", run, &Figures::Library::off, &f.off));
    } else if (enabled("off")) {
      SLUICE_ASSIGN_OR_RETURN(
          SluiceRunResult off,
          RunOnce(*processes, bootstrap, range, absl::StrCat("rollup_off_", round), run));
      f.off.push_back(std::move(off));
    }
    if (enabled("iceberg")) {
      SluiceRunOptions iceberg = run;
      iceberg.iceberg_table = true;
      SLUICE_ASSIGN_OR_RETURN(
          SluiceRunResult with_table,
          RunOnce(*processes, bootstrap, range, absl::StrCat("iceberg_off_", round), iceberg));
      f.iceberg.push_back(with_table);
      if (!f.off.empty() && f.off.back().RecordsPerSecond() > 0) {
        Progress(absl::StrFormat(
            "round %d, rollup off: Iceberg table / native segments = %.2fx records/s, "
            "worker CPU per record %.2fx",
            round, with_table.RecordsPerSecond() / f.off.back().RecordsPerSecond(),
            with_table.WorkerCpuPerRecordNs() / f.off.back().WorkerCpuPerRecordNs()));
      }
      Progress(absl::StrFormat(
          "round %d, Iceberg: publish per sequence p99 %.0f ms (native %.0f ms), snapshot "
          "staging p99 %.0f ms, publish transaction p99 %.1f ms (native %.1f ms)",
          round, 1000 * with_table.task_publish_seconds.Quantile(0.99),
          f.off.empty() ? 0.0 : 1000 * f.off.back().task_publish_seconds.Quantile(0.99),
          1000 * with_table.supervisor_iceberg_stage_seconds.Quantile(0.99),
          1000 * with_table.supervisor_publish_transaction_seconds.Quantile(0.99),
          f.off.empty() ? 0.0
                        : 1000 * f.off.back().supervisor_publish_transaction_seconds.Quantile(0.99)));
    }
    // Rollup merges rows only when dimension values repeat: page and user
    // (200k and 30k values) make nearly every row unique, so this run keeps
    // the four low-cardinality dimensions, as a rollup datasource would.
    run.rollup = true;
    run.query_granularity = "MINUTE";
    run.dimensions = {"channel", "namespace", "countryName", "isRobot"};
    if (compared != nullptr && enabled("on")) {
      SLUICE_RETURN_IF_ERROR(compare("rollup_on", run, &Figures::Library::on, &f.on));
    } else if (enabled("on")) {
      SLUICE_ASSIGN_OR_RETURN(SluiceRunResult on, RunOnce(*processes, bootstrap, range,
                                                          absl::StrCat("rollup_on_", round), run));
      f.on.push_back(std::move(on));
    }
  }
  if (compared != nullptr) {
    if (absl::Status stopped = compared->Stop(); !stopped.ok()) {
      Progress(absl::StrCat("stopping the comparison's processes: ", stopped.ToString()));
    }
    compared.reset();
  }

  if (enabled("scaling")) {
    Progress("scaling: rollup off with 1, 2 and 4 tasks");
    for (int tasks : {1, 2, 4}) {
      SLUICE_ASSIGN_OR_RETURN(
          SluiceRunResult result,
          RunOnce(*processes, bootstrap, range, absl::StrCat("scaling_", tasks),
                  ThroughputRun(options, tasks)));
      f.scaling.emplace_back(tasks, std::move(result));
    }
  }

  SluiceRunResult checkpoint_run;
  if (enabled("replicas")) {
    SluiceRunOptions checkpoints;
    checkpoints.topic = kCheckpointTopic;
    checkpoints.replicas = 2;
    checkpoints.max_rows_per_segment = options.checkpoint_max_rows_per_segment;
    checkpoints.max_bytes_in_memory = options.max_bytes_in_memory;
    checkpoints.consumer_properties = options.consumer_properties;
    std::thread live;
    absl::Status live_status;
    if (options.checkpoint_live_rate > 0) {
      PreloadOptions producer;
      producer.bootstrap = bootstrap;
      producer.topic = kCheckpointTopic;
      producer.partitions = options.partitions;
      producer.records = options.checkpoint_records;
      producer.rows = checkpoint_rows;
      producer.records_per_second = options.checkpoint_live_rate;
      checkpoints.after_submit = [&live, &live_status, producer] {
        Progress(absl::StrFormat("producing %d records live at %.0f records/s", producer.records,
                                 producer.records_per_second));
        live = std::thread([&live_status, producer] {
          absl::StatusOr<PreloadResult> produced = PreloadTopic(producer);
          live_status = produced.status();
        });
      };
    }
    absl::StatusOr<SluiceRunResult> replicas_run =
        RunOnce(*processes, bootstrap, checkpoint_range, "replicas_2", checkpoints);
    if (live.joinable()) live.join();
    SLUICE_RETURN_IF_ERROR(live_status);
    SLUICE_ASSIGN_OR_RETURN(checkpoint_run, std::move(replicas_run));
  }

  if (absl::Status stopped = processes->Stop(); !stopped.ok()) {
    Progress(absl::StrCat("stopping the processes: ", stopped.ToString()));
  }
  processes.reset();

  if (enabled("one_worker")) {
    // Four tasks on one worker whose ingestion memory is one task's
    // maxBytesInMemory: the worker's bound is one task's.
    const int64_t max_bytes = options.max_bytes_in_memory > 0 ? options.max_bytes_in_memory
                                                              : kSpecDefaultMaxBytesInMemory;
    BenchClusterOptions one = cluster;
    one.root_dir = options.work_dir + "/one_worker";
    one.workers = 1;
    one.worker_flags = {"--capacity=4", absl::StrCat("--ingestion_memory_bytes=", max_bytes)};
    Progress("one worker, 4 tasks, --ingestion_memory_bytes=maxBytesInMemory");
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<BenchCluster> single, BenchCluster::Start(one));
    const std::string single_bootstrap = single->bootstrap_servers();
    TopicRange single_range = range;
    if (options.broker == "dev") {
      SLUICE_ASSIGN_OR_RETURN(single_range, Preload(single_bootstrap, kTopic, options.partitions,
                                                    options.records, rows));
    }
    absl::StatusOr<SluiceRunResult> result = RunOnce(
        *single, single_bootstrap, single_range, "one_worker_4_tasks", ThroughputRun(options, 4));
    if (absl::Status stopped = single->Stop(); !stopped.ok()) {
      Progress(absl::StrCat("stopping the one-worker cluster: ", stopped.ToString()));
    }
    SLUICE_RETURN_IF_ERROR(result.status());
    f.one_worker.push_back(*std::move(result));
  }
  SLUICE_ASSIGN_OR_RETURN(const FsyncLatency fsync, MeasureFsync(options.work_dir, 200));
  Progress(absl::StrCat("write 4 KiB + fsync: p50 ", FormatSeconds(fsync.p50_seconds), ", p99 ",
                        FormatSeconds(fsync.p99_seconds)));
  return Render(options, f, checkpoint_run, fsync, started, load_before, LoadAverage());
}

}  // namespace bench
}  // namespace sluice
