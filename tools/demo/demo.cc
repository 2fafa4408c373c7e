#include "tools/demo/demo.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/grpc_status.h"
#include "common/kafka/consumer_settings.h"
#include "common/time_util.h"
#include "google/protobuf/util/json_util.h"
#include "tools/demo/compaction_watch.h"
#include "tools/audit/live_audit.h"
#include "tools/audit/segment_file_verifier.h"
#include "tools/cluster/free_ports.h"
#include "tools/cluster/process_cluster.h"
#include "tools/cluster/wiki_datasource.h"
#include "tools/demo/progress.h"
#include "tools/kafka/real_kafka.h"
#include "tools/demo/segment_table.h"
#include "tools/produce/wiki_producer.h"

namespace sluice {
namespace demo {
namespace {

constexpr char kDatasource[] = "wiki";
constexpr char kTopic[] = "wiki";
constexpr absl::Duration kPoll = absl::Milliseconds(250);
constexpr absl::Duration kHandoffWait = absl::Seconds(30);
constexpr absl::Duration kQuietRepeat = absl::Seconds(6);

// `text` inside a JSON string literal.
std::string JsonEscaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out;
}

std::string Validate(const DemoOptions& o) {
  if (o.records < 1) return "--records must be >= 1";
  if (o.partitions < 1 || o.partitions > 64) return "--partitions must be in [1, 64]";
  if (o.workers < 1 || o.workers > 16) return "--workers must be in [1, 16]";
  if (o.task_count < 1) return "--task_count must be >= 1";
  if (o.replicas < 1 || o.replicas > o.workers) {
    return absl::StrCat("--replicas must be in [1, workers=", o.workers,
                        "]: replicas of a group run on different workers");
  }
  if (o.max_rows_per_segment < 1) return "--max_rows_per_segment must be >= 1";
  if (o.malformed_fraction < 0 || o.malformed_fraction > 1) {
    return "--malformed_fraction must be in [0, 1]";
  }
  if (o.rate < 0) return "--rate must be >= 0";
  if (o.compacted_max_segments < 1) return "--compacted_max_segments must be >= 1";
  return "";
}

// The producer runs on its own thread while the main thread shows progress
// (and owns the processes: they die with the thread that started them).
class BackgroundProducer {
 public:
  explicit BackgroundProducer(produce::ProduceOptions options) {
    options.on_progress = [this](const produce::ProduceProgress& p) {
      produced_.store(p.produced);
    };
    options.progress_interval = absl::Milliseconds(200);
    options.should_stop = [this] { return stop_.load(); };
    thread_ = std::thread([this, options] {
      absl::StatusOr<produce::ProduceResult> result = produce::ProduceWikiRecords(options);
      absl::MutexLock lock(&mu_);
      result_ = std::move(result);
    });
  }
  ~BackgroundProducer() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  int64_t produced() const { return produced_.load(); }
  // The result once the producer finished, else nullopt.
  std::optional<absl::StatusOr<produce::ProduceResult>> result() const {
    absl::MutexLock lock(&mu_);
    return result_;
  }

 private:
  std::atomic<int64_t> produced_{0};
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  std::optional<absl::StatusOr<produce::ProduceResult>> result_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

absl::StatusOr<std::vector<v1::SegmentDescriptor>> ListSegments(
    v1::SupervisorService::StubInterface& stub) {
  v1::ListSegmentsRequest request;
  request.set_datasource(kDatasource);
  request.set_limit(100000);
  v1::ListSegmentsResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  absl::Status s = FromGrpcStatus(stub.ListSegments(&context, request, &response));
  if (!s.ok()) return s;
  return std::vector<v1::SegmentDescriptor>(response.segments().begin(), response.segments().end());
}

// The binary to suggest to the user: bazel-bin/<path> when the demo runs from
// the workspace (scripts/demo.sh), else just its name.
std::string ToolPath(const std::string& workspace_path) {
  const std::string relative = "bazel-bin/" + workspace_path;
  if (access(relative.c_str(), X_OK) == 0) return relative;
  const size_t slash = workspace_path.rfind('/');
  return slash == std::string::npos ? workspace_path : workspace_path.substr(slash + 1);
}

class Demo {
 public:
  Demo(const DemoOptions& options, std::ostream& out) : options_(options), out_(out) {}

  int Run();

 private:
  bool Interrupted() const { return options_.interrupted && options_.interrupted(); }
  void Say(const std::string& line) { out_ << line << "\n" << std::flush; }
  int Fail(const std::string& why) {
    Say(absl::StrCat("\nFAILED: ", why));
    return kDemoFailed;
  }
  absl::Status StartCluster();
  // Until everything produced is committed: kDemoOk, or an exit code.
  int Ingest(std::map<int32_t, produce::PartitionCount>* produced_counts, int64_t* malformed);
  int ShowSegments();
  // With a compaction config: until every interval older than the skip
  // offset is compacted and every segment handed off (bounded), then the
  // used segments per interval and the compaction figures.
  int WaitForCompaction();
  // The compaction records of the supervisor's status, counted once.
  void TallyCompaction();
  void WriteSummary(int code);
  int Audit(const std::map<int32_t, produce::PartitionCount>& produced, int64_t malformed);
  // The Iceberg table read by pyiceberg and queried with DuckDB; its count
  // of edits must be the parseable records produced.
  int QueryTable(int64_t malformed);
  void KeepRunning(int64_t records);
  int Stop(int code);

  const DemoOptions& options_;
  std::ostream& out_;
  std::string root_;
  // The web console's address ("" without --console).
  std::string console_url_;
  bool created_root_ = false;
  std::unique_ptr<kafka::RealKafka> real_kafka_;  // --kafka=real only
  std::unique_ptr<cluster::ProcessCluster> cluster_;
  std::unique_ptr<v1::SupervisorService::Stub> stub_;
  absl::Time start_;
  std::string first_segment_;  // a local segment file, for the user to inspect
  // With options_.compaction_json only.
  bool compaction_ = false;
  absl::Duration skip_offset_;
  CompactionTally tally_;
  std::vector<IntervalSegments> intervals_;
  int64_t cutoff_ms_ = 0;
  absl::Duration compaction_wait_took_;
  // From the producer's start until everything produced is committed.
  absl::Duration ingest_took_;
  // From the producer's start until all but the groups' open sequences
  // (at most taskCount x maxRowsPerSegment records, published at the next
  // roll-over) are committed, and the records committed then.
  absl::Duration full_sequences_took_;
  int64_t full_sequences_rows_ = 0;
};

absl::Status Demo::StartCluster() {
  cluster::ProcessClusterOptions options;
  options.root_dir = root_;
  options.workers = options_.workers;
  options.worker_capacity = std::max(4, 2 * options_.task_count);
  const bool real = options_.kafka == "real";
  if (real) {
    Say(absl::StrCat("starting Apache Kafka ", kafka::kKafkaVersion, " (KRaft, 1 node; log in ",
                     root_, "/kafka/server.log)..."));
    kafka::RealKafkaOptions k;
    k.dir = root_ + "/kafka";
    absl::StatusOr<std::unique_ptr<kafka::RealKafka>> started = kafka::RealKafka::Start(k);
    if (!started.ok()) return started.status();
    real_kafka_ = *std::move(started);
    if (absl::Status s = real_kafka_->CreateTopic(kTopic, options_.partitions); !s.ok()) return s;
    options.external_bootstrap_servers = real_kafka_->bootstrap_servers();
  } else if (options_.kafka == "dev") {
    options.topics = {absl::StrCat(kTopic, ":", options_.partitions)};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--kafka must be dev or real, not \"", options_.kafka, "\""));
  }
  if (options_.console) {
    absl::StatusOr<std::vector<int>> port = cluster::PickStablePorts(1);
    if (!port.ok()) return port.status();
    console_url_ = absl::StrCat("http://127.0.0.1:", (*port)[0], "/console/");
    options.extra_flags[cluster::kSupervisor].push_back(
        absl::StrCat("--console_listen=127.0.0.1:", (*port)[0]));
  }
  absl::StatusOr<std::unique_ptr<cluster::ProcessCluster>> created =
      cluster::ProcessCluster::Create(options);
  if (!created.ok()) return created.status();
  cluster_ = *std::move(created);
  Say(absl::StrCat("starting ", real ? "" : "the dev Kafka broker, ", "the supervisor and ",
                   options_.workers, " task workers (logs in ", root_, "/logs)"));
  if (absl::Status s = cluster_->Start(); !s.ok()) return s;
  if (absl::Status s = cluster_->WaitHealthy(absl::Seconds(60)); !s.ok()) return s;
  stub_ = cluster_->SupervisorStub();
  Say(absl::StrCat(real ? "  Kafka (Apache)      " : "  Kafka (dev broker)  ",
                   cluster_->bootstrap_servers(), "  topic ", kTopic,
                   " with ", options_.partitions, " partitions"));
  Say(absl::StrCat("  supervisor          ", cluster_->supervisor_address()));
  if (!console_url_.empty()) {
    Say(absl::StrCat("  web console         ", console_url_, " (sign in with the token in ",
                     cluster_->token_file("reader"), ")"));
  }
  Say(absl::StrCat("  authentication      bearer tokens (hashed in ",
                   cluster_->credentials().tokens_file, "; roles in ",
                   cluster_->credentials().policy_file, ")"));
  for (int i = 0; i < options_.workers; ++i) {
    Say(absl::StrCat("  ", absl::StrFormat("%-20s", cluster::WorkerName(i)),
                     cluster_->worker_address(i)));
  }
  return absl::OkStatus();
}

int Demo::Ingest(std::map<int32_t, produce::PartitionCount>* produced_counts, int64_t* malformed) {
  cluster::WikiSpecOptions spec;
  spec.datasource = kDatasource;
  spec.topic = kTopic;
  spec.bootstrap_servers = cluster_->bootstrap_servers();
  spec.task_count = options_.task_count;
  spec.replicas = options_.replicas;
  spec.max_rows_per_segment = options_.max_rows_per_segment;
  spec.task_duration = options_.task_duration;
  spec.period = "PT1S";
  spec.segment_granularity = options_.segment_granularity;
  v1::SupervisorSpec wiki = cluster::WikiSpec(spec);
  if (!options_.intermediate_handoff_period.empty()) {
    wiki.mutable_tuning_config()->set_intermediate_handoff_period(
        options_.intermediate_handoff_period);
  }
  if (!options_.compaction_json.empty()) {
    namespace pb = google::protobuf;
    const pb::util::Status parsed = pb::util::JsonStringToMessage(
        pb::StringPiece(options_.compaction_json.data(), options_.compaction_json.size()),
        wiki.mutable_compaction(), pb::util::JsonParseOptions());
    if (!parsed.ok()) {
      return Fail(absl::StrCat("--compaction: ", parsed.message().ToString()));
    }
    // The supervisor checks the whole section when the spec is submitted;
    // the skip offset (default P1D) says which intervals to wait for.
    const std::string& skip = wiki.compaction().skip_offset_from_latest();
    absl::StatusOr<absl::Duration> skip_offset =
        skip.empty() ? absl::StatusOr<absl::Duration>(absl::Hours(24)) : ParseIsoDuration(skip);
    if (!skip_offset.ok()) {
      return Fail(absl::StrCat("--compaction: skipOffsetFromLatest: ",
                               skip_offset.status().message()));
    }
    compaction_ = true;
    skip_offset_ = *skip_offset;
  }
  // Every commit is also a snapshot of the Iceberg table sluice.wiki.
  if (options_.iceberg_table) wiki.mutable_iceberg_table();
  if (absl::Status s = cluster::SubmitSpec(*stub_, wiki); !s.ok()) {
    return Fail(s.ToString());
  }
  Say(absl::StrCat("\nsubmitted the spec of datasource ", kDatasource, ": taskCount ",
                   options_.task_count, ", replicas ", options_.replicas, ", maxRowsPerSegment ",
                   options_.max_rows_per_segment, ", taskDuration ", options_.task_duration,
                   options_.intermediate_handoff_period.empty()
                       ? std::string()
                       : absl::StrCat(", intermediateHandoffPeriod ",
                                      options_.intermediate_handoff_period),
                   ", segmentGranularity ", options_.segment_granularity,
                   compaction_ ? absl::StrCat(", compaction ", options_.compaction_json)
                               : std::string()));

  // Timestamps end about now, one edit per millisecond on average.
  produce::ProduceOptions produce;
  produce.properties = {{"bootstrap.servers", cluster_->bootstrap_servers()}};
  produce.topic = kTopic;
  produce.records = options_.records;
  produce.rate = options_.rate;
  produce.rows.seed = options_.seed;
  produce.rows.malformed_fraction = options_.malformed_fraction;
  produce.rows.mean_step_ms = 1;
  produce.rows.start_ms = absl::ToUnixMillis(absl::Now()) - options_.records;
  if (options_.live_timestamps) {
    produce.rows.live_clock_ms = [] { return absl::ToUnixMillis(absl::Now()); };
  }
  Say(absl::StrCat("producing ", options_.records, " wiki edits",
                   options_.rate > 0 ? absl::StrCat(" at ", options_.rate, " records/s") : "",
                   " (a fraction ", options_.malformed_fraction, " of them malformed)\n"));
  const absl::Time producing_since = absl::Now();
  auto producer = std::make_unique<BackgroundProducer>(produce);

  const absl::Time deadline = absl::Now() + options_.timeout;
  absl::Time next_progress = absl::Now();
  std::map<int32_t, int64_t> end_offsets;
  std::map<int32_t, int64_t> initial;  // the topic is new: reading starts at 0
  ProgressSnapshot snapshot;
  bool produced_all = false;
  std::string last_error;
  std::set<std::string> groups_seen;
  std::string last_line;
  absl::Time quiet_until = absl::InfinitePast();
  bool said_waiting = false;
  while (true) {
    if (Interrupted()) {
      Say("\ninterrupted");
      return kDemoInterrupted;
    }
    if (absl::Status alive = cluster_->CheckAlive(); !alive.ok()) {
      return Fail(std::string(alive.message()));
    }
    if (!produced_all) {
      if (auto result = producer->result(); result.has_value()) {
        if (!result->ok()) return Fail(absl::StrCat("producing: ", result->status().ToString()));
        for (const auto& [p, count] : (*result)->partitions) end_offsets[p] = count.end_offset;
        *produced_counts = (*result)->partitions;
        *malformed = (*result)->malformed;
        produced_all = true;
      }
    }
    snapshot.elapsed = absl::Now() - start_;
    snapshot.produced = producer->produced();
    snapshot.producing = !produced_all;
    const absl::Status queried = QuerySupervisor(*stub_, kDatasource, initial, &snapshot);
    if (compaction_) TallyCompaction();
    if (queried.ok() && full_sequences_rows_ == 0 &&
        snapshot.committed >=
            options_.records - int64_t{options_.task_count} * options_.max_rows_per_segment) {
      full_sequences_took_ = absl::Now() - producing_since;
      full_sequences_rows_ = std::max<int64_t>(snapshot.committed, 1);
    }
    if (!queried.ok()) last_error = queried.ToString();
    bool committed_all = false;
    if (queried.ok() && produced_all) {
      committed_all = snapshot.committed >= options_.records;
    }
    if (queried.ok()) {
      std::vector<std::string> fresh;
      for (const std::string& name : snapshot.reading_groups) {
        if (groups_seen.insert(name).second) fresh.push_back(name);
      }
      if (!fresh.empty() && groups_seen.size() > fresh.size()) {
        Say(absl::StrFormat(
            "[%6.1fs] roll-over: groups read for %s and now publish what they read; new groups "
            "%s continue from their end offsets",
            absl::ToDoubleSeconds(snapshot.elapsed), options_.task_duration,
            absl::StrJoin(fresh, ", ")));
      }
    }
    if (queried.ok() && produced_all && !committed_all && snapshot.lag == 0 &&
        snapshot.read >= options_.records && !said_waiting) {
      Say(absl::StrFormat(
          "[%6.1fs] every record is read; the open sequences are published when they fill up "
          "(maxRowsPerSegment) or when their groups roll over (taskDuration %s)",
          absl::ToDoubleSeconds(snapshot.elapsed), options_.task_duration));
      said_waiting = true;
    }
    if (queried.ok() && (absl::Now() >= next_progress || committed_all)) {
      // An unchanged line is repeated only every few seconds.
      ProgressSnapshot same = snapshot;
      same.elapsed = absl::ZeroDuration();
      const std::string line = FormatProgressLine(same);
      if (line != last_line || absl::Now() >= quiet_until || committed_all) {
        Say(FormatProgressLine(snapshot));
        last_line = line;
        quiet_until = absl::Now() + kQuietRepeat;
      }
      next_progress = absl::Now() + options_.progress_interval;
    }
    if (committed_all) {
      ingest_took_ = absl::Now() - producing_since;
      break;
    }
    if (absl::Now() >= deadline) {
      return Fail(absl::StrCat("not everything was committed within ",
                               absl::FormatDuration(options_.timeout), " (", snapshot.committed,
                               " of ", options_.records, " records committed",
                               last_error.empty() ? "" : "; last error: " + last_error,
                               "); see the logs in ", root_, "/logs"));
    }
    absl::SleepFor(kPoll);
  }
  Say(absl::StrCat("\neverything produced is committed after ",
                   absl::StrFormat("%.1fs", absl::ToDoubleSeconds(absl::Now() - start_)), ": ",
                   snapshot.checkpoints, " checkpoints, ", snapshot.segments_published,
                   " segments published, ", snapshot.unparseable, " unparseable records"));
  return kDemoOk;
}

int Demo::ShowSegments() {
  // Published segments become handed off once the supervisor has verified
  // their files in deep storage.
  const absl::Time deadline = absl::Now() + kHandoffWait;
  std::vector<v1::SegmentDescriptor> segments;
  while (true) {
    absl::StatusOr<std::vector<v1::SegmentDescriptor>> listed = ListSegments(*stub_);
    if (!listed.ok()) return Fail(absl::StrCat("listing segments: ", listed.status().ToString()));
    segments = *std::move(listed);
    int pending = 0;
    for (const v1::SegmentDescriptor& s : segments) {
      if (s.handoff_state() == v1::HANDOFF_STATE_FAILED) {
        Say(FormatSegmentTable(segments));
        return Fail(absl::StrCat("segment ", s.id(), " failed its deep-storage verification"));
      }
      pending += s.handoff_state() != v1::HANDOFF_STATE_HANDED_OFF;
    }
    if (pending == 0) break;
    if (absl::Now() >= deadline || Interrupted()) {
      Say(FormatSegmentTable(segments));
      return Fail(absl::StrCat(pending, " segments were not handed off within ",
                               absl::FormatDuration(kHandoffWait)));
    }
    absl::SleepFor(kPoll);
  }
  if (!segments.empty()) {
    first_segment_ = audit::LocalSegmentPath(segments[0].path()).value_or(segments[0].path());
  }
  Say(absl::StrCat("\npublished segments (sluicectl segments ", kDatasource, "):"));
  Say(FormatSegmentTable(segments));
  return kDemoOk;
}

void Demo::TallyCompaction() {
  absl::StatusOr<v1::SupervisorStatus> status = cluster::GetStatus(*stub_, kDatasource);
  if (status.ok()) tally_.Add(status->compaction());
}

int Demo::WaitForCompaction() {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options_.compaction_wait;
  std::vector<IntervalSegments> waiting;
  int pending_handoff = 0;
  while (true) {
    TallyCompaction();
    absl::StatusOr<std::vector<v1::SegmentDescriptor>> listed = ListSegments(*stub_);
    if (!listed.ok()) return Fail(absl::StrCat("listing segments: ", listed.status().ToString()));
    pending_handoff = 0;
    for (const v1::SegmentDescriptor& s : *listed) {
      if (s.used() && s.handoff_state() == v1::HANDOFF_STATE_FAILED) {
        return Fail(absl::StrCat("segment ", s.id(), " failed its deep-storage verification"));
      }
      pending_handoff += s.used() && s.handoff_state() != v1::HANDOFF_STATE_HANDED_OFF;
    }
    intervals_ = GroupUsedByInterval(*listed);
    cutoff_ms_ = CompactionCutoffMs(intervals_, absl::ToUnixMillis(absl::Now()),
                                    absl::ToInt64Milliseconds(skip_offset_));
    waiting = NotCompacted(intervals_, cutoff_ms_, options_.compacted_max_segments);
    if (waiting.empty() && pending_handoff == 0) break;
    if (absl::Now() >= deadline || Interrupted()) break;
    absl::SleepFor(absl::Seconds(1));
  }
  compaction_wait_took_ = absl::Now() - start;
  Say(absl::StrCat("\nused segments per interval (", FormatIsoInstant(cutoff_ms_),
                   " = the earlier of now and the newest interval's end, minus "
                   "skipOffsetFromLatest ", absl::FormatDuration(skip_offset_),
                   "; intervals ending by then are compacted):"));
  for (const IntervalSegments& i : intervals_) {
    Say(absl::StrFormat("  %s/%s  %4d segments  %8d rows%s%s", FormatIsoInstant(i.start_ms),
                        FormatIsoInstant(i.end_ms), i.segments, i.rows,
                        i.end_ms <= cutoff_ms_ ? "  (older than the skip offset)" : "",
                        i.not_handed_off > 0
                            ? absl::StrCat("  ", i.not_handed_off, " not handed off")
                            : std::string()));
  }
  const v1::CompactionStatus& last = tally_.last();
  Say(absl::StrFormat(
      "compaction: %d compactions (status: %d, %d segments replaced, %d rows), %d rows "
      "compacted in %.1fs of compacting (%.0f rows/s), %d conflicts%s",
      tally_.compactions(), last.compactions(), last.segments_replaced(), last.rows_compacted(),
      tally_.rows(), tally_.duration_ms() / 1000.0,
      tally_.duration_ms() > 0 ? tally_.rows() * 1000.0 / tally_.duration_ms() : 0.0,
      last.conflicts(),
      last.last_error().empty() ? "" : absl::StrCat("; last error: ", last.last_error())));
  if (!waiting.empty() || pending_handoff > 0) {
    std::vector<std::string> names;
    for (const IntervalSegments& i : waiting) {
      names.push_back(absl::StrCat(FormatIsoInstant(i.start_ms), " (", i.segments, " segments, ",
                                   i.not_handed_off, " not handed off)"));
    }
    return Fail(absl::StrCat("after ", absl::FormatDuration(options_.compaction_wait), ", ",
                             waiting.size(), " intervals older than the skip offset hold more than ",
                             options_.compacted_max_segments, " segments or segments not handed "
                             "off: ", absl::StrJoin(names, ", "), "; ", pending_handoff,
                             " used segments not handed off"));
  }
  Say(absl::StrFormat("every interval older than the skip offset holds at most %d segments "
                      "(waited %.1fs after ingestion)",
                      options_.compacted_max_segments,
                      absl::ToDoubleSeconds(compaction_wait_took_)));
  return kDemoOk;
}

void Demo::WriteSummary(int code) {
  if (options_.summary_json.empty()) return;
  const double ingest_s = absl::ToDoubleSeconds(ingest_took_);
  std::vector<std::string> intervals;
  for (const IntervalSegments& i : intervals_) {
    intervals.push_back(absl::StrFormat(
        "{\"start_ms\": %d, \"end_ms\": %d, \"segments\": %d, \"rows\": %d}", i.start_ms,
        i.end_ms, i.segments, i.rows));
  }
  const v1::CompactionStatus& last = tally_.last();
  std::string json = absl::StrFormat(
      "{\"exit_code\": %d, \"records\": %d, \"rate\": %g, \"max_rows_per_segment\": %d, "
      "\"segment_granularity\": \"%s\", \"compaction\": %s, \"ingest_seconds\": %.3f, "
      "\"ingest_rows_per_second\": %.1f, \"full_sequences_seconds\": %.3f, "
      "\"full_sequences_rows\": %d, \"full_sequences_rows_per_second\": %.1f, "
      "\"skip_offset_ms\": %d, \"cutoff_ms\": %d, "
      "\"compaction_wait_seconds\": %.3f, \"intervals\": [%s], "
      "\"compactions\": %d, \"rows_compacted\": %d, \"compacting_ms\": %d, "
      "\"input_segments\": %d, \"status_compactions\": %d, \"status_rows_compacted\": %d, "
      "\"status_segments_replaced\": %d, \"conflicts\": %d, \"snapshots_expired\": %d, "
      "\"last_error\": \"%s\"}\n",
      code, options_.records, options_.rate, options_.max_rows_per_segment,
      options_.segment_granularity, compaction_ ? "true" : "false", ingest_s,
      ingest_s > 0 ? options_.records / ingest_s : 0.0, absl::ToDoubleSeconds(full_sequences_took_),
      full_sequences_rows_,
      full_sequences_took_ > absl::ZeroDuration()
          ? full_sequences_rows_ / absl::ToDoubleSeconds(full_sequences_took_)
          : 0.0,
      absl::ToInt64Milliseconds(skip_offset_),
      cutoff_ms_, absl::ToDoubleSeconds(compaction_wait_took_), absl::StrJoin(intervals, ", "),
      tally_.compactions(), tally_.rows(), tally_.duration_ms(), tally_.input_segments(),
      last.compactions(), last.rows_compacted(), last.segments_replaced(), last.conflicts(),
      last.snapshots_expired(), JsonEscaped(last.last_error()));
  if (absl::Status s = WriteFileAtomically(options_.summary_json, json); !s.ok()) {
    Say(absl::StrCat("cannot write ", options_.summary_json, ": ", s.ToString()));
  }
}

int Demo::Audit(const std::map<int32_t, produce::PartitionCount>& produced, int64_t malformed) {
  audit::LiveAuditOptions options;
  options.datasource = kDatasource;
  options.kafka_cluster =
      real_kafka_ != nullptr ? kafka::ClusterKind::kKafka : kafka::ClusterKind::kDevBroker;
  options.expect_records = options_.records;
  for (const auto& [p, count] : produced) options.expect_records_by_partition[p] = count.records;
  options.expect_unparseable = malformed;
  Say(absl::StrCat("exactly-once audit (sluicectl verify ", kDatasource,
                   "): every committed Kafka range read back and counted, every segment file "
                   "verified, against the producer's counts:"));
  absl::StatusOr<audit::LiveAuditResult> result = audit::RunLiveAudit(*stub_, options);
  if (!result.ok())
    return Fail(absl::StrCat("the audit could not run: ", result.status().ToString()));
  std::string report = result->ToString();
  // Indent the report under its heading.
  std::string indented = "  ";
  for (char c : report) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  while (!indented.empty() && (indented.back() == ' ' || indented.back() == '\n')) {
    indented.pop_back();
  }
  Say(indented);
  if (!result->report.ok()) return Fail("the exactly-once audit found discrepancies");
  return kDemoOk;
}

int Demo::QueryTable(int64_t malformed) {
  if (options_.iceberg_python.empty() || options_.iceberg_query_script.empty() ||
      !options_.iceberg_table) {
    return kDemoOk;
  }
  const std::string store = absl::StrCat(root_, "/supervisor/metadata.db");
  const std::string command =
      absl::StrCat("'", options_.iceberg_python, "' '", options_.iceberg_query_script, "' '", store,
                   "' ", kDatasource, " ", options_.records - malformed, " 2>&1");
  Say(absl::StrCat("\nthe Iceberg table sluice.", kDatasource,
                   ", read by pyiceberg (SqlCatalog on the metadata store) and queried with "
                   "DuckDB (tools/demo/query_table.py):"));
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return Fail("cannot start the Iceberg query");
  char line[4096];
  while (fgets(line, sizeof(line), pipe) != nullptr) {
    std::string text(line);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    Say(absl::StrCat("  ", text));
  }
  const int status = pclose(pipe);
  if (status != 0) return Fail("the Iceberg table does not hold what was ingested");
  return kDemoOk;
}

void Demo::KeepRunning(int64_t records) {
  const std::string ctl = ToolPath("tools/sluicectl");
  const std::string ds = kDatasource;
  std::vector<std::string> workers;
  for (int i = 0; i < options_.workers; ++i) {
    workers.push_back(absl::StrCat(cluster::WorkerName(i), " ", cluster_->worker_address(i)));
  }
  std::vector<std::pair<std::string, std::string>> tries = {
      {absl::StrCat("export SLUICE_SUPERVISOR=", cluster_->supervisor_address(),
                    " SLUICE_AUTH_TOKEN_FILE=", cluster_->token_file("admin")),
       "sluicectl's defaults: the supervisor and the admin token"},
      {absl::StrCat(ctl, " status ", ds), "offsets, lag, groups, tasks"},
      {absl::StrCat(ctl, " segments ", ds), "published segments"},
      {absl::StrCat(ctl, " tasks ", ds, " --include_finished"), "every task and its row counts"},
      {absl::StrCat(ctl, " commit-log ", ds), "committed sequences"},
      {absl::StrCat(ctl, " verify ", ds, " --kafka_cluster=", real_kafka_ != nullptr ? "kafka" : "dev",
                    " --expect_records=", records),
       "the audit again"},
      {absl::StrCat(ToolPath("tools/sluice-produce"),
                    " --bootstrap=", cluster_->bootstrap_servers(), " --topic=", kTopic,
                    " --records=50000 --rate=5000"),
       "more data (then verify with the new total)"},
      {absl::StrCat(ToolPath("tools/segment/sluice-segment"), " stats ",
                    first_segment_.empty() ? root_ + "/deep-storage/..." : first_segment_),
       "a segment file"},
      {absl::StrCat("kcat -b ", cluster_->bootstrap_servers(), " -C -t ", kTopic,
                    " -o beginning -c 3"),
       "records in Kafka"},
      {absl::StrCat("grpcurl -plaintext ", cluster_->supervisor_address(), " list"),
       "if grpcurl is installed (reflection is on)"},
      {absl::StrCat("grpcurl -plaintext -H \"authorization: Bearer $(cat ",
                    cluster_->token_file("reader"), ")\" -d '{\"datasource\":\"", ds, "\"}' ",
                    cluster_->supervisor_address(),
                    " sluice.v1.SupervisorService/GetSupervisorStatus"),
       "grpcurl with the reader's token (without one: UNAUTHENTICATED)"},
      {absl::StrCat("echo 'broker down 1' > ", cluster_->broker_control_fifo()),
       "dev broker faults (tools/README.md)"},
  };
  if (!console_url_.empty()) {
    tries.insert(tries.begin() + 1,
                 {absl::StrCat("open ", console_url_, "   # token: cat ",
                               cluster_->token_file("admin"), " (or ", cluster_->token_file("reader"),
                               ")"),
                  "the web console (docs/console.md): sign in with the admin's or the reader's token"});
  }
  std::string text = "\nthe cluster keeps running (--keep_running); Ctrl-C stops it. Try:\n";
  for (const auto& [command, why] : tries) {
    absl::StrAppend(&text, "  ", command, "\n      # ", why, "\n");
  }
  absl::StrAppend(&text, "workers: ", absl::StrJoin(workers, ", "), "; data and logs in ", root_);
  Say(text);
  while (!Interrupted()) {
    if (absl::Status alive = cluster_->CheckAlive(); !alive.ok()) {
      Say(absl::StrCat("\n", alive.message()));
      return;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  Say("");
}

int Demo::Stop(int code) {
  if (cluster_ != nullptr) {
    stub_.reset();  // An open channel would hold up the supervisor's shutdown.
    Say("\nstopping every process (SIGTERM)...");
    const absl::Time start = absl::Now();
    absl::Status stopped = cluster_->StopAll();
    if (!stopped.ok()) {
      Say(absl::StrCat("FAILED: ", stopped.message()));
      if (code == kDemoOk) code = kDemoFailed;
    } else {
      Say(absl::StrCat("stopped cleanly in ",
                       absl::StrFormat("%.1fs", absl::ToDoubleSeconds(absl::Now() - start))));
    }
  }
  if (real_kafka_ != nullptr && real_kafka_->Running()) {
    if (absl::Status s = real_kafka_->Stop(); !s.ok()) {
      Say(absl::StrCat("FAILED: stopping Kafka: ", s.message()));
      if (code == kDemoOk) code = kDemoFailed;
    } else {
      Say("Apache Kafka stopped cleanly");
    }
  }
  if (code == kDemoOk && created_root_ && !options_.keep_data) {
    (void)RemoveAll(root_);
  } else if (!root_.empty()) {
    Say(absl::StrCat("data and logs kept in ", root_));
  }
  return code;
}

int Demo::Run() {
  if (std::string invalid = Validate(options_); !invalid.empty()) {
    out_ << "sluice-demo: " << invalid << "\n";
    return kDemoUsage;
  }
  start_ = absl::Now();
  root_ = options_.root_dir;
  if (root_.empty()) {
    std::string pattern = "/tmp/sluice-demo.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return Fail("cannot create a directory in /tmp");
    root_ = pattern;
    created_root_ = true;
  }
  Say(absl::StrCat("sluice demo: ", options_.records, " wiki edits into ", options_.partitions,
                   " Kafka partitions, ", options_.workers, " task workers, taskCount ",
                   options_.task_count, " x replicas ", options_.replicas, "\n"));
  if (absl::Status s = StartCluster(); !s.ok()) return Stop(Fail(s.ToString()));

  std::map<int32_t, produce::PartitionCount> produced;
  int64_t malformed = 0;
  int code = Ingest(&produced, &malformed);
  if (code == kDemoOk) code = compaction_ ? WaitForCompaction() : ShowSegments();
  if (code == kDemoOk) code = Audit(produced, malformed);
  if (code == kDemoOk) code = QueryTable(malformed);
  if (code == kDemoOk) {
    Say(absl::StrCat("\nall ", options_.records,
                     " records are in published segments exactly "
                     "once (",
                     absl::StrFormat("%.1fs", absl::ToDoubleSeconds(absl::Now() - start_)),
                     " since start)"));
    if (options_.keep_running) KeepRunning(options_.records);
  }
  WriteSummary(code);
  if (code != kDemoOk && code != kDemoInterrupted && cluster_ != nullptr) {
    for (const std::string& name : cluster_->names()) {
      Say(absl::StrCat("log of ", name, ": ", cluster_->log_path(name)));
    }
  }
  return Stop(code);
}

}  // namespace

int RunDemo(const DemoOptions& options, std::ostream& out) { return Demo(options, out).Run(); }

}  // namespace demo
}  // namespace sluice
