#include "task/task_runner.h"

#include <dirent.h>
#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "task/text_util.h"

namespace sluice::task {
namespace {

bool Retryable(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable ||
         status.code() == absl::StatusCode::kDeadlineExceeded ||
         status.code() == absl::StatusCode::kResourceExhausted;
}

constexpr char kWaitingForEndOffsets[] = "waiting for the supervisor's end offsets";
constexpr char kCheckpointFailedPrefix[] = "checkpoint request failed (";

bool Terminal(v1::TaskState state) {
  return state == v1::SUCCESS || state == v1::FAILED || state == v1::STOPPED;
}

absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus(errno, "opendir", dir);
  std::vector<std::string> names;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TaskRunner>> TaskRunner::Create(TaskRunnerOptions options) {
  SLUICE_ASSIGN_OR_RETURN(TaskSettings settings, CheckTaskSpec(options.spec));
  if (options.supervisor == nullptr || options.deep_storage == nullptr ||
      options.engine == nullptr) {
    return absl::InvalidArgumentError("a task needs a supervisor, deep storage and an engine");
  }
  if (options.task_dir.empty()) return absl::InvalidArgumentError("a task needs a directory");
  SLUICE_RETURN_IF_ERROR(MakeDirs(options.task_dir));
  return std::unique_ptr<TaskRunner>(new TaskRunner(std::move(options), std::move(settings)));
}

TaskRunner::TaskRunner(TaskRunnerOptions options, TaskSettings settings)
    : options_(std::move(options)),
      settings_(std::move(settings)),
      files_(options_.task_dir),
      self_resume_after_(2 * settings_.timings.chat_timeout *
                         std::max(1, settings_.tuning.chat_retries())),
      metrics_(TaskMetrics::For(options_.metrics, options_.spec.datasource())) {
  int32_t max_partition = 0;
  for (int32_t p : settings_.partitions) max_partition = std::max(max_partition, p);
  slot_of_partition_.assign(static_cast<size_t>(max_partition) + 1, -1);
  for (size_t i = 0; i < settings_.partitions.size(); ++i) {
    slot_of_partition_[settings_.partitions[i]] = static_cast<int>(i);
    partition_of_slot_.push_back(settings_.partitions[i]);
  }
  current_offsets_.assign(settings_.partitions.size(), 0);
  task_end_.assign(settings_.partitions.size(), kEndOfPartition);
  route_hint_.assign(settings_.partitions.size(), 0);

  SequencePublisherOptions p;
  p.task_id = options_.spec.task_id();
  p.datasource = options_.spec.datasource();
  p.group_id = options_.spec.group_id();
  p.topic = options_.spec.topic();
  p.spill_dir = files_.spill_dir();
  p.segment_dir = files_.segment_dir();
  p.supervisor = options_.supervisor;
  p.deep_storage = options_.deep_storage;
  p.engine = options_.engine.get();
  p.handoff_timeout = settings_.timings.handoff_condition_timeout;
  p.handoff_poll_interval = options_.knobs.handoff_poll_interval;
  p.min_backoff = options_.knobs.min_backoff;
  p.max_backoff = options_.knobs.max_backoff;
  p.on_published = [this](int32_t id) { return OnPublished(id); };
  p.log_prefix = Prefix();
  p.metrics = metrics_;
  publisher_ = std::make_unique<SequencePublisher>(std::move(p));
}

TaskRunner::~TaskRunner() {
  if (thread_.joinable()) Shutdown();
}

std::string TaskRunner::Prefix() const {
  return absl::StrCat("[task ", options_.spec.task_id(), "]");
}

void TaskRunner::Start() {
  {
    absl::MutexLock lock(&mu_);
    start_time_ms_ = NowMillis();
  }
  thread_ = std::thread([this] { Run(); });
}

// ---------------------------------------------------------------------------
// Control calls (gRPC threads)

absl::StatusOr<OffsetMap> TaskRunner::Pause(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (done_ || Terminal(state_) || state_ == v1::PUBLISHING || stop_ != StopKind::kNone) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", task_id(), " cannot be paused: it is ",
                     stop_ != StopKind::kNone && !done_ ? "stopping" : v1::TaskState_Name(state_)));
  }
  pause_requested_ = true;
  supervisor_pause_deadline_ = absl::Now() + self_resume_after_;
  UpdateInterruptLocked();
  auto settled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return parked_ || done_ || state_ == v1::PUBLISHING || stop_ != StopKind::kNone;
  };
  mu_.AwaitWithTimeout(absl::Condition(&settled), timeout);
  if (parked_) return current_;
  if (done_ || state_ == v1::PUBLISHING || stop_ != StopKind::kNone) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", task_id(), " is ", v1::TaskState_Name(state_)));
  }
  return absl::UnavailableError(absl::StrCat("task ", task_id(), " has not paused within ",
                                             absl::FormatDuration(timeout), " (it is ",
                                             v1::TaskState_Name(state_), "); call Pause again"));
}

v1::TaskState TaskRunner::Resume() {
  absl::MutexLock lock(&mu_);
  if (pause_requested_ || parked_) {
    pause_requested_ = false;
    awaiting_checkpoint_ = false;
    ++resume_generation_;
    UpdateInterruptLocked();
    // Give the loop a moment to leave the parked state, so the answer says
    // READING when it resumed.
    auto resumed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !parked_ || done_; };
    mu_.AwaitWithTimeout(absl::Condition(&resumed), absl::Seconds(1));
  }
  return state_;
}

absl::StatusOr<v1::SetEndOffsetsResponse> TaskRunner::SetEndOffsets(const OffsetMap& offsets,
                                                                    bool finish) {
  absl::MutexLock lock(&mu_);
  if (done_ || Terminal(state_) || state_ == v1::PUBLISHING || stop_ != StopKind::kNone) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", task_id(), " is ",
                     stop_ != StopKind::kNone && !done_ ? "stopping" : v1::TaskState_Name(state_),
                     ": its end offsets are final"));
  }
  if (!sequences_loaded_) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", task_id(), " is starting: pause it first"));
  }
  SequenceList updated = sequences_;
  SLUICE_ASSIGN_OR_RETURN(SequenceList::SetEndOutcome outcome,
                          updated.SetEndOffsets(offsets, finish, current_, parked_));
  if (outcome.duplicate) {
    LOG(INFO) << Prefix() << " SetEndOffsets(" << OffsetsToString(offsets) << ", finish=" << finish
              << ") repeats the last call: resuming";
  } else {
    SLUICE_RETURN_IF_ERROR(
        Annotate(updated.Save(files_.sequences()), "persisting the sequence list"));
    sequences_ = std::move(updated);
    stats_.set_checkpoints(stats_.checkpoints() + 1);
    LOG(INFO) << Prefix() << " end offsets " << OffsetsToString(offsets)
              << (finish ? " are final" : " close the sequence; next is ")
              << (finish ? "" : sequences_.latest().name);
  }
  pause_requested_ = false;
  awaiting_checkpoint_ = false;
  error_.clear();
  ++resume_generation_;
  UpdateInterruptLocked();
  v1::SetEndOffsetsResponse response;
  ToProtoMap(outcome.end_offsets, response.mutable_end_offsets());
  response.set_duplicate(outcome.duplicate);
  response.set_latest_sequence_id(outcome.latest_id);
  return response;
}

void TaskRunner::Stop(v1::StopMode mode, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  if (done_) return;
  const StopKind kind = mode == v1::KILL ? StopKind::kKill : StopKind::kGraceful;
  if (stop_ == StopKind::kNone || (kind == StopKind::kKill && stop_ == StopKind::kGraceful)) {
    stop_ = kind;
    stop_reason_ = reason;
    LOG(INFO) << Prefix() << " stop requested (" << v1::StopMode_Name(mode) << "): " << reason;
  }
  UpdateInterruptLocked();
}

void TaskRunner::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (!done_ && stop_ == StopKind::kNone) stop_ = StopKind::kShutdown;
    UpdateInterruptLocked();
  }
  if (thread_.joinable()) thread_.join();
  publisher_->Stop();
}

bool TaskRunner::WaitFinished(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&done_), timeout);
  return done_;
}

bool TaskRunner::finished() const {
  absl::MutexLock lock(&mu_);
  return done_;
}

bool TaskRunner::stop_requested() const {
  absl::MutexLock lock(&mu_);
  return stop_ != StopKind::kNone;
}

void TaskRunner::UpdateInterruptLocked() {
  const bool interrupt = pause_requested_ || stop_ != StopKind::kNone;
  interrupt_.store(interrupt, std::memory_order_relaxed);
  if (!interrupt) return;
  // A read loop waiting in a Kafka poll for records parks now, not when the
  // poll times out (what a Pause would otherwise wait for).
  absl::MutexLock lock(&wake_mu_);
  if (wake_consumer_ != nullptr) wake_consumer_->Wake();
}

void TaskRunner::ReleaseConsumer() {
  {
    absl::MutexLock lock(&wake_mu_);
    wake_consumer_ = nullptr;
  }
  consumer_.reset();
}

// ---------------------------------------------------------------------------
// Status

v1::TaskStatus TaskRunner::Status() const {
  absl::MutexLock lock(&mu_);
  return StatusLocked();
}

v1::TaskStatus TaskRunner::StatusLocked() const {
  v1::TaskStatus status;
  const v1::TaskSpec& spec = options_.spec;
  status.set_task_id(spec.task_id());
  status.set_datasource(spec.datasource());
  status.set_group_id(spec.group_id());
  status.set_base_sequence_name(spec.base_sequence_name());
  status.set_state(state_);
  status.set_worker_id(options_.worker_id);
  if (sequences_loaded_) {
    ToProtoMap(sequences_.empty() ? sequences_.task_end() : sequences_.sequences().front().start,
               status.mutable_start_offsets());
    ToProtoMap(sequences_.task_end(), status.mutable_end_offsets());
    for (const Sequence& s : sequences_.sequences()) {
      v1::Checkpoint* checkpoint = status.add_checkpoints();
      checkpoint->set_sequence_id(s.id);
      ToProtoMap(s.start, checkpoint->mutable_offsets());
    }
    status.set_latest_sequence_id(sequences_.empty() ? sequences_.last_published_id()
                                                     : sequences_.latest().id);
  } else {
    ToProtoMap(FromProtoMap(spec.start_offsets()), status.mutable_start_offsets());
  }
  ToProtoMap(current_, status.mutable_current_offsets());
  *status.mutable_row_stats() = stats_;
  status.mutable_row_stats()->set_sequences_published(publisher_->sequences_published());
  status.mutable_row_stats()->set_segments_published(publisher_->segments_published());
  for (const v1::ParseErrorSample& sample : parse_errors_) {
    *status.add_recent_parse_errors() = sample;
  }
  status.set_error(error_);
  status.set_start_time_ms(start_time_ms_);
  status.set_awaiting_checkpoint(awaiting_checkpoint_);
  status.set_end_time_ms(end_time_ms_);
  return status;
}

OffsetMap TaskRunner::CurrentOffsets() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

OffsetMap TaskRunner::EndOffsets() const {
  absl::MutexLock lock(&mu_);
  if (!sequences_loaded_) {
    OffsetMap end;
    for (int32_t p : settings_.partitions) end[p] = kEndOfPartition;
    return end;
  }
  return sequences_.task_end();
}

std::vector<v1::Checkpoint> TaskRunner::Checkpoints() const {
  const v1::TaskStatus status = Status();
  return std::vector<v1::Checkpoint>(status.checkpoints().begin(), status.checkpoints().end());
}

void TaskRunner::SetState(v1::TaskState state) {
  {
    absl::MutexLock lock(&mu_);
    if (state_ == state) return;
    state_ = state;
  }
  Notify();
}

void TaskRunner::Notify() {
  if (!options_.on_state_change) return;
  options_.on_state_change(Status());
}

absl::Status TaskRunner::OnPublished(int32_t sequence_id) {
  absl::MutexLock lock(&mu_);
  SequenceList updated = sequences_;
  SLUICE_RETURN_IF_ERROR(updated.RemovePublished(sequence_id));
  SLUICE_RETURN_IF_ERROR(
      Annotate(updated.Save(files_.sequences()), "persisting the sequence list after a publish"));
  sequences_ = std::move(updated);
  last_published_id_.store(sequence_id);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Read loop

void TaskRunner::Run() {
  persister_ = std::thread([this] { PersisterLoop(); });
  absl::Status outcome = RunLoop();
  // Nothing is written behind Finish's back (it may remove the spills).
  const absl::Status persisted = WaitPersisted();
  if (outcome.ok() && !persisted.ok()) outcome = persisted;
  Finish(outcome);
  StopPersister();
}

absl::Status TaskRunner::RunLoop() {
  SetState(v1::STARTING);
  SLUICE_RETURN_IF_ERROR(Initialize());
  SetState(v1::READING);
  LOG(INFO) << Prefix() << " reading " << options_.spec.topic() << " from "
            << OffsetsToString(CurrentOffsets());
  KafkaBatch batch;
  size_t next = 0;
  std::vector<OffsetOutOfRange> out_of_range;
  while (true) {
    if (stop_requested()) return absl::OkStatus();
    SLUICE_RETURN_IF_ERROR(publisher_->failure());
    SLUICE_RETURN_IF_ERROR(PersistFailure());
    if (persist_wanted_) SLUICE_RETURN_IF_ERROR(StartPersist());
    if (MaybePark()) {
      if (stop_requested()) return absl::OkStatus();
      RefreshRoutes();
    }
    {
      absl::MutexLock lock(&mu_);
      if (resume_generation_ != seen_resume_generation_) {
        seen_resume_generation_ = resume_generation_;
        next_checkpoint_time_ = absl::Now() + settings_.timings.intermediate_handoff_period;
      }
    }
    if (last_published_id_.load() > pruned_through_) PrunePublished();
    SLUICE_RETURN_IF_ERROR(HandOffClosedSequences());
    if (ReachedFinalEnd()) break;
    if (final_end_fixed_) {
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
          settings_.poll_timeout, options_.knobs.max_batch_records, &batch, &out_of_range));
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
    if (now >= next_checkpoint_time_) RequestCheckpoint("intermediateHandoffPeriod");
  }

  // Every partition reached the final end offsets.
  if (dirty_) SLUICE_RETURN_IF_ERROR(Persist());
  SLUICE_RETURN_IF_ERROR(HandOffClosedSequences());
  SetState(v1::PUBLISHING);
  LOG(INFO) << Prefix() << " read to the final end " << OffsetsToString(EndOffsets())
            << "; publishing the rest";
  SLUICE_RETURN_IF_ERROR(consumer_->Assign({}));
  while (!publisher_->WaitIdle(absl::Milliseconds(200))) {
    if (stop_requested()) return absl::OkStatus();
    SLUICE_RETURN_IF_ERROR(publisher_->failure());
  }
  return publisher_->failure();
}

absl::Status TaskRunner::Initialize() {
  SLUICE_RETURN_IF_ERROR(MakeDirs(files_.spill_dir()));
  absl::StatusOr<SequenceList> list = SequenceList::Load(
      files_.sequences(), options_.spec.base_sequence_name(), settings_.partitions);
  bool from_disk = true;
  if (list.status().code() == absl::StatusCode::kNotFound) {
    from_disk = false;
    list = SequenceList::FromCheckpoints(options_.spec.base_sequence_name(), settings_.checkpoints,
                                         settings_.partitions);
    if (list.ok()) SLUICE_RETURN_IF_ERROR(list->Save(files_.sequences()));
  }
  if (!list.ok()) return list.status();
  {
    absl::MutexLock lock(&mu_);
    sequences_ = *std::move(list);
    sequences_loaded_ = true;
    last_published_id_.store(sequences_.last_published_id());
  }
  pruned_through_ = last_published_id_.load();
  RefreshRoutes();

  bool restored = false;
  SLUICE_RETURN_IF_ERROR(LoadRestorePoint(&restored));
  if (!restored) {
    // Start at the first unpublished sequence (or the end if none is left).
    for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
      current_offsets_[slot] = routes_.empty() ? task_end_[slot] : route_start_[0][slot];
    }
  }
  // Offsets before the first unpublished sequence would re-ingest published
  // records: the files do not belong together.
  if (!routes_.empty()) {
    for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
      if (current_offsets_[slot] < route_start_[0][slot]) {
        return absl::DataLossError(absl::StrCat("restore point offset ", current_offsets_[slot],
                                                " of partition ", partition_of_slot_[slot],
                                                " is before the first unpublished sequence ",
                                                routes_[0].name));
      }
    }
  }
  // Drop spills no restore point names (a persist that did not complete, or
  // sequences published before the restart) and half-built segment files.
  std::set<std::string> referenced;
  for (const auto& [key, build] : segments_) {
    for (const std::string& name : build.record.spill_files()) referenced.insert(name);
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> spills, ListDir(files_.spill_dir()));
  for (const std::string& name : spills) {
    if (referenced.count(name) == 0) {
      SLUICE_RETURN_IF_ERROR(RemoveAll(absl::StrCat(files_.spill_dir(), "/", name)));
    }
  }
  SLUICE_RETURN_IF_ERROR(RemoveAll(files_.segment_dir()));

  KafkaConsumerOptions consumer_options;
  consumer_options.topic = options_.spec.topic();
  consumer_options.properties.insert(options_.spec.consumer_properties().begin(),
                                     options_.spec.consumer_properties().end());
  consumer_options.client_id = task_id();
  consumer_options.cluster_kind = options_.knobs.kafka_cluster;
  consumer_options.policy = options_.knobs.kafka_policy;
  SLUICE_ASSIGN_OR_RETURN(consumer_, KafkaConsumer::Create(std::move(consumer_options)));
  {
    absl::MutexLock lock(&wake_mu_);
    wake_consumer_ = consumer_.get();
  }
  parser_ = options_.engine->NewParser();
  publisher_->Start();
  initialized_ = true;

  if (from_disk) {
    const OffsetMap current = LocalOffsets();
    for (const Sequence& s : routes_) {
      if (!SequenceList::IsFullyRead(s, current)) break;
      restored_through_ = s.id;
    }
    LOG(INFO) << Prefix() << " restored " << routes_.size() << " unpublished sequence(s), "
              << segments_.size() << " segment(s) in progress, reading from "
              << OffsetsToString(LocalOffsets());
  }
  PublishProgress();
  last_persist_ = absl::Now();
  next_checkpoint_time_ = absl::Now() + settings_.timings.intermediate_handoff_period;
  SLUICE_RETURN_IF_ERROR(HandOffClosedSequences());
  return Reassign().status();
}

absl::Status TaskRunner::LoadRestorePoint(bool* restored) {
  state::RestorePoint point;
  const absl::Status loaded = LoadJson(files_.restore_point(), &point);
  if (loaded.code() == absl::StatusCode::kNotFound) return absl::OkStatus();
  SLUICE_RETURN_IF_ERROR(loaded);
  const OffsetMap current = FromProtoMap(point.current_offsets());
  if (current.size() != settings_.partitions.size()) {
    return absl::DataLossError(absl::StrCat("restore point offsets ", OffsetsToString(current),
                                            " do not cover the task's partitions"));
  }
  for (const auto& [p, o] : current) {
    if (p < 0 || p >= static_cast<int32_t>(slot_of_partition_.size()) ||
        slot_of_partition_[p] < 0) {
      return absl::DataLossError(
          absl::StrCat("restore point names partition ", p, " which the task does not read"));
    }
    current_offsets_[slot_of_partition_[p]] = o;
  }
  std::set<int32_t> live;
  for (const Sequence& s : routes_) live.insert(s.id);
  for (const state::SegmentState& record : point.segments()) {
    if (live.count(record.sequence_id()) == 0) continue;  // published since
    for (const std::string& name : record.spill_files()) {
      if (!PathExists(absl::StrCat(files_.spill_dir(), "/", name))) {
        return absl::DataLossError(
            absl::StrCat("spill ", name, " named by the restore point is missing"));
      }
    }
    SegmentBuild build;
    build.record = record;
    build.rows_total = record.spilled_rows();
    build.records_per_slot.assign(settings_.partitions.size(), 0);
    for (const auto& [p, n] : record.records_by_partition()) {
      if (p >= 0 && p < static_cast<int32_t>(slot_of_partition_.size()) &&
          slot_of_partition_[p] >= 0) {
        build.records_per_slot[slot_of_partition_[p]] = n;
      }
    }
    sequence_rows_[record.sequence_id()] += record.spilled_rows();
    segments_.emplace(std::make_pair(record.sequence_id(), record.interval_start_ms()),
                      std::move(build));
  }
  for (const state::SequenceStats& stats : point.sequence_stats()) {
    if (live.count(stats.sequence_id()) == 0) continue;
    Counts& counts = sequence_counts_[stats.sequence_id()];
    for (const auto& [p, c] : stats.partitions()) counts[p] = c;
  }
  counters_.processed = point.counters().processed();
  counters_.processed_bytes = point.counters().processed_bytes();
  counters_.unparseable = point.counters().unparseable();
  counters_.thrown_away = point.counters().thrown_away();
  counters_.persists = point.counters().persists();
  persists_written_.store(counters_.persists);
  next_spill_number_ = point.next_spill_number();
  RefreshRoutes();  // route_counts_ point into the restored counts
  *restored = true;
  return absl::OkStatus();
}

void TaskRunner::RefreshRoutes() {
  {
    absl::MutexLock lock(&mu_);
    routes_ = sequences_.sequences();
    const OffsetMap& end = sequences_.task_end();
    final_end_fixed_ = sequences_.final_end_fixed();
    for (size_t slot = 0; slot < partition_of_slot_.size(); ++slot) {
      const auto it = end.find(partition_of_slot_[slot]);
      task_end_[slot] = it == end.end() ? kEndOfPartition : it->second;
    }
  }
  const size_t slots = partition_of_slot_.size();
  route_start_.assign(routes_.size(), std::vector<int64_t>(slots));
  route_end_.assign(routes_.size(), std::vector<int64_t>(slots));
  route_counts_.assign(routes_.size(), std::vector<state::PartitionCounts*>(slots));
  route_rows_.assign(routes_.size(), nullptr);
  for (size_t i = 0; i < routes_.size(); ++i) {
    Counts& counts = sequence_counts_[routes_[i].id];
    route_rows_[i] = &sequence_rows_[routes_[i].id];
    for (size_t slot = 0; slot < slots; ++slot) {
      const int32_t p = partition_of_slot_[slot];
      route_start_[i][slot] = routes_[i].start.at(p);
      route_end_[i][slot] = routes_[i].end.at(p);
      route_counts_[i][slot] = &counts[p];
    }
  }
  std::fill(route_hint_.begin(), route_hint_.end(), 0);
}

void TaskRunner::PrunePublished() {
  const int32_t published = last_published_id_.load();
  RefreshRoutes();
  for (auto it = segments_.begin(); it != segments_.end();) {
    if (it->first.first <= published) {
      if (&it->second == last_segment_) last_segment_ = nullptr;
      it = segments_.erase(it);
    } else {
      ++it;
    }
  }
  sequence_counts_.erase(sequence_counts_.begin(), sequence_counts_.upper_bound(published));
  sequence_rows_.erase(sequence_rows_.begin(), sequence_rows_.upper_bound(published));
  pruned_through_ = published;
}

absl::StatusOr<bool> TaskRunner::Reassign() {
  OffsetMap wanted;
  for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
    if (current_offsets_[slot] < task_end_[slot]) {
      wanted[partition_of_slot_[slot]] = current_offsets_[slot];
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

void TaskRunner::AdvanceToReachedEnds() {
  for (const auto& [p, end] : consumer_->TakeReachedEnds()) {
    const int slot =
        p >= 0 && p < static_cast<int32_t>(slot_of_partition_.size()) ? slot_of_partition_[p] : -1;
    if (slot < 0) continue;
    int64_t& current = current_offsets_[slot];
    const int64_t to = std::min(end, task_end_[slot]);
    if (to <= current) continue;
    VLOG(1) << Prefix() << " partition " << p << ": at its end " << end << ", offsets [" << current
            << ", " << to << ") hold no record for this reader";
    current = to;
    dirty_ = true;
  }
}

bool TaskRunner::ReachedFinalEnd() const {
  if (!final_end_fixed_) return false;
  for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
    if (current_offsets_[slot] < task_end_[slot]) return false;
  }
  return true;
}

absl::Status TaskRunner::ProcessRecords(const KafkaBatch& batch, size_t* next) {
  size_t i = *next;
  for (; i < batch.size(); ++i) {
    // Between two records: the only place the loop stops for a pause.
    if (interrupt_.load(std::memory_order_relaxed)) break;
    SLUICE_RETURN_IF_ERROR(ProcessRecord(batch[i]));
    if (persist_wanted_) SLUICE_RETURN_IF_ERROR(StartPersist());
  }
  *next = i;
  return absl::OkStatus();
}

absl::Status TaskRunner::ProcessRecord(const KafkaRecord& record) {
  const int32_t p = record.partition;
  const int slot =
      p >= 0 && p < static_cast<int32_t>(slot_of_partition_.size()) ? slot_of_partition_[p] : -1;
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
  if (offset >= task_end_[slot]) return absl::OkStatus();  // past the final end: skip
  int route = route_hint_[slot];
  const int routes = static_cast<int>(routes_.size());
  while (route < routes && offset >= route_end_[route][slot]) ++route;
  if (route == routes || offset < route_start_[route][slot]) {
    return absl::InternalError(
        absl::StrCat("no sequence takes offset ", offset, " of partition ", p));
  }
  route_hint_[slot] = route;
  state::PartitionCounts& counts = *route_counts_[route][slot];

  RowParseError error;
  const ParsedRow* row = parser_->Parse(record.value, &error);
  if (row == nullptr) {
    counts.set_unparseable(counts.unparseable() + 1);
    ++counters_.unparseable;
    current = offset + 1;
    dirty_ = true;
    return RecordParseError(record, error);
  }
  const int64_t time = row->timestamp_ms();
  if ((options_.spec.minimum_message_time_ms() != 0 &&
       time < options_.spec.minimum_message_time_ms()) ||
      (options_.spec.maximum_message_time_ms() != 0 &&
       time > options_.spec.maximum_message_time_ms())) {
    counts.set_thrown_away(counts.thrown_away() + 1);
    ++counters_.thrown_away;
    current = offset + 1;
    dirty_ = true;
    return absl::OkStatus();
  }
  SLUICE_ASSIGN_OR_RETURN(SegmentBuild * build, SegmentFor(route, time));
  SegmentIndex& index = *build->index;
  const int64_t rows_before = index.rows();
  const int64_t bytes_before = index.estimated_bytes();
  SLUICE_RETURN_IF_ERROR(index.Add(*row, p, offset));
  const int64_t rows_added = index.rows() - rows_before;
  build->rows_total += rows_added;
  ++build->records_per_slot[slot];
  counts.set_rows(counts.rows() + 1);
  ++counters_.processed;
  counters_.processed_bytes += static_cast<int64_t>(record.value.size());
  counters_.rows_in_memory += rows_added;
  counters_.bytes_in_memory += index.estimated_bytes() - bytes_before;
  int64_t& sequence_rows = *route_rows_[route];
  sequence_rows += rows_added;
  current = offset + 1;
  dirty_ = true;

  if (counters_.rows_in_memory >= settings_.tuning.max_rows_in_memory() ||
      counters_.bytes_in_memory >= settings_.tuning.max_bytes_in_memory()) {
    persist_wanted_ = true;
  }
  // Checkpoint triggers concern the latest, open sequence only.
  if (route == routes - 1 && !routes_[route].checkpointed) {
    if (build->rows_total >= settings_.tuning.max_rows_per_segment()) {
      RequestCheckpoint("maxRowsPerSegment");
    } else if (sequence_rows >= settings_.tuning.max_total_rows()) {
      RequestCheckpoint("maxTotalRows");
    }
  }
  return absl::OkStatus();
}

absl::Status TaskRunner::RecordParseError(const KafkaRecord& record, const RowParseError& error) {
  LOG_EVERY_N(WARNING, 100) << Prefix() << " unparseable record at partition " << record.partition
                            << " offset " << record.offset << ": " << error.kind << ": "
                            << error.message << " (" << google::COUNTER << " so far)";
  v1::ParseErrorSample sample;
  sample.set_partition(record.partition);
  sample.set_offset(record.offset);
  sample.set_kind(error.kind);
  sample.set_message(SanitizeUtf8(error.message, 512));
  sample.set_time_ms(NowMillis());
  sample.set_snippet(SanitizeUtf8(record.value, 256));
  const int32_t keep = settings_.tuning.max_saved_parse_exceptions();
  {
    absl::MutexLock lock(&mu_);
    if (keep > 0) {
      parse_errors_.push_back(sample);
      while (static_cast<int32_t>(parse_errors_.size()) > keep) parse_errors_.pop_front();
    }
    stats_.set_unparseable(counters_.unparseable);
  }
  if (settings_.tuning.has_max_parse_exceptions() &&
      counters_.unparseable > settings_.tuning.max_parse_exceptions()) {
    return absl::FailedPreconditionError(absl::StrCat(
        counters_.unparseable, " unparseable records exceed tuningConfig.maxParseExceptions = ",
        settings_.tuning.max_parse_exceptions(), "; the last one, at partition ", record.partition,
        " offset ", record.offset, ": ", error.kind, ": ", sample.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<TaskRunner::SegmentBuild*> TaskRunner::SegmentFor(int route, int64_t timestamp_ms) {
  const Sequence& sequence = routes_[route];
  // The cached build's index may have gone to the persister (StartPersist
  // resets the cache too).
  if (last_segment_ != nullptr && last_segment_->index != nullptr &&
      last_segment_sequence_ == sequence.id && timestamp_ms >= last_segment_start_ &&
      timestamp_ms < last_segment_end_) {
    return last_segment_;
  }
  const int64_t start = settings_.segment_granularity.Truncate(timestamp_ms);
  const int64_t end = settings_.segment_granularity.Next(start);
  auto it = segments_.find({sequence.id, start});
  if (it == segments_.end()) {
    v1::AllocateSegmentRequest request;
    request.set_datasource(options_.spec.datasource());
    request.set_task_id(task_id());
    request.set_sequence_name(sequence.name);
    request.mutable_interval()->set_start_ms(start);
    request.mutable_interval()->set_end_ms(end);
    absl::Duration backoff = options_.knobs.min_backoff;
    absl::StatusOr<v1::AllocateSegmentResponse> response;
    while (true) {
      response = options_.supervisor->AllocateSegment(request);
      if (response.ok() || !Retryable(response.status())) break;
      LOG_EVERY_N(WARNING, 10) << Prefix() << " allocating a segment for " << sequence.name << ": "
                               << response.status() << "; retrying";
      if (!Wait(backoff)) return absl::CancelledError("stopped");
      backoff = std::min(options_.knobs.max_backoff, backoff * 2);
    }
    if (!response.ok()) {
      return Annotate(response.status(), absl::StrCat("allocating a segment for ", sequence.name,
                                                      " at ", FormatIsoInstant(start)));
    }
    if (response->interval().start_ms() != start || response->interval().end_ms() != end) {
      return absl::FailedPreconditionError(
          absl::StrCat("the supervisor allocated ", response->segment_id(), " for [",
                       response->interval().start_ms(), ", ", response->interval().end_ms(),
                       ") instead of [", start, ", ", end, ")"));
    }
    SegmentBuild build;
    build.record.set_sequence_id(sequence.id);
    build.record.set_interval_start_ms(start);
    build.record.set_interval_end_ms(end);
    build.record.set_segment_id(response->segment_id());
    build.record.set_version(response->version());
    build.record.set_partition_num(response->partition_num());
    build.records_per_slot.assign(partition_of_slot_.size(), 0);
    VLOG(1) << Prefix() << " allocated " << response->segment_id() << " for " << sequence.name;
    it = segments_.emplace(std::make_pair(sequence.id, start), std::move(build)).first;
  }
  SegmentBuild* build = &it->second;
  if (build->index == nullptr) {
    build->index = options_.engine->NewIndex([&] {
      v1::Interval interval;
      interval.set_start_ms(start);
      interval.set_end_ms(end);
      return interval;
    }());
  }
  last_segment_ = build;
  last_segment_sequence_ = sequence.id;
  last_segment_start_ = start;
  last_segment_end_ = end;
  return build;
}

void TaskRunner::SyncRecords(SegmentBuild* build) const {
  auto* records = build->record.mutable_records_by_partition();
  for (size_t slot = 0; slot < build->records_per_slot.size(); ++slot) {
    if (build->records_per_slot[slot] != 0) {
      (*records)[partition_of_slot_[slot]] = build->records_per_slot[slot];
    }
  }
}

absl::Status TaskRunner::Persist() {
  SLUICE_RETURN_IF_ERROR(StartPersist());
  return WaitPersisted();
}

absl::Status TaskRunner::StartPersist() {
  SLUICE_RETURN_IF_ERROR(WaitPersisted());
  PersistJob job;
  job.started = absl::Now();
  if (last_published_id_.load() > pruned_through_) PrunePublished();
  for (auto& [key, build] : segments_) {
    if (build.index == nullptr || build.index->rows() == 0) continue;
    const std::string name =
        absl::StrCat(key.first, "_", key.second, "_", next_spill_number_++, ".spill");
    build.record.add_spill_files(name);
    build.record.set_spilled_rows(build.record.spilled_rows() + build.index->rows());
    // The next row of this (sequence, interval) starts a new index.
    job.spills.emplace_back(absl::StrCat(files_.spill_dir(), "/", name), std::move(build.index));
  }
  last_segment_ = nullptr;  // its index may be gone
  state::RestorePoint& point = job.point;
  for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
    (*point.mutable_current_offsets())[partition_of_slot_[slot]] = current_offsets_[slot];
  }
  for (auto& [key, build] : segments_) {
    SyncRecords(&build);
    *point.add_segments() = build.record;
  }
  for (const auto& [id, counts] : sequence_counts_) {
    state::SequenceStats* stats = point.add_sequence_stats();
    stats->set_sequence_id(id);
    for (const auto& [p, c] : counts) (*stats->mutable_partitions())[p] = c;
  }
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
  {
    absl::MutexLock lock(&persist_mu_);
    persist_job_ = std::move(job);
    persist_running_ = true;
  }
  PublishProgress();
  return absl::OkStatus();
}

absl::Status TaskRunner::WaitPersisted() {
  absl::MutexLock lock(&persist_mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(persist_mu_) { return !persist_running_; };
  persist_mu_.Await(absl::Condition(&idle));
  return persist_error_;
}

absl::Status TaskRunner::PersistFailure() {
  absl::MutexLock lock(&persist_mu_);
  return persist_error_;
}

void TaskRunner::PersisterLoop() {
  while (true) {
    PersistJob job;
    {
      absl::MutexLock lock(&persist_mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(persist_mu_) {
        return persist_job_.has_value() || persister_exit_;
      };
      persist_mu_.Await(absl::Condition(&ready));
      if (!persist_job_.has_value()) return;
      job = std::move(*persist_job_);
      persist_job_.reset();
    }
    const absl::Status written = WritePersist(job);
    job.spills.clear();  // the indexes' memory goes before the next persist starts
    absl::MutexLock lock(&persist_mu_);
    if (!written.ok() && persist_error_.ok()) persist_error_ = written;
    persist_running_ = false;
  }
}

absl::Status TaskRunner::WritePersist(PersistJob& job) {
  for (auto& [path, index] : job.spills) {
    SLUICE_RETURN_IF_ERROR(index->Spill(path).status());
    index.reset();
  }
  // Spills written, restore point not yet: a crash here leaves spills no
  // restore point names (the restart deletes them and re-reads).
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("task.persist.after_spills"));
  SLUICE_RETURN_IF_ERROR(SaveJson(job.point, files_.restore_point()));
  persists_written_.store(job.point.counters().persists());
  metrics_.persists->Increment();
  metrics_.persist_seconds->ObserveDuration(absl::Now() - job.started);
  VLOG(1) << Prefix() << " persisted at "
          << OffsetsToString(FromProtoMap(job.point.current_offsets()));
  return SLUICE_FAULT_POINT("task.after_persist");
}

void TaskRunner::StopPersister() {
  {
    absl::MutexLock lock(&persist_mu_);
    persister_exit_ = true;
  }
  if (persister_.joinable()) persister_.join();
}

OffsetMap TaskRunner::LocalOffsets() const {
  OffsetMap offsets;
  for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
    offsets[partition_of_slot_[slot]] = current_offsets_[slot];
  }
  return offsets;
}

absl::Status TaskRunner::HandOffClosedSequences() {
  const OffsetMap current = LocalOffsets();
  // Copies: the persist below may refresh routes_.
  std::vector<Sequence> closed;
  for (const Sequence& s : routes_) {
    if (s.id <= handed_off_through_) continue;
    if (!SequenceList::IsFullyRead(s, current)) break;
    closed.push_back(s);
  }
  if (closed.empty()) return absl::OkStatus();
  // Everything of these sequences must be in durable spills first (also
  // what a persist still running holds).
  if (dirty_ || counters_.rows_in_memory > 0) SLUICE_RETURN_IF_ERROR(StartPersist());
  SLUICE_RETURN_IF_ERROR(WaitPersisted());
  for (const Sequence& s : closed) {
    ClosedSequence sequence;
    sequence.sequence = s;
    for (auto it = segments_.lower_bound({s.id, INT64_MIN});
         it != segments_.end() && it->first.first == s.id; ++it) {
      SyncRecords(&it->second);
      sequence.segments.push_back(it->second.record);
    }
    sequence.counts = sequence_counts_[s.id];
    sequence.restored = s.id <= restored_through_;
    sequence.closed_at = absl::Now();
    LOG(INFO) << Prefix() << " sequence " << s.name << " " << OffsetsToString(s.start) << " -> "
              << OffsetsToString(s.end) << " is fully read (" << sequence_rows_[s.id]
              << " rows in " << sequence.segments.size() << " segment(s)): publishing";
    handed_off_through_ = s.id;
    publisher_->Enqueue(std::move(sequence));
  }
  return absl::OkStatus();
}

void TaskRunner::PublishProgress() {
  metrics_.rows_processed->Increment(counters_.processed - exported_.processed);
  metrics_.rows_unparseable->Increment(counters_.unparseable - exported_.unparseable);
  metrics_.rows_thrown_away->Increment(counters_.thrown_away - exported_.thrown_away);
  exported_ = counters_;
  absl::MutexLock lock(&mu_);
  for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
    current_[partition_of_slot_[slot]] = current_offsets_[slot];
  }
  stats_.set_processed(counters_.processed);
  stats_.set_processed_bytes(counters_.processed_bytes);
  stats_.set_unparseable(counters_.unparseable);
  stats_.set_thrown_away(counters_.thrown_away);
  stats_.set_persists(persists_written_.load());
  stats_.set_rows_in_memory(counters_.rows_in_memory);
  stats_.set_bytes_in_memory(counters_.bytes_in_memory);
}

void TaskRunner::RequestCheckpoint(const char* trigger) {
  absl::MutexLock lock(&mu_);
  // Reset the time trigger in any case: it fires once per period.
  next_checkpoint_time_ = absl::Now() + settings_.timings.intermediate_handoff_period;
  if (sequences_.empty() || sequences_.latest().checkpointed || awaiting_checkpoint_ ||
      pause_requested_ || stop_ != StopKind::kNone) {
    return;
  }
  awaiting_checkpoint_ = true;
  pause_requested_ = true;
  UpdateInterruptLocked();
  checkpoint_requested_at_ = absl::Now();
  metrics_.checkpoints->Increment();
  LOG(INFO) << Prefix() << " " << trigger << " reached: asking to checkpoint "
            << sequences_.latest().name << " " << OffsetsToString(sequences_.latest().start);
}

bool TaskRunner::MaybePark() {
  PublishProgress();
  {
    absl::MutexLock lock(&mu_);
    if (!pause_requested_ || stop_ != StopKind::kNone) return false;
    parked_ = true;
    state_ = v1::PAUSED;
  }
  Notify();
  bool asked_for_checkpoint = false;
  {
    absl::MutexLock lock(&mu_);
    asked_for_checkpoint = awaiting_checkpoint_;
    const absl::Time parked_at = absl::Now();
    if (!awaiting_checkpoint_ && supervisor_pause_deadline_ == absl::InfiniteFuture()) {
      supervisor_pause_deadline_ = parked_at + self_resume_after_;
    }
    absl::Time next_request = parked_at;
    while (pause_requested_ && stop_ == StopKind::kNone) {
      const absl::Time now = absl::Now();
      if (awaiting_checkpoint_ && now >= next_request) {
        v1::CheckpointDataSourceMetadataRequest request;
        request.set_datasource(options_.spec.datasource());
        request.set_task_id(task_id());
        request.set_group_id(options_.spec.group_id());
        request.set_base_sequence_name(options_.spec.base_sequence_name());
        request.set_sequence_id(sequences_.latest().id);
        ToProtoMap(sequences_.latest().start, request.mutable_start_offsets());
        // The call runs unlocked: Pause and SetEndOffsets may come meanwhile.
        mu_.Unlock();
        absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> response =
            options_.supervisor->CheckpointDataSourceMetadata(request);
        mu_.Lock();
        next_request = absl::Now() + settings_.timings.checkpoint_retry_period;
        if (!awaiting_checkpoint_) continue;  // answered while we were calling
        if (!response.ok()) {
          error_ = absl::StrCat(kCheckpointFailedPrefix, response.status().ToString(),
                                "); asking again");
          LOG(WARNING) << Prefix() << " " << error_;
        } else {
          error_ = kWaitingForEndOffsets;
          VLOG(1) << Prefix() << " checkpoint request "
                  << (response->accepted() ? "accepted" : "not needed") << ": "
                  << response->message();
        }
        continue;
      }
      if (!awaiting_checkpoint_ && now >= supervisor_pause_deadline_) {
        LOG(WARNING) << Prefix() << " paused by the supervisor for "
                     << absl::FormatDuration(self_resume_after_)
                     << " without Resume or SetEndOffsets: resuming by itself";
        pause_requested_ = false;
        break;
      }
      auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !pause_requested_ || stop_ != StopKind::kNone;
      };
      mu_.AwaitWithDeadline(absl::Condition(&wake),
                            awaiting_checkpoint_ ? next_request : supervisor_pause_deadline_);
    }
    parked_ = false;
    awaiting_checkpoint_ = false;
    supervisor_pause_deadline_ = absl::InfiniteFuture();
    if (stop_ == StopKind::kNone) state_ = v1::READING;
    if (error_ == kWaitingForEndOffsets || absl::StartsWith(error_, kCheckpointFailedPrefix)) {
      error_.clear();
    }
    UpdateInterruptLocked();
  }
  if (asked_for_checkpoint) {
    metrics_.checkpoint_seconds->ObserveDuration(absl::Now() - checkpoint_requested_at_);
  }
  Notify();
  return true;
}

absl::Status TaskRunner::HandleOutOfRange(const std::vector<OffsetOutOfRange>& out_of_range) {
  v1::ReportOffsetOutOfRangeRequest request;
  request.set_datasource(options_.spec.datasource());
  request.set_task_id(task_id());
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
  {
    absl::MutexLock lock(&mu_);
    error_ = absl::StrCat("offset out of range: ", what, "; waiting");
  }
  const absl::Time now = absl::Now();
  if (now >= next_out_of_range_report_) {
    next_out_of_range_report_ =
        now + std::max(options_.knobs.offset_out_of_range_retry, absl::Seconds(30));
    LOG(ERROR) << Prefix() << " ALERT: offset out of range: " << what
               << (settings_.tuning.reset_offset_automatically()
                       ? "; asking the supervisor to reset (resetOffsetAutomatically: records may"
                         " be lost)"
                       : "; waiting (resetOffsetAutomatically is off)");
    absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> response =
        options_.supervisor->ReportOffsetOutOfRange(request);
    if (!response.ok()) {
      LOG(WARNING) << Prefix() << " cannot report the offset out of range: " << response.status();
    } else if (response->reset()) {
      LOG(ERROR) << Prefix() << " ALERT: the supervisor reset the offsets (" << response->message()
                 << "); this task will be replaced";
    }
  }
  if (!Wait(options_.knobs.offset_out_of_range_retry)) return absl::OkStatus();
  // Try again from the same offsets (the partitions stopped fetching).
  assignment_valid_ = false;
  return Reassign().status();
}

bool TaskRunner::Wait(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pause_requested_ || stop_ != StopKind::kNone;
  };
  mu_.AwaitWithTimeout(absl::Condition(&wake), d);
  return stop_ == StopKind::kNone;
}

bool TaskRunner::AllReadIsPublished() const {
  if (sequences_.empty()) return true;
  if (sequences_.sequences().size() > 1) return false;
  const Sequence& latest = sequences_.latest();
  for (const auto& [p, start] : latest.start) {
    const auto it = current_.find(p);
    if (it != current_.end() && it->second > start) return false;
  }
  return true;
}

void TaskRunner::Finish(absl::Status outcome) {
  StopKind kind;
  std::string reason;
  {
    absl::MutexLock lock(&mu_);
    kind = stop_;
    reason = stop_reason_;
  }
  const bool real_failure = !outcome.ok() && outcome.code() != absl::StatusCode::kCancelled;
  if (kind == StopKind::kShutdown && !real_failure) {
    // The worker stops; the task goes on after its restart.
    if (initialized_ && dirty_) {
      const absl::Status persisted = Persist();
      if (!persisted.ok()) LOG(ERROR) << Prefix() << " persist at shutdown: " << persisted;
    }
    publisher_->Stop();
    ReleaseConsumer();
    LOG(INFO) << Prefix() << " shut down; it resumes when the worker restarts";
    return;
  }
  v1::TaskState final_state;
  std::string error;
  if (real_failure) {
    final_state = v1::FAILED;
    error = std::string(outcome.message());
    LOG(ERROR) << Prefix() << " FAILED: " << outcome;
  } else if (kind == StopKind::kKill) {
    final_state = v1::FAILED;
    error = absl::StrCat("killed by the supervisor: ", reason);
  } else if (kind == StopKind::kGraceful) {
    PublishProgress();
    if (initialized_ && dirty_) {
      const absl::Status persisted = Persist();
      if (!persisted.ok()) LOG(ERROR) << Prefix() << " persist at stop: " << persisted;
    }
    publisher_->Stop();
    absl::MutexLock lock(&mu_);
    final_state = AllReadIsPublished() ? v1::SUCCESS : v1::STOPPED;
    error = absl::StrCat("stopped: ", reason);
  } else {
    final_state = v1::SUCCESS;
  }
  publisher_->Stop();
  ReleaseConsumer();
  // Whatever ended the task, its counters are exact: the records of the
  // batch it was reading when it failed count too (the loop publishes them
  // only after a whole batch), and an ended task holds nothing in memory
  // (its index and spills are dropped below).
  counters_.rows_in_memory = 0;
  counters_.bytes_in_memory = 0;
  PublishProgress();
  v1::TaskStatus status;
  {
    absl::MutexLock lock(&mu_);
    for (size_t slot = 0; slot < current_offsets_.size(); ++slot) {
      current_[partition_of_slot_[slot]] = current_offsets_[slot];
    }
    parked_ = false;
    end_time_ms_ = NowMillis();
    status = StatusLocked();
  }
  status.set_state(final_state);
  status.set_error(error);
  // Keep the final status (ListTasks after a restart) and drop the data: a
  // replacement task re-reads whatever was not published. Done before the
  // final state shows, so whoever sees it sees a clean directory.
  const absl::Status saved = SaveJson(status, files_.final_status());
  if (!saved.ok()) LOG(ERROR) << Prefix() << " cannot save the final status: " << saved;
  RemoveAll(files_.spill_dir()).IgnoreError();
  RemoveAll(files_.segment_dir()).IgnoreError();
  LOG(INFO) << Prefix() << " " << v1::TaskState_Name(final_state) << (error.empty() ? "" : ": ")
            << error << " (processed " << status.row_stats().processed() << ", unparseable "
            << status.row_stats().unparseable() << ", thrown away "
            << status.row_stats().thrown_away() << ", sequences published "
            << status.row_stats().sequences_published() << ")";
  {
    absl::MutexLock lock(&mu_);
    state_ = final_state;
    error_ = error;
    done_ = true;
  }
  Notify();
}

}  // namespace sluice::task
