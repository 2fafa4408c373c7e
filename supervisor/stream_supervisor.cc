// A stream supervisor (stream_supervisor.h): its start and wiring, the
// calls of RPC threads (each a notice), the runs handed to LoopRun, and the
// status it republishes for the view.
#include "supervisor/stream_supervisor.h"

#include <glog/logging.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/spec_changes.h"

namespace sluice::supervisor {

// ---- lifecycle ----

StreamSupervisor::StreamSupervisor(StreamSupervisorOptions deps, SpecRecord spec)
    : options_(std::move(deps)),
      state_(options_.clock, std::move(spec)),
      pools_({.loops = options_.loops,
              .queries = options_.queries,
              .task_rpcs = options_.task_rpcs,
              .clock = options_.clock,
              .datasource = state_.datasource}),
      clients_(options_.task_client_factory, state_.spec.spec.tuning_config()),
      view_({.datasource = state_.datasource,
             .store = options_.store,
             .iceberg_activity = options_.iceberg_activity}),
      loop_({.datasource = state_.datasource,
             .clock = options_.clock,
             .first_step =
                 [this] {
                   LOG(INFO) << state_.Prefix() << "started (spec version " << state_.spec.version
                             << ", " << stream_->Label() << ", " << run_->TaskCount()
                             << " groups x " << state_.spec.spec.io_config().replicas()
                             << " replicas)";
                   if (absl::Status recovered = run_->Recover(); !recovered.ok()) {
                     state_.RecordError(Annotate(recovered, "recovering from the metadata store"));
                   }
                 },
             .run = [this] { RunOnce(); },
             .publish_view = [this] { PublishView(); }}) {
  StreamTrackerOptions stream;
  stream.datasource = state_.datasource;
  stream.store = options_.store;
  stream.clock = options_.clock;
  stream.stream_metadata_factory = options_.stream_metadata_factory;
  stream.kafka_timeout = options_.kafka_timeout;
  stream.background_stream_queries = options_.background_stream_queries;
  stream.spec = [this]() -> const v1::SupervisorSpec& { return state_.spec.spec; };
  stream.stream_attached = [this](StreamMetadata* attached) {
    if (stream_queries_ != nullptr) stream_queries_->SetStream(attached);
  };
  stream.record_error = [this](const absl::Status& status) { state_.RecordError(status); };
  stream_ = std::make_unique<StreamTracker>(std::move(stream));
  TaskCountControllerOptions task_count;
  task_count.datasource = state_.datasource;
  task_count.store = options_.store;
  task_count.clock = options_.clock;
  task_count.metrics = options_.metrics;
  task_count.record_error = [this](const absl::Status& status) { state_.RecordError(status); };
  task_count_ = std::make_unique<TaskCountController>(std::move(task_count));
  IdleHandlingOptions idle;
  idle.datasource = state_.datasource;
  idle.store = options_.store;
  idle.clock = options_.clock;
  idle.record_error = [this](const absl::Status& status) { state_.RecordError(status); };
  idle_ = std::make_unique<IdleHandling>(std::move(idle));
}

absl::StatusOr<std::unique_ptr<StreamSupervisor>> StreamSupervisor::Start(
    StreamSupervisorOptions deps, SpecRecord spec) {
  std::unique_ptr<StreamSupervisor> s(new StreamSupervisor(std::move(deps), std::move(spec)));
  SLUICE_RETURN_IF_ERROR(s->Init());
  TaskActionsOptions actions;
  actions.datasource = s->state_.datasource;
  actions.registry = s->options_.registry;
  actions.store = s->options_.store;
  actions.clock = s->options_.clock;
  actions.client = s->clients_.chat();
  actions.run_client = s->clients_.run();
  actions.task_rpcs = s->pools_.task_rpcs();
  actions.publisher_decodes_segments = s->options_.publisher_decodes_segments;
  actions.record_error = [raw = s.get()](const absl::Status& status) {
    raw->state_.RecordError(status);
  };
  actions.note_outcome = [raw = s.get()](v1::TaskState state) {
    raw->state_.health.NoteTaskOutcome(state);
  };
  s->actions_ = std::make_unique<TaskActions>(std::move(actions));
  TaskReportsOptions reports;
  reports.datasource = s->state_.datasource;
  reports.registry = s->options_.registry;
  reports.clock = s->options_.clock;
  reports.actions = s->actions_.get();
  reports.note_outcome = [raw = s.get()](v1::TaskState state) {
    raw->state_.health.NoteTaskOutcome(state);
  };
  s->reports_ = std::make_unique<TaskReports>(std::move(reports));
  CheckpointContext checkpoints;
  checkpoints.datasource = s->state_.datasource;
  checkpoints.store = s->options_.store;
  checkpoints.clock = s->options_.clock;
  checkpoints.client = s->clients_.chat();
  checkpoints.actions = s->actions_.get();
  checkpoints.metrics = s->options_.metrics;
  checkpoints.pauseless_checkpoints = s->options_.pauseless_checkpoints;
  checkpoints.pauseless_margin = s->options_.pauseless_margin;
  checkpoints.watermarks = &s->stream_->watermarks();
  checkpoints.produce_rates = &s->stream_->produce_rates();
  checkpoints.max_rows_per_segment = [raw = s.get()] {
    return raw->state_.spec.spec.tuning_config().max_rows_per_segment();
  };
  checkpoints.publish_view = [raw = s.get()] { raw->PublishView(); };
  checkpoints.record_error = [raw = s.get()](const absl::Status& status) {
    raw->state_.RecordError(status);
  };
  s->checkpoints_ = std::make_unique<CheckpointCoordinator>(std::move(checkpoints));
  RollOverOptions roll_over;
  roll_over.datasource = s->state_.datasource;
  roll_over.store = s->options_.store;
  roll_over.clock = s->options_.clock;
  roll_over.actions = s->actions_.get();
  roll_over.checkpoints = s->checkpoints_.get();
  roll_over.record_error = [raw = s.get()](const absl::Status& status) {
    raw->state_.RecordError(status);
  };
  s->roll_over_ = std::make_unique<RollOver>(std::move(roll_over));
  GroupCreationOptions creation;
  creation.datasource = s->state_.datasource;
  creation.store = s->options_.store;
  creation.registry = s->options_.registry;
  creation.clock = s->options_.clock;
  creation.actions = s->actions_.get();
  creation.stream = s->stream_.get();
  creation.state = &s->state_;
  creation.reset_offsets = [raw = s.get()](const OffsetMap& offsets, const std::string& why) {
    raw->resets_->ResetOffsets(offsets, why);
  };
  creation.post = [raw = s.get()](std::string kind, std::function<void()> handle) {
    raw->loop_.Post(std::move(kind), std::move(handle));
  };
  creation.request_run = [raw = s.get()] { raw->RequestRun(); };
  creation.publish_view = [raw = s.get()] { raw->PublishView(); };
  s->creation_ = std::make_unique<GroupCreation>(std::move(creation));
  OffsetResetsOptions resets;
  resets.datasource = s->state_.datasource;
  resets.store = s->options_.store;
  resets.clock = s->options_.clock;
  resets.actions = s->actions_.get();
  resets.stream = s->stream_.get();
  resets.state = &s->state_;
  resets.wake_up = [raw = s.get()](const std::string& why) { raw->idle_->WakeUp(why); };
  s->resets_ = std::make_unique<OffsetResets>(std::move(resets));
  LoopRunOptions run;
  run.state = &s->state_;
  run.store = s->options_.store;
  run.registry = s->options_.registry;
  run.client = s->clients_.chat();
  run.actions = s->actions_.get();
  run.stream = s->stream_.get();
  run.reports = s->reports_.get();
  run.task_count = s->task_count_.get();
  run.checkpoints = s->checkpoints_.get();
  run.roll_over = s->roll_over_.get();
  run.creation = s->creation_.get();
  run.idle = s->idle_.get();
  s->run_ = std::make_unique<LoopRun>(std::move(run));
  if (s->options_.background_stream_queries) {
    StreamQueriesOptions queries;
    queries.pool = s->pools_.queries();
    queries.period = s->state_.timings.period;
    queries.timeout = s->options_.kafka_timeout;
    queries.read_stored = [raw = s.get()] { return raw->stream_->StoredOffsets(); };
    queries.deliver = [raw = s.get()](StreamSnapshot snapshot) {
      raw->loop_.Post("stream metadata", [raw, snapshot = std::move(snapshot)] {
        // The runs were waiting for the first answer.
        if (raw->stream_->ApplySnapshot(snapshot, raw->state_.groups.reading)) raw->RequestRun();
      });
    };
    // Created before the loop starts (its runs hand it the stream), started
    // after (its answers wake the loop strand).
    queries.stream = s->stream_->stream();
    s->stream_queries_ = std::make_unique<StreamQueries>(std::move(queries));
  }
  s->loop_.Start(s->pools_.loops());
  // Real time: the queries only run with the real clock (see deps).
  // The first query at once: an unreachable Kafka shows within a period.
  if (s->stream_queries_ != nullptr) s->stream_queries_->Start();
  return s;
}

absl::Status StreamSupervisor::Init() {
  SLUICE_ASSIGN_OR_RETURN(state_.timings, ParseSpecTimings(state_.spec.spec));
  stream_->Connect();
  loop_.SetNextRun(options_.clock->Now() + state_.timings.start_delay);
  PublishView();
  return absl::OkStatus();
}

StreamSupervisor::~StreamSupervisor() {
  loop_.Stop();
  if (stream_queries_ != nullptr) stream_queries_->Stop();
  // Their jobs use this supervisor.
  if (actions_ != nullptr) actions_->AwaitRunTasks(absl::InfiniteFuture());
  loop_.Close();
}

// ---- notices ----

void StreamSupervisor::RequestRun() {
  if (!options_.run_on_events) return;
  loop_.RequestRun();
}

absl::Status StreamSupervisor::RunNow(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  SLUICE_RETURN_IF_ERROR(loop_.PostAndWait(
      "run", [this] { RunOnce(); }, timeout));
  if (!actions_->AwaitRunTasks(deadline)) {
    return absl::UnavailableError(absl::StrCat("the RunTask calls of ", state_.datasource,
                                               " were not answered within ",
                                               absl::FormatDuration(timeout)));
  }
  // Their answers were posted before the count went down.
  return Sync(std::max(deadline - absl::Now(), absl::Seconds(1)));
}

absl::Status StreamSupervisor::Sync(absl::Duration timeout) {
  return loop_.PostAndWait(
      "sync", [] {}, timeout);
}

void StreamSupervisor::NoteAlert(const absl::Status& alert) {
  loop_.Post("alert", [this, alert] { state_.RecordError(alert); });
}

void StreamSupervisor::Reset() {
  loop_.Post("reset", [this] {
    if (resets_->ResetAll()) RunOnce();
  });
}

void StreamSupervisor::ResetOffsets(const OffsetMap& offsets) {
  loop_.Post("reset offsets",
             [this, offsets] { resets_->ResetOffsets(offsets, "operator reset of offsets"); });
}

void StreamSupervisor::UpdateSpec(SpecRecord spec) {
  loop_.Post("update spec", [this, spec = std::move(spec)] {
    absl::StatusOr<SpecTimings> timings = ParseSpecTimings(spec.spec);
    if (!timings.ok()) {  // NormalizeSpec checked them: not expected
      state_.RecordError(
          Annotate(timings.status(), "taking spec version " + std::to_string(spec.version)));
      return;
    }
    const std::vector<std::string> changed = ChangedSpecFields(state_.spec.spec, spec.spec);
    state_.spec = spec;
    state_.timings = *timings;
    task_count_->Configure(state_.spec.spec.io_config(), std::nullopt);
    LOG(INFO) << state_.Prefix() << "spec version " << state_.spec.version << " taken live ("
              << (changed.empty() ? "no change" : absl::StrJoin(changed, ", ")) << ")";
    // Group creation (taskCount, replicas), suspension and idleness act at
    // the next run; roll-over uses the new durations from now on.
    RunOnce();
  });
}

void StreamSupervisor::StopGracefully() {
  loop_.Post("graceful stop", [this] {
    state_.stopping = true;
    state_.detailed_state = "STOPPING";
    roll_over_->FinalizeAll(state_.groups, "the supervisor is stopping",
                            state_.timings.completion_timeout);
    loop_.RequestExit();
  });
  loop_.Stop();
  if (stream_queries_ != nullptr) stream_queries_->Stop();
}

// ---- runs ----

void StreamSupervisor::RunOnce() {
  loop_.SetNextRun(options_.clock->Now() + state_.timings.period);
  run_->Run();
}

// ---- view and status ----

void StreamSupervisor::PublishView() {
  // A used segment whose deep-storage copy fails verification is lost data
  // until restored: the datasource is unhealthy whatever its tasks do.
  int64_t failing = 0;
  options_.store
      ->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(failing, txn.CountFailedSegments(state_.datasource));
        return absl::OkStatus();
      })
      .IgnoreError();
  if (options_.metrics != nullptr) {
    options_.metrics
        ->GetGauge(metrics::kSupervisorSegmentsFailingVerification,
                   {{"datasource", state_.datasource}})
        ->Set(static_cast<double>(failing));
  }
  StatusInputs in;
  in.datasource = state_.datasource;
  in.topic = state_.spec.spec.io_config().topic();
  in.topic_pattern = state_.spec.spec.io_config().topic_pattern();
  if (const StreamPartitionIds* ids = stream_->partition_ids(); ids != nullptr) {
    in.stream_partitions = ids->From(0);
  }
  in.suspended = state_.spec.spec.suspended();
  in.spec_version = state_.spec.version;
  in.task_duration = state_.timings.task_duration;
  in.partitions = static_cast<int32_t>(stream_->partitions().size());
  in.partitions_known = stream_->partitions_known();
  in.stopping = state_.stopping;
  in.idle = idle_->idle();
  in.stream_unreachable = stream_->unreachable();
  in.offsets_problem = stream_->offsets_verdict().problem;
  in.detailed_state = state_.detailed_state;
  in.segments_failing_verification = failing;
  in.health = &state_.health;
  in.active = &state_.groups.reading;
  in.publishing = &state_.groups.publishing;
  in.watermarks = &stream_->watermarks();
  in.newest_timestamps = &stream_->newest_timestamps();
  in.watermarks_at = stream_->watermarks_at();
  in.now = options_.clock->Now();
  SupervisorView::Snapshot view;
  view.status = BuildStatus(in);
  if (state_.spec.spec.has_iceberg_table()) {
    v1::IcebergTableStatus* table = view.status.mutable_iceberg_table();
    table->set_table_namespace(state_.spec.spec.iceberg_table().table_namespace());
    table->set_table_name(state_.spec.spec.iceberg_table().table_name());
  }
  task_count_->FillStatus(state_.spec.spec.io_config(), &view.status);
  for (const auto& [id, group] : state_.groups.reading) {
    view.reading[id] = {group.base_sequence_name, group.checkpoints};
  }
  for (const auto& [id, groups] : state_.groups.publishing) {
    for (const Group& group : groups) view.publishing.insert(group.base_sequence_name);
  }
  view.recovered = state_.recovered;
  view_.Publish(std::move(view));
}

v1::SupervisorStatus StreamSupervisor::Status() { return view_.Status(); }

v1::SupervisorSummary StreamSupervisor::Summary() { return view_.Summary(); }

void StreamSupervisor::OnTaskStatus(const v1::TaskStatus& status) {
  if (reports_->Note(status) && options_.run_on_events) RequestRun();
}

absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> StreamSupervisor::OffsetOutOfRange(
    const v1::ReportOffsetOutOfRangeRequest& request, absl::Duration timeout) {
  auto response = std::make_shared<v1::ReportOffsetOutOfRangeResponse>();
  SLUICE_RETURN_IF_ERROR(loop_.PostAndWait(
      "offset out of range",
      [this, request, response] { *response = resets_->OffsetOutOfRange(request); }, timeout));
  return *response;
}

absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> StreamSupervisor::Checkpoint(
    const v1::CheckpointDataSourceMetadataRequest& request) {
  return view_.AnswerCheckpoint(request, [&](bool ok) {
    loop_.Post(ok ? "checkpoint" : "bad checkpoint", [this, request, now = absl::Now()] {
      checkpoints_->HandleRequest(state_.groups.reading, request, now);
    });
  });
}

absl::StatusOr<v1::HandoffTaskGroupsResponse> StreamSupervisor::Handoff(
    const std::vector<int32_t>& group_ids, absl::Duration timeout) {
  auto result = std::make_shared<absl::StatusOr<v1::HandoffTaskGroupsResponse>>(
      absl::UnknownError("not handled"));
  SLUICE_RETURN_IF_ERROR(loop_.PostAndWait(
      "handoff",
      [this, group_ids, result] {
        *result = state_.recovered ? checkpoints_->Handoff(state_.groups.reading, group_ids)
                                   : absl::UnavailableError(absl::StrCat(
                                         "the supervisor of ", state_.datasource,
                                         " is still recovering its task groups; retry"));
      },
      timeout));
  return *result;
}

}  // namespace sluice::supervisor
