// The ingest kernel: what a task worker does with a record once Kafka has
// delivered it, without Kafka, gRPC or threads, through the worker's own
// code (task/columnar_engine: the row parser, the incremental index of the
// record's segment interval, Spill at maxRowsInMemory, the segment build with
// its read-back check), over the benchmark's wiki-edit-like records.
//
// Four passes over the same records, each a stage of the record's cost:
//   parse      parse every record (nothing kept)
//   index      parse + add to the index (the parse pass subtracted)
//   persist    Spill every maxRowsInMemory rows (the task's persist under
//              memory pressure; none when the records fit in memory, as the
//              default 100,000 do)
//   build      the sequence ends: each segment built as the task builds it,
//              straight from its in-memory index merged with its spills if
//              any (the direct build), write, fsync, read back (the checksum,
//              as under a supervisor that decodes every pushed segment;
//              --full_read_back decodes every dictionary, block and bitmap).
//              --nodirect_build: as before the direct build, the rows in
//              memory spilled first (counted in persist), then the spills
//              merged
// --kafka_timestamp runs the kafka input format instead: each record's
// envelope built as the read loop builds it (task/record_envelope_builder:
// key, Kafka timestamp, topic), the Kafka timestamp (the record's own time)
// as the timestamp column, the value's "timestamp" field unused.
// Under callgrind each pass is collected alone and dumped by name, so
// bench/ingest_kernel.py prints instructions per record per stage: a count
// that does not depend on what else the machine runs. Without valgrind the
// binary prints the CPU time of each pass.
//
//   python3 bench/ingest_kernel.py [--records=N] [--update-docs]
#include <time.h>
#include <valgrind/callgrind.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gflags/gflags.h>
#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/granularity.h"
#include "common/time_util.h"
#include "task/columnar_engine.h"
#include "task/record_envelope_builder.h"
#include "tools/cluster/wiki_datasource.h"
#include "tools/produce/wiki_rows.h"

DEFINE_int64(records, 100000, "records to run through the kernel");
DEFINE_bool(rollup, false, "rollup on (queryGranularity MINUTE, the 4 low-cardinality dimensions)");
DEFINE_bool(kafka_timestamp, false,
            "the kafka input format: each record's envelope beside its value, the Kafka "
            "timestamp as the timestamp column");
DEFINE_int64(max_rows_in_memory, 150000, "rows per persist (the spec's maxRowsInMemory)");
DEFINE_string(dir, "", "scratch directory (default: a new one under TMPDIR)");
DEFINE_bool(direct_build, true,
            "build each segment straight from its in-memory index at the sequence's end "
            "(false: spill it first, then build from the spills)");
DEFINE_bool(full_read_back, false,
            "decode every block in the build's read-back check, as a task does when its "
            "supervisor does not (default: the checksum, as a task under a "
            "supervisor with deep storage does)");

namespace sluice {
namespace {

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Collects (under callgrind) and times one pass while it is not paused;
// dumps its counts as `name`.
class Pass {
 public:
  explicit Pass(const char* name) : name_(name) { Resume(); }
  void Pause() {
    CALLGRIND_TOGGLE_COLLECT;
    seconds_ += CpuSeconds() - resumed_;
  }
  void Resume() {
    resumed_ = CpuSeconds();
    CALLGRIND_TOGGLE_COLLECT;
  }
  ~Pass() {
    Pause();
    CALLGRIND_DUMP_STATS_AT(name_);
    std::printf("%-8s %8.1f ms CPU, %7.0f ns/record\n", name_, seconds_ * 1e3,
                seconds_ * 1e9 / static_cast<double>(FLAGS_records));
  }

 private:
  const char* name_;
  double resumed_ = 0;
  double seconds_ = 0;
};

v1::DataSchema Schema() {
  cluster::WikiSpecOptions wiki;
  wiki.rollup = FLAGS_rollup;
  wiki.query_granularity = FLAGS_rollup ? "MINUTE" : "NONE";
  v1::SupervisorSpec spec = cluster::WikiSpec(wiki);
  if (FLAGS_rollup) {
    v1::DimensionsSpec* dims = spec.mutable_data_schema()->mutable_dimensions_spec();
    dims->clear_dimensions();
    for (const char* d : {"channel", "namespace", "countryName", "isRobot"}) dims->add_dimensions(d);
  }
  if (FLAGS_kafka_timestamp) {
    spec.mutable_data_schema()->mutable_timestamp_spec()->set_column("kafka.timestamp");
    spec.mutable_data_schema()->mutable_timestamp_spec()->set_format("millis");
  }
  return spec.data_schema();
}

// With --kafka_timestamp: the envelope of each record (its Kafka timestamp
// the record's own time, -1 for a record without one) built per record as
// the read loop does; nullptr without.
class Envelopes {
 public:
  explicit Envelopes(const std::vector<std::string>& records) {
    if (!FLAGS_kafka_timestamp) return;
    v1::InputFormat format;
    format.set_type("kafka");
    auto builder = task::RecordEnvelopeBuilder::Create(format);
    CHECK(builder.ok()) << builder.status();
    builder_.emplace(std::move(*builder));
    for (const std::string& r : records) {
      constexpr absl::string_view kPrefix = "{\"timestamp\":\"";
      int64_t ms = -1;
      if (absl::string_view(r).substr(0, kPrefix.size()) == kPrefix) {
        auto parsed = ParseIsoInstantMillis(absl::string_view(r).substr(kPrefix.size(), 24));
        if (parsed.ok()) ms = *parsed;
      }
      times_.push_back(ms);
    }
    meta_.has_key = true;
    meta_.key = "k";
    meta_.topic = "wiki";
  }
  // As the read loop does: the timestamp's text only for a parser that
  // reads it.
  void FitTo(const task::RowParser& parser) {
    if (builder_.has_value()) {
      builder_->set_timestamp_text(parser.ReadsEnvelopeColumnText(builder_->timestamp_column()));
    }
  }
  const segment::RecordEnvelope* Build(size_t record, int32_t partition, int64_t offset,
                                       absl::string_view value) {
    if (!builder_.has_value()) return nullptr;
    meta_.timestamp_ms = times_[record];
    meta_.partition = partition;
    std::string error;
    const segment::RecordEnvelope* envelope =
        builder_->Build(task::KafkaRecord{partition, offset, value}, meta_, &error);
    CHECK(envelope != nullptr) << error;
    return envelope;
  }

 private:
  std::optional<task::RecordEnvelopeBuilder> builder_;
  std::vector<int64_t> times_;
  task::KafkaEnvelope meta_;
};

const task::ParsedRow* ParseOne(task::RowParser& parser, Envelopes& envelopes, size_t record,
                                int32_t partition, int64_t offset, absl::string_view value,
                                task::RowParseError* error) {
  const segment::RecordEnvelope* envelope = envelopes.Build(record, partition, offset, value);
  return envelope == nullptr ? parser.Parse(value, error)
                             : parser.Parse(value, *envelope, error);
}

// Records reach the task as Kafka delivers them: 4 partitions (record i on
// partition i % 4, each in time order), fetched in batches of 2,000 records
// of one partition at a time, so rows arrive in overlapping time-ordered runs
// as they do from a real topic.
constexpr size_t kPartitions = 4;

struct Delivery {
  size_t record;
  int32_t partition;
  int64_t offset;
};

const std::vector<Delivery>& DeliveryOrder(size_t n) {
  static const std::vector<Delivery>* order = [n] {
    constexpr size_t kBatch = 2000;
    auto* out = new std::vector<Delivery>;
    for (size_t first = 0; out->size() < n; first += kBatch) {  // first offset of the batch
      for (size_t p = 0; p < kPartitions; ++p) {
        for (size_t o = first; o < first + kBatch; ++o) {
          const size_t record = o * kPartitions + p;
          if (record < n) {
            out->push_back({record, static_cast<int32_t>(p), static_cast<int64_t>(o)});
          }
        }
      }
    }
    return out;
  }();
  return *order;
}

// The task's per-record work up to the index: parse, route to the index of
// the record's HOUR bucket, add; Spill at maxRowsInMemory (collected or not).
struct Indexer {
  task::SegmentEngine* engine;
  std::unique_ptr<task::RowParser> parser;
  std::map<int64_t, std::unique_ptr<task::SegmentIndex>> indexes;
  std::map<int64_t, std::vector<std::string>> spills;
  // Records added to each bucket's index by partition: what the task counts
  // and the build checks against the file's provenance.
  std::map<int64_t, std::vector<int64_t>> counted;
  // The bucket of the last row, as OpenSegments::For keeps it: most rows go
  // to the same one, so the task truncates and looks up only on a change.
  int64_t last_start = 0;
  int64_t last_end = 0;
  task::SegmentIndex* last_index = nullptr;
  std::vector<int64_t>* last_counts = nullptr;
  std::string dir;
  int64_t rows_in_memory = 0;
  int64_t bytes_in_memory = 0;
  int spill_number = 0;
  Envelopes* envelopes = nullptr;

  void PersistAll() {
    for (auto& [bucket, index] : indexes) {
      if (index->rows() == 0) continue;
      const std::string name = absl::StrCat(bucket, "_", spill_number++, ".spill");
      CHECK(index->Spill(dir, name).ok());
      spills[bucket].push_back(absl::StrCat(dir, "/", name));
    }
    rows_in_memory = 0;
    bytes_in_memory = 0;
  }

  void Run(const std::vector<std::string>& records, Pass* pass, bool collect_persists) {
    const Granularity hour(Granularity::Unit::kHour);
    task::RowParseError error;
    const std::vector<Delivery>& order = DeliveryOrder(records.size());
    // The read loop's read-ahead (RecordIngester, plain records): the next
    // record parsed by a second parser and its slots prefetched before this
    // one's row is added.
    const bool read_ahead = !FLAGS_kafka_timestamp;
    std::unique_ptr<task::RowParser> ahead_parser = engine->NewParser();
    const task::ParsedRow* ahead_row = nullptr;
    bool ahead_ready = false;
    for (size_t i = 0; i < records.size(); ++i) {
      const Delivery& d = order[i];
      const task::ParsedRow* row;
      if (ahead_ready) {
        std::swap(parser, ahead_parser);
        row = ahead_row;
        ahead_ready = false;
      } else {
        row = ParseOne(*parser, *envelopes, d.record, d.partition, d.offset, records[d.record],
                       &error);
      }
      if (row == nullptr) continue;
      const int64_t time = row->timestamp_ms();
      if (last_index == nullptr || time < last_start || time >= last_end) {
        const int64_t start = hour.Truncate(time);
        std::unique_ptr<task::SegmentIndex>& slot = indexes[start];
        if (slot == nullptr) {
          v1::Interval interval;
          interval.set_start_ms(start);
          interval.set_end_ms(hour.Next(start));
          slot = engine->NewIndex(interval);
        }
        std::vector<int64_t>& counts = counted[start];
        counts.resize(kPartitions);
        last_start = start;
        last_end = hour.Next(start);
        last_index = slot.get();
        last_counts = &counts;
      }
      task::SegmentIndex* index = last_index;
      if (read_ahead && i + 1 < records.size()) {
        ahead_row = ahead_parser->Parse(records[order[i + 1].record], &error);
        if (ahead_row != nullptr && !ahead_row->thrown_away()) index->Prefetch(*ahead_row);
        ahead_ready = true;
      }
      // As the read loop does: rows and estimated bytes before and after.
      const int64_t before = index->rows();
      const int64_t bytes_before = index->estimated_bytes();
      CHECK(index->Add(*row, d.partition, d.offset).ok());
      ++(*last_counts)[d.partition];
      rows_in_memory += index->rows() - before;
      bytes_in_memory += index->estimated_bytes() - bytes_before;
      if (rows_in_memory >= FLAGS_max_rows_in_memory || bytes_in_memory >= 128LL << 20) {
        // The persist pass collects only the persists (it is paused for the
        // parse and add around them); the index pass everything but them.
        if (collect_persists) {
          pass->Resume();
        } else {
          pass->Pause();
        }
        PersistAll();
        if (collect_persists) {
          pass->Pause();
        } else {
          pass->Resume();
        }
      }
    }
  }
};

int Main() {
  std::string dir = FLAGS_dir;
  if (dir.empty()) {
    const char* tmp = getenv("TMPDIR");
    dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/sluice-ingest-kernel-", getpid());
  }
  CHECK(MakeDirs(dir).ok());
  bench::WikiRowOptions options;
  options.mean_step_ms = 8;
  const std::vector<std::string> records =
      bench::WikiRecords(static_cast<size_t>(FLAGS_records), options);
  auto engine = task::NewColumnarEngine(Schema());
  CHECK(engine.ok()) << engine.status();
  std::printf("records: %lld, rollup %s, maxRowsInMemory %lld\n",
              static_cast<long long>(FLAGS_records), FLAGS_rollup ? "on" : "off",
              static_cast<long long>(FLAGS_max_rows_in_memory));

  Envelopes envelopes(records);
  envelopes.FitTo(*(*engine)->NewParser());
  {
    auto parser = (*engine)->NewParser();
    task::RowParseError error;
    int64_t sink = 0;
    Pass pass("parse");
    for (size_t i = 0; i < records.size(); ++i) {
      const task::ParsedRow* row = ParseOne(*parser, envelopes, i, 0, static_cast<int64_t>(i),
                                            records[i], &error);
      sink += row == nullptr ? 0 : row->timestamp_ms();
    }
    if (sink == 42) std::printf(" ");
  }
  {
    Indexer indexer{engine->get(), (*engine)->NewParser()};
    indexer.envelopes = &envelopes;
    indexer.dir = dir + "/index";
    CHECK(MakeDirs(indexer.dir).ok());
    // The harness's delivery order is made before the pass: the task has none.
    DeliveryOrder(records.size());
    Pass pass("index");
    indexer.Run(records, &pass, /*collect_persists=*/false);
  }
  Indexer indexer{engine->get(), (*engine)->NewParser()};
  indexer.envelopes = &envelopes;
  indexer.dir = dir + "/persist";
  CHECK(MakeDirs(indexer.dir).ok());
  {
    // Collects only the persists: parse and add are the index pass.
    Pass pass("persist");
    pass.Pause();
    indexer.Run(records, &pass, /*collect_persists=*/true);
    pass.Resume();
    if (!FLAGS_direct_build) indexer.PersistAll();
  }
  int64_t segment_bytes = 0, segment_rows = 0;
  {
    Pass pass("build");
    int n = 0;
    std::map<int64_t, bool> buckets;
    for (const auto& [bucket, paths] : indexer.spills) buckets[bucket] = true;
    for (const auto& [bucket, index] : indexer.indexes) buckets[bucket] = true;
    for (const auto& [bucket, unused] : buckets) {
      const std::vector<std::string>& paths = indexer.spills[bucket];
      task::SegmentBuildInfo info;
      info.segment_id = absl::StrCat("wiki_kernel_", bucket);
      info.datasource = "wiki";
      info.interval.set_start_ms(bucket);
      info.interval.set_end_ms(bucket + 3600000);
      info.version = "2026-11-30T02:00:00.000Z";
      info.provenance.set_topic("wiki");
      info.read_back_decodes_blocks = FLAGS_full_read_back;
      for (int p = 0; p < static_cast<int>(kPartitions); ++p) {
        v1::PartitionRange* range = info.provenance.add_ranges();
        range->set_partition(p);
        range->set_start_offset(0);
        range->set_end_offset(FLAGS_records);
        const std::vector<int64_t>& counts = indexer.counted[bucket];
        range->set_rows(static_cast<size_t>(p) < counts.size() ? counts[p] : 0);
      }
      const std::string path = absl::StrCat(dir, "/segment_", n++);
      const std::unique_ptr<task::SegmentIndex>& index = indexer.indexes[bucket];
      auto built = index != nullptr && index->rows() > 0 ? index->Build(paths, info, path)
                                                         : (*engine)->BuildSegment(paths, info, path);
      CHECK(built.ok()) << built.status();
      segment_bytes += built->size_bytes;
      segment_rows += built->rows;
    }
  }
  std::printf("segments: %lld rows, %lld bytes (%.1f B/row)\n", static_cast<long long>(segment_rows),
              static_cast<long long>(segment_bytes),
              static_cast<double>(segment_bytes) / static_cast<double>(segment_rows));
  CHECK(RemoveAll(dir).ok());
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  return sluice::Main();
}
