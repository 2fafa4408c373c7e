// Google Benchmark harness for the segment kernels, on wiki-edit-like rows.
//
//   bazel run -c opt //bench:segment_bench
//
// Every kernel is reported in rows/s (items_per_second) or bytes/s, next to
// baselines measured in the same run, so results read as ratios:
//   parse        vs  simdjson on-demand iterating every field of the records
//   index add    vs  copying the records (memcpy)
//   persist      vs  writing + fsyncing the same number of bytes
//   merge+write  vs  std::sort of one 64-bit key per row
//   read         vs  the same sort baseline
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "common/local_deep_storage.h"
#include "absl/strings/str_cat.h"
#include "tools/produce/wiki_rows.h"
#include "common/segment/file_io.h"
#include "common/segment/incremental_index.h"
#include "common/segment/row_parser.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/spill.h"
#include "iceberg/table_metadata.h"
#include "supervisor/iceberg/iceberg_commit.h"

namespace sluice {
namespace bench {
namespace {

using segment::IncrementalIndex;
using segment::InputRow;

constexpr size_t kRecords = 200000;
// One hour of segment granularity, starting where the generator starts.
const segment::Interval kInterval{1796004000000, 1796004000000 + 3600000};

const std::vector<std::string>& Records() {
  static const std::vector<std::string>* records = [] {
    WikiRowOptions options;
    options.mean_step_ms = 8;  // 200k records span ~27 minutes
    return new std::vector<std::string>(WikiRecords(kRecords, options));
  }();
  return *records;
}

size_t TotalBytes(const std::vector<std::string>& records) {
  size_t n = 0;
  for (const std::string& r : records) n += r.size();
  return n;
}

// Parsed rows that own their strings (InputRow views point into them).
struct OwnedRows {
  std::vector<std::vector<std::string>> dims;
  std::vector<InputRow> rows;
};

// The wiki schema without its two high-cardinality dimensions (page, user):
// rows per minute merge heavily under rollup.
segment::Schema LowCardinalitySchema() {
  segment::Schema s = WikiSchema(true, Granularity(Granularity::Unit::kMinute));
  s.dimensions = {"channel", "namespace", "countryName", "isRobot"};
  return s;
}

OwnedRows* ParseAll(const segment::Schema& schema) {
  auto* out = new OwnedRows;
  auto parser = segment::RowParser::Create(schema);
  InputRow row;
  out->dims.reserve(kRecords);
  for (const std::string& r : Records()) {
    if (!(*parser)->Parse(r, &row).ok()) std::abort();
    std::vector<std::string> values;
    for (const auto& d : row.dims) values.emplace_back(d.text);
    out->dims.push_back(std::move(values));
    out->rows.push_back(row);
  }
  for (size_t i = 0; i < out->rows.size(); ++i) {
    for (size_t d = 0; d < out->rows[i].dims.size(); ++d) out->rows[i].dims[d].text = out->dims[i][d];
  }
  return out;
}

const OwnedRows& ParsedLowCardinality() {
  static const OwnedRows* parsed = ParseAll(LowCardinalitySchema());
  return *parsed;
}

const OwnedRows& Parsed() {
  static const OwnedRows* parsed = [] {
    auto* out = new OwnedRows;
    auto parser = segment::RowParser::Create(WikiSchema(true));
    InputRow row;
    out->dims.reserve(kRecords);
    for (const std::string& r : Records()) {
      if (!(*parser)->Parse(r, &row).ok()) std::abort();
      std::vector<std::string> values;
      for (const auto& d : row.dims) values.emplace_back(d.text);
      out->dims.push_back(std::move(values));
      out->rows.push_back(row);
    }
    for (size_t i = 0; i < out->rows.size(); ++i) {
      for (size_t d = 0; d < out->rows[i].dims.size(); ++d) out->rows[i].dims[d].text = out->dims[i][d];
    }
    return out;
  }();
  return *parsed;
}

// Minor page faults of the process so far (fresh memory is costly here).
long MinorFaults() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

std::string BenchDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/sluice-bench-",
                                       ::getpid(), "-", name);
  mkdir(dir.c_str(), 0755);
  return dir;
}

void RemoveDir(const std::string& dir) {
  auto spills = segment::ListSpills(dir);
  if (spills.ok()) {
    for (const auto& s : *spills) (void)segment::RemoveSpill(s.path);
  }
  ::unlink((dir + "/segment").c_str());
  ::unlink((dir + "/baseline").c_str());
  ::rmdir(dir.c_str());
}

// ---- parsing ---------------------------------------------------------------

void BM_Baseline_SimdjsonIterate(benchmark::State& state) {
  const auto& records = Records();
  simdjson::ondemand::parser parser;
  std::vector<char> buffer;
  size_t sink = 0;
  for (auto _ : state) {
    for (const std::string& r : records) {
      if (buffer.size() < r.size() + simdjson::SIMDJSON_PADDING) {
        buffer.resize(r.size() + simdjson::SIMDJSON_PADDING);
      }
      std::memcpy(buffer.data(), r.data(), r.size());
      auto doc = parser.iterate(buffer.data(), r.size(), buffer.size());
      for (auto field : doc.get_object()) {
        std::string_view key = field.unescaped_key().value_unsafe();
        sink += key.size();
        auto value = field.value();
        switch (value.type().value_unsafe()) {
          case simdjson::ondemand::json_type::string:
            sink += value.get_string().value_unsafe().size();
            break;
          case simdjson::ondemand::json_type::number:
            sink += static_cast<size_t>(value.get_double().value_unsafe());
            break;
          case simdjson::ondemand::json_type::boolean:
            sink += value.get_bool().value_unsafe();
            break;
          default:
            break;
        }
      }
    }
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(state.iterations() * records.size());
  state.SetBytesProcessed(state.iterations() * TotalBytes(records));
}
BENCHMARK(BM_Baseline_SimdjsonIterate)->Unit(benchmark::kMillisecond);

void BM_Parse(benchmark::State& state) {
  const auto& records = Records();
  auto parser = segment::RowParser::Create(WikiSchema(true));
  InputRow row;
  size_t failed = 0;
  for (auto _ : state) {
    for (const std::string& r : records) failed += !(*parser)->Parse(r, &row).ok();
  }
  if (failed > 0) state.SkipWithError("parse errors");
  state.SetItemsProcessed(state.iterations() * records.size());
  state.SetBytesProcessed(state.iterations() * TotalBytes(records));
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);

// ---- index -------------------------------------------------------------------

void BM_Baseline_Memcpy(benchmark::State& state) {
  const auto& records = Records();
  std::string buffer(TotalBytes(records), '\0');
  for (auto _ : state) {
    size_t at = 0;
    for (const std::string& r : records) {
      std::memcpy(&buffer[at], r.data(), r.size());
      at += r.size();
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * records.size());
  state.SetBytesProcessed(state.iterations() * TotalBytes(records));
}
BENCHMARK(BM_Baseline_Memcpy)->Unit(benchmark::kMillisecond);

// rollup:0 and 1 on the six wiki dimensions (almost no row merges: pages and
// users are many); rollup:2 on four low-cardinality dimensions, where most
// records merge into an existing row (exact doubleSum accumulators included).
void BM_IndexAdd(benchmark::State& state) {
  const bool rollup = state.range(0) != 0;
  const bool low = state.range(0) == 2;
  const auto& parsed = low ? ParsedLowCardinality() : Parsed();
  auto index = IncrementalIndex::Create(
      {low ? LowCardinalitySchema() : WikiSchema(rollup, Granularity(Granularity::Unit::kMinute)),
       kInterval});
  for (auto _ : state) {
    for (size_t i = 0; i < parsed.rows.size(); ++i) {
      if (!(*index)->Add(parsed.rows[i], 0, static_cast<int64_t>(i)).ok()) std::abort();
    }
    state.PauseTiming();
    state.counters["rows_after_rollup"] = static_cast<double>((*index)->rows());
    state.counters["bytes_per_row"] =
        static_cast<double>((*index)->estimated_bytes()) / (*index)->input_records();
    (*index)->Clear();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * parsed.rows.size());
}
BENCHMARK(BM_IndexAdd)->ArgName("rollup")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// ---- persist -----------------------------------------------------------------

void BM_Baseline_WriteFsync(benchmark::State& state) {
  // The same number of bytes as a rollup-off spill of all rows (measured
  // once below), written and fsynced through AtomicFile.
  const std::string dir = BenchDir("write");
  const std::string data(static_cast<size_t>(state.range(0)), 'x');
  for (auto _ : state) {
    if (!sluice::WriteFileAtomically(dir + "/baseline", data).ok()) std::abort();
  }
  state.SetBytesProcessed(state.iterations() * data.size());
  RemoveDir(dir);
}

void BM_Persist(benchmark::State& state) {
  const bool rollup = state.range(0) != 0;
  const auto& parsed = Parsed();
  const std::string dir = BenchDir(absl::StrCat("persist", rollup));
  auto index = IncrementalIndex::Create(
      {WikiSchema(rollup, Granularity(Granularity::Unit::kMinute)), kInterval});
  int n = 0;
  uint64_t bytes = 0, rows = 0;
  long faults = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < parsed.rows.size(); ++i) {
      if (!(*index)->Add(parsed.rows[i], 0, static_cast<int64_t>(i)).ok()) std::abort();
    }
    rows += (*index)->rows();
    segment::SpillOptions options;
    options.directory = dir;
    options.name = absl::StrCat("s", n++);
    const long faults_before = MinorFaults();
    state.ResumeTiming();
    auto spill = segment::PersistIndex(index->get(), options);
    if (!spill.ok()) std::abort();
    faults += MinorFaults() - faults_before;
    bytes += spill->size_bytes;
    state.PauseTiming();
    (void)segment::RemoveSpill(spill->path);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * parsed.rows.size());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["spill_bytes_per_row"] = static_cast<double>(bytes) / rows;
  state.counters["page_faults"] = static_cast<double>(faults) / state.iterations();
  RemoveDir(dir);
}
BENCHMARK(BM_Persist)->ArgName("rollup")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// ---- merge + write, read -----------------------------------------------------

void BM_Baseline_Sort(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::vector<uint64_t> keys(kRecords);
  for (auto _ : state) {
    state.PauseTiming();
    for (uint64_t& k : keys) k = rng();
    state.ResumeTiming();
    std::sort(keys.begin(), keys.end());
    benchmark::DoNotOptimize(keys.data());
  }
  state.SetItemsProcessed(state.iterations() * keys.size());
}
BENCHMARK(BM_Baseline_Sort)->Unit(benchmark::kMillisecond);

// Four spills of 50k records each (partition i), merged into a segment.
struct Spills {
  std::string dir;
  std::vector<std::string> paths;
};

Spills MakeSpills(bool rollup) {
  const auto& parsed = Parsed();
  Spills s;
  s.dir = BenchDir(absl::StrCat("merge", rollup));
  auto index = IncrementalIndex::Create(
      {WikiSchema(rollup, Granularity(Granularity::Unit::kMinute)), kInterval});
  const size_t per_spill = parsed.rows.size() / 4;
  for (size_t i = 0; i < parsed.rows.size(); ++i) {
    if (!(*index)->Add(parsed.rows[i], static_cast<int32_t>(i / per_spill),
                       static_cast<int64_t>(i))
             .ok()) {
      std::abort();
    }
    if ((i + 1) % per_spill == 0) {
      segment::SpillOptions options;
      options.directory = s.dir;
      options.name = absl::StrCat("s", i / per_spill);
      auto spill = segment::PersistIndex(index->get(), options);
      if (!spill.ok()) std::abort();
      s.paths.push_back(spill->path);
    }
  }
  return s;
}

segment::BuildOptions Build(const Spills& spills, bool rollup) {
  segment::BuildOptions build;
  build.path = spills.dir + "/segment";
  build.schema = WikiSchema(rollup, Granularity(Granularity::Unit::kMinute));
  build.metadata.datasource = "wiki";
  build.metadata.interval = kInterval;
  build.metadata.version = "2026-11-30T02:00:00.000Z";
  build.metadata.segment_id = "wiki_bench";
  build.metadata.provenance.topic = "edits";
  for (int p = 0; p < 4; ++p) {
    build.metadata.provenance.ranges.push_back({p, 0, static_cast<int64_t>(kRecords), 0});
  }
  build.spill_paths = spills.paths;
  return build;
}

void BM_MergeWrite(benchmark::State& state) {
  const bool rollup = state.range(0) != 0;
  const Spills spills = MakeSpills(rollup);
  const segment::BuildOptions build = Build(spills, rollup);
  uint64_t rows = 0, bytes = 0;
  const long faults_before = MinorFaults();
  for (auto _ : state) {
    auto info = segment::BuildSegment(build);
    if (!info.ok()) {
      state.SkipWithError(std::string(info.status().message()).c_str());
      break;
    }
    rows += info->num_rows;
    bytes += info->size_bytes;
  }
  // Rows read from the spills (input records) per second.
  state.SetItemsProcessed(state.iterations() * kRecords);
  state.counters["segment_rows"] = static_cast<double>(rows) / state.iterations();
  state.counters["page_faults"] =
      static_cast<double>(MinorFaults() - faults_before) / state.iterations();
  state.counters["segment_bytes_per_row"] = static_cast<double>(bytes) / rows;
  RemoveDir(spills.dir);
}
BENCHMARK(BM_MergeWrite)->ArgName("rollup")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Read(benchmark::State& state) {
  const Spills spills = MakeSpills(false);
  const segment::BuildOptions build = Build(spills, false);
  if (!segment::BuildSegment(build).ok()) std::abort();
  uint64_t rows = 0;
  for (auto _ : state) {
    auto reader = segment::SegmentReader::Open(build.path);
    if (!reader.ok()) std::abort();
    segment::RowCursor cursor(reader->get());
    int64_t sink = 0;
    while (*cursor.Next()) {
      sink += cursor.time() + cursor.id(0) + cursor.id(1) + cursor.long_metric(1);
      ++rows;
    }
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  RemoveDir(spills.dir);
}
BENCHMARK(BM_Read)->Unit(benchmark::kMillisecond);

// The rollup-off segment of every record as Iceberg Parquet data files (the
// publisher's conversion of an Iceberg datasource), next to BM_MergeWrite's
// build of the same segment from spills: the ratio is what a table costs on
// top of the segment.
void BM_SegmentToParquet(benchmark::State& state) {
  const Spills spills = MakeSpills(false);
  const segment::BuildOptions build = Build(spills, false);
  if (!segment::BuildSegment(build).ok()) std::abort();
  iceberg::NewTableOptions table;
  table.table_uuid = "00000000-0000-4000-8000-000000000000";
  table.location = "file:///bench/table";
  table.fields = {{"__time", iceberg::FieldType::kTimestamptz, true}};
  table.time_column = "__time";
  table.partitioning = iceberg::TimePartitioning::kHour;
  auto metadata = iceberg::NewTableMetadata(table);
  if (!metadata.ok()) std::abort();
  auto fields = supervisor::SegmentFields(build.path);
  if (!fields.ok()) std::abort();
  auto plan = iceberg::PlanAppend(*metadata, *fields);
  if (!plan.ok()) std::abort();
  uint64_t rows = 0, bytes = 0;
  std::string digests;
  for (auto _ : state) {
    auto files = supervisor::SegmentToDataFiles(build.path, *plan);
    if (!files.ok()) {
      state.SkipWithError(std::string(files.status().message()).c_str());
      break;
    }
    digests.clear();
    for (const auto& f : *files) {
      rows += f.file.file.record_count;
      bytes += f.file.bytes.size();
      digests += supervisor::IcebergShortDigest(f.file.bytes);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  state.counters["parquet_bytes_per_row"] = static_cast<double>(bytes) / rows;
  // The files' digest: a change of the writer that keeps it wrote the same
  // bytes.
  state.SetLabel(absl::StrCat("files ", supervisor::IcebergShortDigest(digests)));
  RemoveDir(spills.dir);
}
BENCHMARK(BM_SegmentToParquet)->Unit(benchmark::kMillisecond);

// The publisher's whole staging of a one-segment sequence into a new table
// on a local deep storage in a temp dir (StageIcebergCommit: conversion,
// the data file, manifest, manifest list and metadata stored durably, the
// data file read back and compared): what a publish waits for on top of its
// transaction. Each iteration is a new sequence of a new segment id, so
// every file is new (no "already there" shortcut).
void BM_StageIcebergCommit(benchmark::State& state) {
  const Spills spills = MakeSpills(false);
  const segment::BuildOptions build = Build(spills, false);
  if (!segment::BuildSegment(build).ok()) std::abort();
  const std::string root = BenchDir("stage-deep");
  const std::string scratch = BenchDir("stage-scratch");
  auto storage = LocalDeepStorage::Open(root);
  if (!storage.ok()) std::abort();
  auto segment_uri = (*storage)->Push(build.path, "segments/bench/segment");
  if (!segment_uri.ok()) std::abort();
  supervisor::IcebergTarget target;
  target.datasource = "bench";
  target.table_namespace = "sluice";
  target.table_name = "bench";
  target.partitioning = iceberg::TimePartitioning::kHour;
  target.location_key = "iceberg/sluice/bench";
  target.location = (*storage)->UriForKey(target.location_key);
  uint64_t rows = 0;
  int64_t n = 0;
  for (auto _ : state) {
    supervisor::IcebergCommitInput input;
    input.sequence_name = absl::StrCat("bench-sequence-", n);
    v1::SegmentDescriptor segment;
    segment.set_id(absl::StrCat("bench-segment-", n));
    segment.set_path(*segment_uri);
    input.segments.push_back(segment);
    input.kafka_ranges["sluice.kafka.wiki.0"] = absl::StrCat(n * kRecords, "-", (n + 1) * kRecords);
    input.now_ms = 1796004000000 + n;
    ++n;
    auto staged = supervisor::StageIcebergCommit(storage->get(), scratch, target, std::nullopt,
                                                 input);
    if (!staged.ok()) {
      state.SkipWithError(std::string(staged.status().message()).c_str());
      break;
    }
    rows += static_cast<uint64_t>(staged->records);
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  (void)RemoveAll(root);
  (void)RemoveAll(scratch);
  RemoveDir(spills.dir);
}
BENCHMARK(BM_StageIcebergCommit)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace bench
}  // namespace sluice

int main(int argc, char** argv) {
  // The write baseline writes as many bytes as a rollup-off spill of every
  // record takes, measured here once.
  {
    using sluice::bench::BenchDir;
    using sluice::bench::BM_Baseline_WriteFsync;
    using sluice::bench::kInterval;
    using sluice::bench::Parsed;
    using sluice::bench::Records;
    using sluice::bench::RemoveDir;
    using sluice::bench::TotalBytes;
    using sluice::bench::WikiSchema;
    using sluice::segment::IncrementalIndex;
    const auto& parsed = Parsed();
    const std::string dir = BenchDir("size");
    auto index = IncrementalIndex::Create({WikiSchema(false), kInterval});
    for (size_t i = 0; i < parsed.rows.size(); ++i) {
      if (!(*index)->Add(parsed.rows[i], 0, static_cast<int64_t>(i)).ok()) std::abort();
    }
    sluice::segment::SpillOptions options;
    options.directory = dir;
    options.name = "size";
    auto spill = sluice::segment::PersistIndex(index->get(), options);
    if (!spill.ok()) std::abort();
    benchmark::RegisterBenchmark("BM_Baseline_WriteFsync", BM_Baseline_WriteFsync)
        ->Arg(static_cast<int64_t>(spill->size_bytes))
        ->Unit(benchmark::kMillisecond);
    RemoveDir(dir);
    std::printf("records: %zu, mean %.1f bytes\n", Records().size(),
                static_cast<double>(TotalBytes(Records())) / Records().size());
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
