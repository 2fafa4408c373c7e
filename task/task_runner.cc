#include "task/task_runner.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "common/time_util.h"

namespace sluice::task {

absl::StatusOr<std::unique_ptr<TaskRunner>> TaskRunner::Create(TaskRunnerOptions options) {
  SLUICE_ASSIGN_OR_RETURN(TaskSettings settings, CheckTaskSpec(options.spec));
  const int64_t spec_bytes = settings.tuning.max_bytes_in_memory();
  if (CapMaxBytesInMemory(options.tuning.ingestion_memory_per_task, &settings)) {
    LOG(INFO) << "[task " << options.spec.task_id() << "] maxBytesInMemory " << spec_bytes
              << " is more than this worker's ingestion memory per task slot; using "
              << settings.tuning.max_bytes_in_memory();
  }
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
      metrics_(TaskMetrics::For(options_.metrics, options_.spec.datasource())),
      sequences_(files_.sequences(), options_.spec.base_sequence_name(), settings_.partitions),
      control_(TaskControlOptions{
          .task_id = options_.spec.task_id(),
          .log_prefix = Prefix(),
          .self_resume_after = 2 * settings_.timings.chat_timeout *
                               std::max(1, settings_.tuning.chat_retries()),
          .checkpoint_retry_period = settings_.timings.checkpoint_retry_period,
          .sequences = &sequences_,
          .paused_per_checkpoint = metrics_.checkpoint_paused_seconds,
      }) {
  SequencePublisherOptions p;
  p.task_id = options_.spec.task_id();
  p.datasource = options_.spec.datasource();
  p.group_id = options_.spec.group_id();
  p.topic = options_.spec.topic();
  p.topic_pattern = options_.spec.topic_pattern();
  p.stream_partitions = settings_.stream_partitions;
  p.task_dir = files_.dir;
  p.supervisor = options_.supervisor;
  p.deep_storage = options_.deep_storage;
  p.engine = options_.engine.get();
  p.build_slots = options_.build_slots;
  p.supervisor_decodes_segments = options_.spec.supervisor_decodes_segments();
  p.handoff_timeout = settings_.timings.handoff_condition_timeout;
  p.handoff_poll_interval = options_.tuning.handoff_poll_interval;
  p.min_backoff = options_.tuning.min_backoff;
  p.max_backoff = options_.tuning.max_backoff;
  p.listener = &sequences_;
  p.log_prefix = Prefix();
  p.metrics = metrics_;
  publisher_ = std::make_unique<SequencePublisher>(std::move(p));

  SupervisorSegmentAllocatorOptions a;
  a.datasource = options_.spec.datasource();
  a.task_id = options_.spec.task_id();
  a.supervisor = options_.supervisor;
  a.min_backoff = options_.tuning.min_backoff;
  a.max_backoff = options_.tuning.max_backoff;
  // A pause cuts a backoff short; a stop ends the allocation.
  a.sleep = [this](absl::Duration d) { return control_.Wait(d); };
  a.log_prefix = Prefix();
  allocator_ = std::make_unique<SupervisorSegmentAllocator>(std::move(a));

  ReadLoopOptions l;
  l.spec = &options_.spec;
  l.settings = &settings_;
  l.task_dir = options_.task_dir;
  l.tuning = options_.tuning;
  l.metrics = metrics_;
  l.log_prefix = Prefix();
  l.supervisor = options_.supervisor;
  l.engine = options_.engine.get();
  l.control = &control_;
  l.sequences = &sequences_;
  l.publisher = publisher_.get();
  l.allocator = allocator_.get();
  l.build_slots = options_.build_slots;
  l.notify = [this] { Notify(); };
  l.end = [this](v1::TaskState state, std::string error) { End(state, std::move(error)); };
  loop_ = std::make_unique<ReadLoop>(std::move(l));
}

TaskRunner::~TaskRunner() {
  if (thread_.joinable()) Shutdown();
}

std::string TaskRunner::Prefix() const {
  return absl::StrCat("[task ", options_.spec.task_id(), "]");
}

void TaskRunner::Start() {
  control_.SetStartTime(NowMillis());
  thread_ = std::thread([this] { loop_->Run(); });
}

absl::StatusOr<OffsetMap> TaskRunner::Pause(absl::Duration timeout) {
  return control_.Pause(timeout);
}

v1::TaskState TaskRunner::Resume() { return control_.Resume(); }

absl::StatusOr<v1::SetEndOffsetsResponse> TaskRunner::SetEndOffsets(const OffsetMap& offsets,
                                                                    bool finish) {
  return control_.SetEndOffsets(offsets, finish);
}

void TaskRunner::Stop(v1::StopMode mode, const std::string& reason) {
  control_.Stop(mode, reason);
}

void TaskRunner::Shutdown() {
  control_.RequestShutdown();
  if (thread_.joinable()) thread_.join();
  publisher_->Stop();
}

bool TaskRunner::WaitFinished(absl::Duration timeout) { return control_.WaitFinished(timeout); }

bool TaskRunner::finished() const { return control_.finished(); }

v1::TaskStatus TaskRunner::Status() const {
  v1::TaskStatus status;
  const v1::TaskSpec& spec = options_.spec;
  status.set_task_id(spec.task_id());
  status.set_datasource(spec.datasource());
  status.set_group_id(spec.group_id());
  status.set_base_sequence_name(spec.base_sequence_name());
  status.set_worker_id(options_.worker_id);
  control_.FillStatus(FromProto(spec.start_offsets()), &status);
  status.mutable_row_stats()->set_sequences_published(publisher_->sequences_published());
  status.mutable_row_stats()->set_segments_published(publisher_->segments_published());
  return status;
}

OffsetMap TaskRunner::CurrentOffsets() const { return control_.current(); }

OffsetMap TaskRunner::EndOffsets() const {
  std::optional<OffsetMap> end = sequences_.TaskEnd();
  if (end.has_value()) return *std::move(end);
  OffsetMap all;
  for (int32_t p : settings_.partitions) all[p] = kEndOfPartition;
  return all;
}

std::vector<v1::Checkpoint> TaskRunner::Checkpoints() const {
  const v1::TaskStatus status = Status();
  return std::vector<v1::Checkpoint>(status.checkpoints().begin(), status.checkpoints().end());
}

void TaskRunner::Notify() {
  if (!options_.on_state_change) return;
  options_.on_state_change(Status());
}

void TaskRunner::End(v1::TaskState final_state, std::string error) {
  v1::TaskStatus status = Status();
  status.set_state(final_state);
  status.set_error(error);
  // Keep the final status (ListTasks after a restart) and drop the data: a
  // replacement task re-reads whatever was not published. Done before the
  // final state shows, so whoever sees it sees a clean directory.
  const absl::Status saved = SaveProtoJson(files_.final_status(), status);
  if (!saved.ok()) LOG(ERROR) << Prefix() << " cannot save the final status: " << saved;
  RemoveAll(files_.spill_dir()).IgnoreError();
  RemoveAll(files_.segment_dir()).IgnoreError();
  LOG(INFO) << Prefix() << " " << v1::TaskState_Name(final_state) << (error.empty() ? "" : ": ")
            << error << " (processed " << status.row_stats().processed() << ", unparseable "
            << status.row_stats().unparseable() << ", thrown away "
            << status.row_stats().thrown_away() << ", sequences published "
            << status.row_stats().sequences_published() << ")";
  control_.Finish(final_state, std::move(error));
  Notify();
}

}  // namespace sluice::task
