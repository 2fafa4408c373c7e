#include "task/read_loop.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "task/text_util.h"

namespace sluice::task {
ReadLoop::ReadLoop(ReadLoopOptions options)
    : options_(std::move(options)),
      spec_(*options_.spec),
      settings_(*options_.settings),
      files_(options_.task_dir),
      router_(settings_.partitions),
      segments_(options_.engine, options_.allocator, settings_.segment_granularity,
                settings_.partitions),
      persister_(PersisterOptions{files_.restore_point(), options_.metrics, options_.log_prefix,
                                  options_.build_slots}) {
  current_offsets_.assign(settings_.partitions.size(), 0);
  last_read_timestamps_.assign(settings_.partitions.size(), -1);
  last_read_noted_.assign(settings_.partitions.size(), false);
  asker_ = [this](const Sequence& latest) {
    v1::CheckpointDataSourceMetadataRequest request;
    request.set_datasource(spec_.datasource());
    request.set_task_id(spec_.task_id());
    request.set_group_id(spec_.group_id());
    request.set_base_sequence_name(spec_.base_sequence_name());
    request.set_sequence_id(latest.id);
    ToProto(latest.start, request.mutable_start_offsets());
    return options_.supervisor->CheckpointDataSourceMetadata(request);
  };
}

void ReadLoop::Run() {
  persister_.Start();
  absl::Status outcome = RunLoop();
  // Nothing is written behind Finish's back (it may remove the spills).
  const absl::Status persisted = persister_.WaitPersisted();
  if (outcome.ok() && !persisted.ok()) outcome = persisted;
  Finish(outcome);
  persister_.Stop();
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
    SLUICE_RETURN_IF_ERROR(persister_.failure());
    if (persist_wanted_) SLUICE_RETURN_IF_ERROR(StartPersist());
    if (MaybePark()) {
      if (control.stop_requested()) return absl::OkStatus();
      RefreshRoutes();
      early_asked_id_ = -1;
    }
    if (control.TakeResume(&seen_resume_generation_)) {
      next_checkpoint_time_ = absl::Now() + settings_.timings.intermediate_handoff_period;
    }
    // End offsets set (while parked, or while reading): route by them.
    if (const int64_t generation = control.sequences_generation();
        generation != routes_generation_) {
      routes_generation_ = generation;
      RefreshRoutes();
    }
    control.AskIfDue(asker_);
    if (options_.sequences->last_published_id() > pruned_through_) PrunePublished();
    SLUICE_RETURN_IF_ERROR(EnqueueClosedSequences());
    if (ReachedFinalEnd()) break;
    if (router_.final_end_fixed()) {
      SLUICE_ASSIGN_OR_RETURN(const bool reassigned, Reassign());
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
      AdvanceToReachedEnds();
      if (ReachedFinalEnd()) continue;
      out_of_range.clear();
      SLUICE_RETURN_IF_ERROR(consumer_->Poll(
          settings_.poll_timeout, options_.tuning.max_batch_records, &batch, &out_of_range));
      ShowAuthFailures();
      next = 0;
      if (!out_of_range.empty()) {
        SLUICE_RETURN_IF_ERROR(HandleOutOfRange(out_of_range));
        batch.Clear();
        continue;
      }
    }
    const size_t before = next;
    SLUICE_RETURN_IF_ERROR(ProcessRecords(batch, &next));
    if (next > before) SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("task.while_reading"));
    PublishProgress();

    const absl::Time now = absl::Now();
    if (dirty_ && now >= last_persist_ + settings_.timings.intermediate_persist_period) {
      persist_wanted_ = true;
    }
    if (now >= next_checkpoint_time_) {
      // The time trigger never parks by itself when checkpoints are early.
      RequestCheckpoint("intermediateHandoffPeriod", OpenLatestId(), !EarlyCheckpoints());
    }
  }

  // Every partition reached the final end offsets.
  if (dirty_) SLUICE_RETURN_IF_ERROR(Persist());
  SLUICE_RETURN_IF_ERROR(EnqueueClosedSequences());
  SetState(v1::TASK_STATE_PUBLISHING);
  LOG(INFO) << options_.log_prefix << " read to the final end "
            << FormatOffsets(options_.sequences->TaskEnd().value_or(OffsetMap()))
            << "; publishing the rest";
  SLUICE_RETURN_IF_ERROR(consumer_->Assign({}));
  while (!publisher.WaitIdle(absl::Milliseconds(200))) {
    if (control.stop_requested()) return absl::OkStatus();
    SLUICE_RETURN_IF_ERROR(publisher.failure());
  }
  return publisher.failure();
}

// A refused login shows in the task's status while it lasts (the consumer
// keeps trying; records come again once the credentials are right) and
// counts in the metric.
void ReadLoop::ShowAuthFailures() {
  if (const int64_t failures = consumer_->TakeAuthFailures(); failures > 0) {
    options_.metrics.KafkaAuthFailures(consumer_->auth_mechanism())->Increment(failures);
  }
  if (consumer_->auth_error() == shown_auth_error_) return;
  shown_auth_error_ = consumer_->auth_error();
  options_.control->SetError(shown_auth_error_);
  if (!shown_auth_error_.empty()) {
    LOG(WARNING) << options_.log_prefix << " " << shown_auth_error_;
  } else {
    LOG(INFO) << options_.log_prefix << " Kafka accepts the consumer's login again";
  }
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
    for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
      current_offsets_[slot] = router_.route_count() == 0 ? router_.task_end(slot)
                                                          : router_.route_start(0, slot);
    }
  }
  // Offsets before the first unpublished sequence would re-ingest published
  // records: the files do not belong together.
  if (router_.route_count() > 0) {
    for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
      if (current_offsets_[slot] < router_.route_start(0, slot)) {
        return absl::DataLossError(absl::StrCat(
            "restore point offset ", current_offsets_[slot], " of partition ",
            router_.PartitionOf(slot), " is before the first unpublished sequence ",
            router_.routes()[0].name));
      }
    }
  }
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
  SLUICE_ASSIGN_OR_RETURN(consumer_, KafkaConsumer::Create(std::move(consumer_options)));
  KafkaConsumer* consumer = consumer_.get();
  options_.control->SetWaker([consumer] { consumer->Wake(); });
  parser_ = options_.engine->NewParser();
  if (spec_.input_format().type() == "kafka") {
    SLUICE_ASSIGN_OR_RETURN(envelope_builder_, RecordEnvelopeBuilder::Create(spec_.input_format()));
    // The Kafka timestamp as text only for a spec that reads it as text.
    envelope_builder_->set_timestamp_text(
        parser_->ReadsEnvelopeColumnText(envelope_builder_->timestamp_column()));
  }
  if (spec_.has_header_based_filter_config()) {
    SLUICE_ASSIGN_OR_RETURN(header_filter_, HeaderFilter::Create(spec_.header_based_filter_config()));
  }
  options_.publisher->Start();
  initialized_ = true;

  if (from_disk) {
    const OffsetMap current = LocalOffsets();
    for (const Sequence& s : router_.routes()) {
      if (!SequenceList::IsFullyRead(s, current)) break;
      restored_through_ = s.id;
    }
    LOG(INFO) << options_.log_prefix << " restored " << router_.route_count()
              << " unpublished sequence(s), " << segments_.size()
              << " segment(s) in progress, reading from " << FormatOffsets(LocalOffsets());
  }
  PublishProgress();
  last_persist_ = absl::Now();
  next_checkpoint_time_ = absl::Now() + settings_.timings.intermediate_handoff_period;
  SLUICE_RETURN_IF_ERROR(EnqueueClosedSequences());
  return Reassign().status();
}

absl::Status ReadLoop::Restore(const state::RestorePoint& point) {
  const OffsetMap current = FromProto(point.current_offsets());
  if (current.size() != settings_.partitions.size()) {
    return absl::DataLossError(absl::StrCat("restore point offsets ", FormatOffsets(current),
                                            " do not cover the task's partitions"));
  }
  for (const auto& [p, o] : current) {
    const int slot = router_.SlotOf(p);
    if (slot < 0) {
      return absl::DataLossError(
          absl::StrCat("restore point names partition ", p, " which the task does not read"));
    }
    current_offsets_[slot] = o;
  }
  for (const state::SegmentState& record : point.segments()) {
    if (!router_.Has(record.sequence_id())) continue;  // published since
    for (const std::string& name : record.spill_files()) {
      if (!PathExists(absl::StrCat(files_.spill_dir(), "/", name))) {
        return absl::DataLossError(
            absl::StrCat("spill ", name, " named by the restore point is missing"));
      }
    }
    if (!record.built_file().empty() &&
        !PathExists(absl::StrCat(files_.spill_dir(), "/", record.built_file()))) {
      return absl::DataLossError(absl::StrCat("built segment file ", record.built_file(),
                                              " named by the restore point is missing"));
    }
    router_.AddRows(record.sequence_id(), record.spilled_rows());
    SLUICE_RETURN_IF_ERROR(segments_.Restore(record, files_.spill_dir()));
  }
  for (const state::SequenceStats& stats : point.sequence_stats()) router_.RestoreCounts(stats);
  counters_.processed = point.counters().processed();
  counters_.processed_bytes = point.counters().processed_bytes();
  counters_.unparseable = point.counters().unparseable();
  counters_.thrown_away = point.counters().thrown_away();
  counters_.persists = point.counters().persists();
  persister_.set_persists_written(counters_.persists);
  next_spill_number_ = point.next_spill_number();
  return absl::OkStatus();
}

void ReadLoop::RefreshRoutes() { router_.Refresh(options_.sequences->Snapshot()); }

void ReadLoop::PrunePublished() {
  const int32_t published = options_.sequences->last_published_id();
  RefreshRoutes();
  segments_.Prune(published);
  pruned_through_ = published;
}

absl::StatusOr<bool> ReadLoop::Reassign() {
  OffsetMap wanted;
  for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
    if (current_offsets_[slot] < router_.task_end(slot)) {
      wanted[router_.PartitionOf(slot)] = current_offsets_[slot];
    }
  }
  // Only a change of the partition set needs a new assignment; the consumer
  // position of an assigned partition is already right.
  bool same = wanted.size() == assigned_.size();
  for (auto a = wanted.begin(), b = assigned_.begin(); same && a != wanted.end(); ++a, ++b) {
    same = a->first == b->first;
  }
  if (same && assignment_valid_) return false;
  SLUICE_RETURN_IF_ERROR(consumer_->Assign(wanted));
  assigned_ = std::move(wanted);
  assignment_valid_ = true;
  return true;
}

void ReadLoop::AdvanceToReachedEnds() {
  for (const auto& [p, end] : consumer_->TakeReachedEnds()) {
    const int slot = router_.SlotOf(p);
    if (slot < 0) continue;
    int64_t& current = current_offsets_[slot];
    const int64_t to = std::min(end, router_.task_end(slot));
    if (to <= current) continue;
    VLOG(1) << options_.log_prefix << " partition " << p << ": at its end " << end
            << ", offsets [" << current << ", " << to << ") hold no record for this reader";
    current = to;
    dirty_ = true;
  }
}

bool ReadLoop::ReachedFinalEnd() const {
  if (!router_.final_end_fixed()) return false;
  for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
    if (current_offsets_[slot] < router_.task_end(slot)) return false;
  }
  return true;
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
      SLUICE_RETURN_IF_ERROR(ProcessRecord(batch, i));
      if (persist_wanted_) SLUICE_RETURN_IF_ERROR(StartPersist());
    }
    NoteLastRead(batch, chunk_start, i);
  }
  *next = i;
  return absl::OkStatus();
}

void ReadLoop::NoteLastRead(const KafkaBatch& batch, size_t begin, size_t end) {
  // From the end: the first record met of each partition is its last one
  // read (records past the task's final end were skipped, not read).
  size_t noted = 0;
  for (size_t k = end; k > begin && noted < last_read_noted_.size(); --k) {
    const KafkaRecord record = batch[k - 1];
    const int slot = router_.SlotOf(record.partition);
    if (slot < 0 || last_read_noted_[slot] || record.offset >= router_.task_end(slot)) continue;
    last_read_noted_[slot] = true;
    ++noted;
    last_read_timestamps_[slot] = batch.Timestamp(k - 1);
  }
  std::fill(last_read_noted_.begin(), last_read_noted_.end(), false);
}

absl::Status ReadLoop::ProcessRecord(const KafkaBatch& batch, size_t i) {
  const KafkaRecord record = batch[i];
  const int32_t p = record.partition;
  const int slot = router_.SlotOf(p);
  if (slot < 0) {
    return absl::InternalError(
        absl::StrCat("got a record of partition ", p, ", which this task does not read"));
  }
  int64_t& current = current_offsets_[slot];
  const int64_t offset = record.offset;
  if (offset < current) {
    return absl::DataLossError(absl::StrCat("offset went backwards on partition ", p, ": got ",
                                            offset, " after reading up to ", current - 1));
  }
  if (offset >= router_.task_end(slot)) return absl::OkStatus();  // past the final end: skip
  const int route = router_.Route(slot, offset);
  if (route < 0) {
    return absl::InternalError(
        absl::StrCat("no sequence takes offset ", offset, " of partition ", p));
  }
  state::PartitionCounts& counts = router_.counts(route, slot);

  RowParseError error;
  const ParsedRow* row;
  if (!envelope_builder_ && !header_filter_) {
    row = parser_->Parse(record.value, &error);
  } else {
    // The kafka input format or the header filter: the record's envelope.
    batch.ReadEnvelope(i, &envelope_meta_);
    const segment::RecordEnvelope* envelope = nullptr;
    if (header_filter_) {
      const HeaderFilter::Outcome outcome = header_filter_->Evaluate(envelope_meta_, &error.message);
      if (outcome == HeaderFilter::Outcome::kSkip) {
        // Filtered out before parsing: thrown away, like a row outside the
        // message time window.
        counts.set_thrown_away(counts.thrown_away() + 1);
        ++counters_.thrown_away;
        current = offset + 1;
        dirty_ = true;
        return absl::OkStatus();
      }
      if (outcome == HeaderFilter::Outcome::kBadHeader) error.kind = "BAD_HEADER";
    }
    if (error.kind.empty() && envelope_builder_) {
      envelope = envelope_builder_->Build(record, envelope_meta_, &error.message);
      if (envelope == nullptr) error.kind = "BAD_HEADER";
    }
    row = !error.kind.empty() ? nullptr
          : envelope != nullptr ? parser_->Parse(record.value, *envelope, &error)
                                : parser_->Parse(record.value, &error);
  }
  // Counted and sampled as unparseable; reading goes on past it.
  auto unparseable = [&]() -> absl::Status {
    counts.set_unparseable(counts.unparseable() + 1);
    ++counters_.unparseable;
    current = offset + 1;
    dirty_ = true;
    return RecordParseError(record, error);
  };
  if (row == nullptr) return unparseable();
  const int64_t time = row->timestamp_ms();
  // Thrown away: filtered out by the transformSpec, or outside the message
  // time window (Druid's lateMessageRejection / earlyMessageRejection).
  if (row->thrown_away() ||
      (spec_.minimum_message_time_ms() != 0 && time < spec_.minimum_message_time_ms()) ||
      (spec_.maximum_message_time_ms() != 0 && time > spec_.maximum_message_time_ms())) {
    counts.set_thrown_away(counts.thrown_away() + 1);
    ++counters_.thrown_away;
    current = offset + 1;
    dirty_ = true;
    return absl::OkStatus();
  }
  SLUICE_ASSIGN_OR_RETURN(SegmentBuild * build, segments_.For(router_.routes()[route], time));
  SegmentIndex& index = *build->index;
  const int64_t rows_before = index.rows();
  const int64_t bytes_before = index.estimated_bytes();
  if (absl::Status added = index.Add(*row, p, offset); !added.ok()) {
    if (!absl::IsOutOfRange(added)) return added;
    // The record would bring its segment past a bound (the discovered
    // dimensions): unparseable, like a value beyond the value limit.
    error.kind = "VALUE_TOO_LARGE";
    error.message = std::string(added.message());
    return unparseable();
  }
  const int64_t rows_added = index.rows() - rows_before;
  build->rows_total += rows_added;
  ++build->records_per_slot[slot];
  counts.set_rows(counts.rows() + 1);
  ++counters_.processed;
  counters_.processed_bytes += static_cast<int64_t>(record.value.size());
  counters_.rows_in_memory += rows_added;
  counters_.bytes_in_memory += index.estimated_bytes() - bytes_before;
  int64_t& sequence_rows = router_.rows(route);
  sequence_rows += rows_added;
  current = offset + 1;
  dirty_ = true;

  // The set being persisted is still in memory while the next one fills:
  // each set persists at half of maxBytesInMemory, so both together stay
  // within it.
  if (counters_.rows_in_memory >= settings_.tuning.max_rows_in_memory() ||
      2 * counters_.bytes_in_memory >= settings_.tuning.max_bytes_in_memory()) {
    persist_wanted_ = true;
  }
  // Checkpoint triggers concern the latest, open sequence only.
  if (router_.IsOpenLatest(route)) {
    const int32_t id = router_.routes()[route].id;
    const int64_t max_rows = settings_.tuning.max_rows_per_segment();
    const int64_t max_total = settings_.tuning.max_total_rows();
    if (build->rows_total >= max_rows) {
      RequestCheckpoint("maxRowsPerSegment", id, /*full=*/true);
    } else if (sequence_rows >= max_total) {
      RequestCheckpoint("maxTotalRows", id, /*full=*/true);
    } else if (EarlyCheckpoints() && early_asked_id_ != id) {
      const double fraction = options_.tuning.early_checkpoint_fraction;
      if (static_cast<double>(build->rows_total) >= fraction * static_cast<double>(max_rows)) {
        RequestCheckpoint("maxRowsPerSegment (early)", id, /*full=*/false);
      } else if (static_cast<double>(sequence_rows) >=
                 fraction * static_cast<double>(max_total)) {
        RequestCheckpoint("maxTotalRows (early)", id, /*full=*/false);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ReadLoop::RecordParseError(const KafkaRecord& record, const RowParseError& error) {
  LOG_EVERY_N(WARNING, 100) << options_.log_prefix << " unparseable record at partition "
                            << record.partition << " offset " << record.offset << ": "
                            << error.kind << ": " << error.message << " (" << google::COUNTER
                            << " so far)";
  v1::ParseErrorSample sample;
  sample.set_partition(record.partition);
  sample.set_offset(record.offset);
  sample.set_kind(error.kind);
  sample.set_message(SanitizeUtf8(error.message, 512));
  sample.set_time_ms(NowMillis());
  sample.set_snippet(SanitizeUtf8(record.value, 256));
  options_.control->AddParseError(sample, settings_.tuning.max_saved_parse_exceptions(),
                                  counters_.unparseable);
  if (settings_.tuning.has_max_parse_exceptions() &&
      counters_.unparseable > settings_.tuning.max_parse_exceptions()) {
    return absl::FailedPreconditionError(absl::StrCat(
        counters_.unparseable, " unparseable records exceed tuningConfig.maxParseExceptions = ",
        settings_.tuning.max_parse_exceptions(), "; the last one, at partition ", record.partition,
        " offset ", record.offset, ": ", error.kind, ": ", sample.message()));
  }
  return absl::OkStatus();
}

absl::Status ReadLoop::Persist() {
  SLUICE_RETURN_IF_ERROR(StartPersist());
  return persister_.WaitPersisted();
}

absl::Status ReadLoop::StartPersist(const std::vector<Sequence>& closed) {
  SLUICE_RETURN_IF_ERROR(persister_.WaitPersisted());
  PersistJob job;
  job.started = absl::Now();
  if (options_.sequences->last_published_id() > pruned_through_) PrunePublished();
  for (const Sequence& sequence : closed) {
    for (OpenSegments::DirectBuild& taken :
         segments_.TakeBuilds(sequence.id, files_.spill_dir(), &next_spill_number_)) {
      PersistBuild build;
      build.path = std::move(taken.path);
      build.index = std::move(taken.index);
      for (const std::string& name : taken.record.spill_files()) {
        build.spills.push_back(absl::StrCat(files_.spill_dir(), "/", name));
      }
      build.info = options_.publisher->BuildInfo(sequence, taken.record);
      job.builds.push_back(std::move(build));
    }
  }
  job.spills = segments_.TakeSpills(files_.spill_dir(), &next_spill_number_);
  state::RestorePoint& point = job.point;
  ToProto(LocalOffsets(), point.mutable_current_offsets());
  segments_.AddTo(&point);
  router_.AddTo(&point);
  state::Counters* c = point.mutable_counters();
  c->set_processed(counters_.processed);
  c->set_processed_bytes(counters_.processed_bytes);
  c->set_unparseable(counters_.unparseable);
  c->set_thrown_away(counters_.thrown_away);
  c->set_persists(counters_.persists + 1);
  point.set_next_spill_number(next_spill_number_);
  ++counters_.persists;
  counters_.rows_in_memory = 0;
  counters_.bytes_in_memory = 0;
  persist_wanted_ = false;
  dirty_ = false;
  last_persist_ = absl::Now();
  persister_.Submit(std::move(job));
  PublishProgress();
  return absl::OkStatus();
}

OffsetMap ReadLoop::LocalOffsets() const { return router_.ToOffsetMap(current_offsets_); }

absl::Status ReadLoop::EnqueueClosedSequences() {
  const OffsetMap current = LocalOffsets();
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
  if (dirty_ || counters_.rows_in_memory > 0) SLUICE_RETURN_IF_ERROR(StartPersist(closed));
  const int64_t durable_at = counters_.persists;  // the last persist submitted
  for (const Sequence& s : closed) {
    ClosedSequence sequence;
    sequence.sequence = s;
    sequence.segments = segments_.RecordsOf(s.id);
    sequence.counts = router_.CountsOf(s.id);
    sequence.restored = s.id <= restored_through_;
    sequence.closed_at = absl::Now();
    if (persister_.persists_written() < durable_at) {
      sequence.durable = [this, durable_at](const std::function<bool()>& stopping) {
        return persister_.AwaitPersisted(durable_at, stopping);
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
  const TaskMetrics& metrics = options_.metrics;
  metrics.rows_processed->Increment(counters_.processed - exported_.processed);
  metrics.rows_unparseable->Increment(counters_.unparseable - exported_.unparseable);
  metrics.rows_thrown_away->Increment(counters_.thrown_away - exported_.thrown_away);
  exported_ = counters_;
  v1::RowStats stats;
  stats.set_processed(counters_.processed);
  stats.set_processed_bytes(counters_.processed_bytes);
  stats.set_unparseable(counters_.unparseable);
  stats.set_thrown_away(counters_.thrown_away);
  stats.set_persists(persister_.persists_written());
  stats.set_rows_in_memory(counters_.rows_in_memory);
  stats.set_bytes_in_memory(counters_.bytes_in_memory);
  std::map<int32_t, int64_t> last_read;
  for (size_t slot = 0; slot < last_read_timestamps_.size(); ++slot) {
    if (last_read_timestamps_[slot] >= 0) {
      last_read[router_.PartitionOf(static_cast<int>(slot))] = last_read_timestamps_[slot];
    }
  }
  options_.control->PublishProgress(LocalOffsets(), stats, last_read);
}

void ReadLoop::RequestCheckpoint(const char* trigger, int32_t sequence_id, bool full) {
  // Reset the time trigger in any case: it fires once per period.
  next_checkpoint_time_ = absl::Now() + settings_.timings.intermediate_handoff_period;
  if (sequence_id < 0) return;
  if (!full) early_asked_id_ = sequence_id;
  if (options_.control->RequestCheckpoint(trigger, sequence_id, /*pause=*/full)) {
    checkpoint_requested_at_ = absl::Now();
    options_.metrics.checkpoints->Increment();
  }
}

int32_t ReadLoop::OpenLatestId() const {
  const int count = router_.route_count();
  if (count == 0 || !router_.IsOpenLatest(count - 1)) return -1;
  return router_.routes()[count - 1].id;
}

bool ReadLoop::EarlyCheckpoints() const {
  const double fraction = options_.tuning.early_checkpoint_fraction;
  return fraction > 0 && fraction < 1;
}

bool ReadLoop::MaybePark() {
  PublishProgress();
  bool asked_for_checkpoint = false;
  if (!options_.control->Park(asker_, options_.notify, &asked_for_checkpoint)) return false;
  if (asked_for_checkpoint) {
    options_.metrics.checkpoint_seconds->ObserveDuration(absl::Now() - checkpoint_requested_at_);
  }
  return true;
}

absl::Status ReadLoop::HandleOutOfRange(const std::vector<OffsetOutOfRange>& out_of_range) {
  v1::ReportOffsetOutOfRangeRequest request;
  request.set_datasource(spec_.datasource());
  request.set_task_id(spec_.task_id());
  std::string what;
  for (const OffsetOutOfRange& oor : out_of_range) {
    (*request.mutable_offsets())[oor.partition] = oor.offset;
    absl::StatusOr<std::pair<int64_t, int64_t>> marks =
        consumer_->Watermarks(oor.partition, absl::Seconds(5));
    if (marks.ok()) (*request.mutable_earliest_offsets())[oor.partition] = marks->first;
    absl::StrAppend(
        &what, what.empty() ? "" : "; ", "partition ", oor.partition, " offset ", oor.offset,
        marks.ok() ? absl::StrCat(" (available: ", marks->first, " to ", marks->second, ")")
                   : std::string(""));
  }
  options_.control->SetError(absl::StrCat("offset out of range: ", what, "; waiting"));
  const absl::Time now = absl::Now();
  if (now >= next_out_of_range_report_) {
    next_out_of_range_report_ =
        now + std::max(options_.tuning.offset_out_of_range_retry, absl::Seconds(30));
    LOG(ERROR) << options_.log_prefix << " ALERT: offset out of range: " << what
               << (settings_.tuning.reset_offset_automatically()
                       ? "; asking the supervisor to reset (resetOffsetAutomatically: records may"
                         " be lost)"
                       : "; waiting (resetOffsetAutomatically is off)");
    absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> response =
        options_.supervisor->ReportOffsetOutOfRange(request);
    if (!response.ok()) {
      LOG(WARNING) << options_.log_prefix
                   << " cannot report the offset out of range: " << response.status();
    } else if (response->reset()) {
      LOG(ERROR) << options_.log_prefix << " ALERT: the supervisor reset the offsets ("
                 << response->message() << "); this task will be replaced";
    }
  }
  if (!options_.control->Wait(options_.tuning.offset_out_of_range_retry)) return absl::OkStatus();
  // Try again from the same offsets (the partitions stopped fetching).
  assignment_valid_ = false;
  return Reassign().status();
}

void ReadLoop::SetState(v1::TaskState state) {
  if (options_.control->SetState(state)) options_.notify();
}

void ReadLoop::ReleaseConsumer() {
  options_.control->SetWaker(nullptr);
  consumer_.reset();
}

void ReadLoop::PersistAtEnd(const char* when) {
  if (!initialized_ || !dirty_) return;
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
    ReleaseConsumer();
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
  ReleaseConsumer();
  // Whatever ended the task, its counters are exact: the records of the
  // batch it was reading when it failed count too (the loop publishes them
  // only after a whole batch), and an ended task holds nothing in memory
  // (its index and spills are dropped below).
  counters_.rows_in_memory = 0;
  counters_.bytes_in_memory = 0;
  PublishProgress();
  control.MarkEnded(LocalOffsets());
  options_.end(final_state, std::move(error));
}

}  // namespace sluice::task
