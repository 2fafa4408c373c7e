#include "task/read_loop.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice::task {
namespace {

PartitionReaderOptions ReaderOptions(const ReadLoopOptions& options, const RecordRouter* router) {
  PartitionReaderOptions reader;
  reader.router = router;
  reader.control = options.control;
  reader.supervisor = options.supervisor;
  reader.datasource = options.spec->datasource();
  reader.task_id = options.spec->task_id();
  reader.reset_offset_automatically = options.settings->tuning.reset_offset_automatically();
  reader.offset_out_of_range_retry = options.tuning.offset_out_of_range_retry;
  reader.metrics = options.metrics;
  reader.log_prefix = options.log_prefix;
  return reader;
}

RecordIngesterOptions IngesterOptions(const ReadLoopOptions& options, RecordRouter* router,
                                      OpenSegments* segments, PartitionReader* reader) {
  RecordIngesterOptions ingester;
  ingester.spec = options.spec;
  ingester.settings = options.settings;
  ingester.engine = options.engine;
  ingester.router = router;
  ingester.segments = segments;
  ingester.reader = reader;
  ingester.control = options.control;
  ingester.log_prefix = options.log_prefix;
  return ingester;
}

CheckpointTriggersOptions CheckpointOptions(const ReadLoopOptions& options,
                                            const RecordRouter* router) {
  CheckpointTriggersOptions checkpoints;
  checkpoints.spec = options.spec;
  checkpoints.settings = options.settings;
  checkpoints.router = router;
  checkpoints.control = options.control;
  checkpoints.supervisor = options.supervisor;
  checkpoints.metrics = options.metrics;
  checkpoints.early_checkpoint_fraction = options.tuning.early_checkpoint_fraction;
  checkpoints.notify = options.notify;
  return checkpoints;
}

PersistPlannerOptions PlannerOptions(const ReadLoopOptions& options, const TaskFiles& files,
                                     OpenSegments* segments, const RecordRouter* router) {
  PersistPlannerOptions planner;
  planner.settings = options.settings;
  planner.segments = segments;
  planner.router = router;
  planner.publisher = options.publisher;
  planner.persister = PersisterOptions{files.dir, options.metrics, options.log_prefix,
                                       options.build_slots};
  return planner;
}

}  // namespace

ReadLoop::ReadLoop(ReadLoopOptions options)
    : options_(std::move(options)),
      spec_(*options_.spec),
      settings_(*options_.settings),
      files_(options_.task_dir),
      router_(settings_.partitions),
      segments_(options_.engine, options_.allocator, settings_.segment_granularity,
                settings_.partitions),
      reader_(ReaderOptions(options_, &router_)),
      ingester_(IngesterOptions(options_, &router_, &segments_, &reader_)),
      checkpoints_(CheckpointOptions(options_, &router_)),
      persists_(PlannerOptions(options_, files_, &segments_, &router_)) {}

void ReadLoop::Run() {
  persists_.Start();
  absl::Status outcome = RunLoop();
  // Nothing is written behind Finish's back (it may remove the spills).
  const absl::Status persisted = persists_.WaitPersisted();
  if (outcome.ok() && !persisted.ok()) outcome = persisted;
  Finish(outcome);
  persists_.Stop();
}

absl::Status ReadLoop::RunLoop() {
  TaskControl& control = *options_.control;
  SequencePublisher& publisher = *options_.publisher;
  SetState(v1::TASK_STATE_STARTING);
  SLUICE_RETURN_IF_ERROR(Initialize());
  SetState(v1::TASK_STATE_READING);
  LOG(INFO) << options_.log_prefix << " reading "
            << (spec_.topic_pattern().empty() ? spec_.topic()
                                              : "topicPattern " + spec_.topic_pattern())
            << " from "
            << FormatOffsets(control.current());
  KafkaBatch batch;
  size_t next = 0;
  std::vector<OffsetOutOfRange> out_of_range;
  while (true) {
    if (control.stop_requested()) return absl::OkStatus();
    SLUICE_RETURN_IF_ERROR(publisher.failure());
    SLUICE_RETURN_IF_ERROR(persists_.failure());
    if (persists_.wanted()) SLUICE_RETURN_IF_ERROR(StartPersist());
    PublishProgress();
    if (checkpoints_.Park()) {
      if (control.stop_requested()) return absl::OkStatus();
      RefreshRoutes();
    }
    checkpoints_.TakeResume();
    // End offsets set (while parked, or while reading): route by them.
    if (const int64_t generation = control.sequences_generation();
        generation != routes_generation_) {
      routes_generation_ = generation;
      RefreshRoutes();
    }
    checkpoints_.AskIfDue();
    if (options_.sequences->last_published_id() > pruned_through_) PrunePublished();
    SLUICE_RETURN_IF_ERROR(EnqueueClosedSequences());
    if (reader_.ReachedFinalEnd()) break;
    if (router_.final_end_fixed()) {
      SLUICE_ASSIGN_OR_RETURN(const bool reassigned, reader_.Reassign());
      // Records fetched for the old assignment will come again.
      if (reassigned) batch.Clear();
    }

    if (next >= batch.size()) {
      // Every record taken so far is processed: a partition whose end the
      // consumer reached is read through that end, even when its last
      // offsets held no record for us (transaction markers, aborted records).
      // Without this a task whose end offset follows a marker never finished
      // and lag never reached 0 on a transactional topic (real Kafka only:
      // the dev broker writes no markers).
      if (reader_.AdvanceToReachedEnds()) persists_.MarkDirty();
      if (reader_.ReachedFinalEnd()) continue;
      out_of_range.clear();
      SLUICE_RETURN_IF_ERROR(reader_.Poll(settings_.poll_timeout, options_.tuning.max_batch_records,
                                          &batch, &out_of_range));
      next = 0;
      if (!out_of_range.empty()) {
        SLUICE_RETURN_IF_ERROR(reader_.HandleOutOfRange(out_of_range));
        batch.Clear();
        continue;
      }
    }
    const size_t before = next;
    SLUICE_RETURN_IF_ERROR(ProcessRecords(batch, &next));
    if (next > before) SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("task.while_reading"));
    PublishProgress();

    const absl::Time now = absl::Now();
    persists_.OnTime(now);
    checkpoints_.OnTime(now);
  }

  // Every partition reached the final end offsets.
  if (persists_.dirty()) SLUICE_RETURN_IF_ERROR(Persist());
  SLUICE_RETURN_IF_ERROR(EnqueueClosedSequences());
  SetState(v1::TASK_STATE_PUBLISHING);
  LOG(INFO) << options_.log_prefix << " read to the final end "
            << FormatOffsets(options_.sequences->TaskEnd().value_or(OffsetMap()))
            << "; publishing the rest";
  SLUICE_RETURN_IF_ERROR(reader_.AssignNone());
  while (!publisher.WaitIdle(absl::Milliseconds(200))) {
    if (control.stop_requested()) return absl::OkStatus();
    SLUICE_RETURN_IF_ERROR(publisher.failure());
  }
  return publisher.failure();
}

absl::Status ReadLoop::Initialize() {
  SLUICE_RETURN_IF_ERROR(MakeDirs(files_.spill_dir()));
  SLUICE_ASSIGN_OR_RETURN(const bool from_disk, options_.sequences->Load(settings_.checkpoints));
  pruned_through_ = options_.sequences->last_published_id();
  RefreshRoutes();

  SLUICE_ASSIGN_OR_RETURN(std::optional<state::RestorePoint> point,
                          Persister::LoadRestorePoint(files_.restore_point()));
  if (point.has_value()) {
    SLUICE_RETURN_IF_ERROR(Restore(*point));
  } else {
    // Start at the first unpublished sequence (or the end if none is left).
    reader_.StartAtFirstRoute();
  }
  // Offsets before the first unpublished sequence would re-ingest published
  // records: the files do not belong together.
  SLUICE_RETURN_IF_ERROR(reader_.CheckNotBeforeFirstRoute());
  // Drop spills no restore point names (a persist that did not complete, or
  // sequences published before the restart) and half-built segment files.
  SLUICE_RETURN_IF_ERROR(RemoveAllBut(files_.spill_dir(), segments_.SpillFiles()));
  SLUICE_RETURN_IF_ERROR(RemoveAll(files_.segment_dir()));

  KafkaConsumerOptions consumer_options;
  consumer_options.topic = spec_.topic();
  consumer_options.stream_partitions = settings_.stream_partitions;
  consumer_options.properties.insert(spec_.consumer_properties().begin(),
                                     spec_.consumer_properties().end());
  consumer_options.client_id = spec_.task_id();
  consumer_options.cluster_kind = options_.tuning.kafka_cluster;
  consumer_options.policy = options_.tuning.kafka_policy;
  // The prefetch queue counts against the task's memory: a quarter of its
  // maxBytesInMemory at most (librdkafka's default is 64 MiB per consumer).
  consumer_options.max_prefetch_bytes = settings_.tuning.max_bytes_in_memory() / 4;
  SLUICE_RETURN_IF_ERROR(reader_.Open(std::move(consumer_options)));
  SLUICE_RETURN_IF_ERROR(ingester_.Initialize());
  options_.publisher->Start();
  initialized_ = true;

  if (from_disk) {
    const OffsetMap current = reader_.Offsets();
    for (const Sequence& s : router_.routes()) {
      if (!SequenceList::IsFullyRead(s, current)) break;
      restored_through_ = s.id;
    }
    LOG(INFO) << options_.log_prefix << " restored " << router_.route_count()
              << " unpublished sequence(s), " << segments_.size()
              << " segment(s) in progress, reading from " << FormatOffsets(current);
  }
  PublishProgress();
  persists_.StartPeriod();
  checkpoints_.RestartPeriod();
  SLUICE_RETURN_IF_ERROR(EnqueueClosedSequences());
  return reader_.Reassign().status();
}

absl::Status ReadLoop::Restore(const state::RestorePoint& point) {
  SLUICE_RETURN_IF_ERROR(reader_.RestoreOffsets(FromProto(point.current_offsets())));
  for (const state::SegmentState& record : point.segments()) {
    if (!router_.Has(record.sequence_id())) continue;  // published since
    std::vector<std::string> spill_paths;
    for (const std::string& name : record.spill_files()) {
      spill_paths.push_back(files_.spill(name));
      if (!PathExists(spill_paths.back())) {
        return absl::DataLossError(
            absl::StrCat("spill ", name, " named by the restore point is missing"));
      }
    }
    if (!record.built_file().empty() && !PathExists(files_.spill(record.built_file()))) {
      return absl::DataLossError(absl::StrCat("built segment file ", record.built_file(),
                                              " named by the restore point is missing"));
    }
    router_.AddRows(record.sequence_id(), record.spilled_rows());
    SLUICE_RETURN_IF_ERROR(segments_.Restore(record, spill_paths));
  }
  for (const state::SequenceStats& stats : point.sequence_stats()) router_.RestoreCounts(stats);
  ingester_.RestoreCounters(point.counters());
  persists_.Restore(point);
  return absl::OkStatus();
}

void ReadLoop::RefreshRoutes() { router_.Refresh(options_.sequences->Snapshot()); }

void ReadLoop::PrunePublished() {
  const int32_t published = options_.sequences->last_published_id();
  RefreshRoutes();
  segments_.Prune(published);
  pruned_through_ = published;
}

absl::Status ReadLoop::ProcessRecords(const KafkaBatch& batch, size_t* next) {
  size_t i = *next;
  const size_t chunk = std::max<size_t>(1, options_.tuning.claim_chunk_records);
  while (i < batch.size() && !options_.control->interrupted()) {
    // Claim the chunk before routing it: end offsets set while reading are
    // checked against the claims (TaskControl::SetEndOffsets), so none can
    // fall inside it.
    const size_t chunk_end = std::min(batch.size(), i + chunk);
    claim_.clear();
    for (size_t k = i; k < chunk_end; ++k) {
      int64_t& claimed = claim_[batch[k].partition];
      claimed = std::max(claimed, batch[k].offset + 1);
    }
    const int64_t generation = options_.control->Claim(claim_);
    if (generation != routes_generation_) {
      routes_generation_ = generation;
      RefreshRoutes();
    }
    const size_t chunk_start = i;
    for (; i < chunk_end; ++i) {
      // Between two records: the only place the loop stops for a pause.
      if (options_.control->interrupted()) break;
      SLUICE_ASSIGN_OR_RETURN(const RecordIngester::Outcome outcome, ingester_.Ingest(batch, i));
      if (outcome.read) persists_.MarkDirty();
      if (outcome.route >= 0) {
        persists_.OnRowAdded(ingester_.counters());
        checkpoints_.OnRow(outcome.route, outcome.segment_rows, outcome.sequence_rows);
      }
      if (persists_.wanted()) SLUICE_RETURN_IF_ERROR(StartPersist());
    }
    reader_.NoteLastRead(batch, chunk_start, i);
  }
  *next = i;
  return absl::OkStatus();
}

absl::Status ReadLoop::Persist() {
  SLUICE_RETURN_IF_ERROR(StartPersist());
  return persists_.WaitPersisted();
}

absl::Status ReadLoop::StartPersist(const std::vector<Sequence>& closed) {
  SLUICE_RETURN_IF_ERROR(persists_.WaitPersisted());
  if (options_.sequences->last_published_id() > pruned_through_) PrunePublished();
  persists_.Submit(closed, reader_.Offsets(), ingester_.counters());
  ingester_.ClearInMemory();
  PublishProgress();
  return absl::OkStatus();
}

absl::Status ReadLoop::EnqueueClosedSequences() {
  const OffsetMap current = reader_.Offsets();
  // Copies: the persist below may refresh the routes.
  std::vector<Sequence> closed;
  for (const Sequence& s : router_.routes()) {
    if (s.id <= enqueued_through_) continue;
    if (!SequenceList::IsFullyRead(s, current)) break;
    closed.push_back(s);
  }
  if (closed.empty()) return absl::OkStatus();
  // Everything of these sequences must be on disk before the publisher
  // reads it (also what a persist still running holds): their rows in
  // memory built straight into their segment files, or spilled. The read
  // loop goes on meanwhile; the publisher waits for that persist.
  if (persists_.dirty() || ingester_.counters().rows_in_memory > 0) {
    SLUICE_RETURN_IF_ERROR(StartPersist(closed));
  }
  const int64_t durable_at = persists_.submitted();  // the last persist submitted
  for (const Sequence& s : closed) {
    ClosedSequence sequence;
    sequence.sequence = s;
    sequence.segments = segments_.RecordsOf(s.id);
    sequence.counts = router_.CountsOf(s.id);
    sequence.restored = s.id <= restored_through_;
    sequence.closed_at = absl::Now();
    if (persists_.written() < durable_at) {
      PersistPlanner* persists = &persists_;
      sequence.durable = [persists, durable_at](const std::function<bool()>& stopping) {
        return persists->AwaitPersisted(durable_at, stopping);
      };
    }
    LOG(INFO) << options_.log_prefix << " sequence " << s.name << " "
              << FormatOffsets(s.start) << " -> " << FormatOffsets(s.end)
              << " is fully read (" << router_.RowsOf(s.id) << " rows in "
              << sequence.segments.size() << " segment(s)): publishing";
    enqueued_through_ = s.id;
    options_.publisher->Enqueue(std::move(sequence));
  }
  return absl::OkStatus();
}

void ReadLoop::PublishProgress() {
  const IngestCounters& counters = ingester_.counters();
  const TaskMetrics& metrics = options_.metrics;
  metrics.rows_processed->Increment(counters.processed - exported_.processed);
  metrics.rows_unparseable->Increment(counters.unparseable - exported_.unparseable);
  metrics.rows_thrown_away->Increment(counters.thrown_away - exported_.thrown_away);
  exported_ = counters;
  v1::RowStats stats;
  stats.set_processed(counters.processed);
  stats.set_processed_bytes(counters.processed_bytes);
  stats.set_unparseable(counters.unparseable);
  stats.set_thrown_away(counters.thrown_away);
  stats.set_persists(persists_.written());
  stats.set_rows_in_memory(counters.rows_in_memory);
  stats.set_bytes_in_memory(counters.bytes_in_memory);
  options_.control->PublishProgress(reader_.Offsets(), stats, reader_.LastReadTimestamps());
}

void ReadLoop::SetState(v1::TaskState state) {
  if (options_.control->SetState(state)) options_.notify();
}

void ReadLoop::PersistAtEnd(const char* when) {
  if (!initialized_ || !persists_.dirty()) return;
  const absl::Status persisted = Persist();
  if (!persisted.ok()) {
    LOG(ERROR) << options_.log_prefix << " persist at " << when << ": " << persisted;
  }
}

void ReadLoop::Finish(absl::Status outcome) {
  TaskControl& control = *options_.control;
  SequencePublisher& publisher = *options_.publisher;
  std::string reason;
  const StopKind kind = control.stop_kind(&reason);
  const bool real_failure = !outcome.ok() && outcome.code() != absl::StatusCode::kCancelled;
  if (kind == StopKind::kShutdown && !real_failure) {
    // The worker stops; the task goes on after its restart.
    PersistAtEnd("shutdown");
    publisher.Stop();
    reader_.Release();
    LOG(INFO) << options_.log_prefix << " shut down; it resumes when the worker restarts";
    return;
  }
  v1::TaskState final_state;
  std::string error;
  if (real_failure) {
    final_state = v1::TASK_STATE_FAILED;
    error = std::string(outcome.message());
    LOG(ERROR) << options_.log_prefix << " FAILED: " << outcome;
  } else if (kind == StopKind::kKill) {
    final_state = v1::TASK_STATE_FAILED;
    error = absl::StrCat("killed by the supervisor: ", reason);
  } else if (kind == StopKind::kGraceful) {
    PublishProgress();
    PersistAtEnd("stop");
    publisher.Stop();
    final_state = control.AllReadIsPublished() ? v1::TASK_STATE_SUCCESS : v1::TASK_STATE_STOPPED;
    error = absl::StrCat("stopped: ", reason);
  } else {
    final_state = v1::TASK_STATE_SUCCESS;
  }
  publisher.Stop();
  reader_.Release();
  // Whatever ended the task, its counters are exact: the records of the
  // batch it was reading when it failed count too (the loop publishes them
  // only after a whole batch), and an ended task holds nothing in memory
  // (its index and spills are dropped below).
  ingester_.ClearInMemory();
  PublishProgress();
  control.MarkEnded(reader_.Offsets());
  options_.end(final_state, std::move(error));
}

}  // namespace sluice::task
