// The run steps of a stream supervisor (stream_supervisor.h): idleness,
// the autoscaler's sample, what decides roll-over (roll_over.h does it),
// task statuses, creation of groups and tasks and the answers to their
// RunTask. Loop only.
#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/naming.h"
#include "supervisor/start_offset_policy.h"
#include "supervisor/stream_supervisor.h"
#include "supervisor/spec_changes.h"

namespace sluice::supervisor {

OffsetMap StreamSupervisor::ReadTo() {
  // A finished group's end is committed once it published.
  OffsetMap read_to = stream_->StoredOffsets();
  for (const auto& [id, group] : groups_.reading) {
    for (const auto& [task_id, task] : group.tasks) {
      if (!IsLive(task)) continue;
      read_to = MaxOffsets(
          read_to, Restrict(FromProto(task.status.current_offsets()), group.start_offsets));
    }
  }
  return read_to;
}

bool StreamSupervisor::CheckIdle() {
  const v1::IdleConfig& config = spec_.spec.io_config().idle_config();
  IdleTracker::Change change = IdleTracker::Change::kNone;
  if (!config.enabled()) {
    change = idle_.Wake();
  } else if (!stream_->unreachable() && stream_->offsets_verdict().problem == StreamProblem::kNone) {
    OffsetMap latest;
    for (const auto& [p, marks] : stream_->watermarks()) latest[p] = marks.latest;
    change = idle_.Observe(latest, ReadTo(), options_.clock->Now(),
                           absl::Milliseconds(config.inactive_after_millis()));
  }
  if (change == IdleTracker::Change::kNone) return idle_.idle();
  StoreIdleState();
  if (change == IdleTracker::Change::kWoke) {
    LOG(INFO) << Prefix() << "awake: "
              << (config.enabled() ? "the stream moved" : "idleConfig is off")
              << "; creating groups again";
    return false;
  }
  LOG(INFO) << Prefix() << "idle: every partition stayed at its latest offset "
            << FormatOffsets(idle_.state().latest) << " for "
            << config.inactive_after_millis() << " ms with nothing left to read";
  roll_over_->FinalizeAll(groups_, "the stream is idle (ioConfig.idleConfig)",
                          timings_.completion_timeout);
  return true;
}

void StreamSupervisor::StoreIdleState() {
  const int64_t now_ms = options_.clock->NowMs();
  absl::Status stored = options_.store->InTransaction([&](StoreTxn& txn) {
    return txn.SetIdleState(datasource_, idle_.idle() ? &idle_.state() : nullptr, now_ms);
  });
  if (!stored.ok()) RecordError(Annotate(stored, "storing the idle state"));
}

void StreamSupervisor::WakeUp(const std::string& why) {
  if (idle_.Wake() != IdleTracker::Change::kWoke) return;
  StoreIdleState();
  LOG(INFO) << Prefix() << "awake: " << why;
}

void StreamSupervisor::CheckTaskDuration() {
  RollOverRun run;
  if (stopping_) {
    run.stop_all = "the supervisor is stopping";
  } else if (spec_.spec.suspended()) {
    run.stop_all = "the supervisor is suspended";
  }
  run.partitions = stream_->partitions();
  run.task_count = TaskCount();
  run.regrouping = [this](const std::string& name) { return task_count_->Regrouping(name); };
  run.task_duration = timings_.task_duration;
  run.stop_task_count = spec_.spec.io_config().stop_task_count();
  run.completion_timeout = timings_.completion_timeout;
  roll_over_->FinalizeDue(groups_, run);
}

int32_t StreamSupervisor::TaskCount() const {
  return task_count_->TaskCount(spec_.spec.io_config());
}

void StreamSupervisor::CheckAutoScaler() {
  if (!task_count_->on() || spec_.spec.suspended() || stopping_ || idle_.idle()) return;
  // A sample only from a fresh answer about every partition.
  std::optional<OffsetMap> lags;
  if (!stream_->unreachable() && stream_->partitions_known() && !stream_->watermarks().empty() &&
      stream_->offsets_verdict().problem == StreamProblem::kNone) {
    const OffsetMap read_to = ReadTo();
    lags.emplace();
    for (const auto& [p, marks] : stream_->watermarks()) {
      auto it = read_to.find(p);
      (*lags)[p] = marks.latest - (it == read_to.end() ? marks.earliest : it->second);
    }
  }
  task_count_->Check(spec_.spec.io_config(), groups_.reading, lags,
                     static_cast<int32_t>(stream_->partitions().size()),
                     timings_.task_duration);
}

void StreamSupervisor::UpdateTaskStatuses() {
  std::map<std::string, v1::TaskStatus> reports;
  {
    absl::MutexLock lock(&reports_mu_);
    reports = reports_;
  }
  const absl::Time now = options_.clock->Now();
  auto update = [&](Group& group) {
    for (auto& [id, task] : group.tasks) {
      if (!IsLive(task)) continue;
      auto report = reports.find(id);
      if (report != reports.end()) {
        task.status = report->second;
        task.reported = true;
        if (task.state != report->second.state()) {
          VLOG(1) << Prefix() << "task " << id << " is "
                  << v1::TaskState_Name(report->second.state());
        }
        task.state = report->second.state();
        if (!IsLive(task)) {
          options_.registry->Release(id);
          health_.NoteTaskOutcome(task.state);
          continue;
        }
      }
      if (!options_.registry->IsAlive(task.worker_id)) {
        actions_->KillTask(task, absl::StrCat("its worker ", task.worker_id, " was lost"));
        continue;
      }
      std::optional<WorkerView> worker = options_.registry->Get(task.worker_id);
      if (worker && worker->registered && !worker->reported_tasks.count(id) &&
          worker->reported_at > task.created_at + 2 * options_.registry->heartbeat_interval() &&
          now > task.created_at + 2 * options_.registry->heartbeat_interval()) {
        actions_->KillTask(task, absl::StrCat("worker ", task.worker_id, " no longer reports it"));
      }
    }
  };
  for (auto& [id, group] : groups_.reading) update(group);
  for (auto& [id, groups] : groups_.publishing) {
    for (Group& group : groups) update(group);
  }
  // Forget reports of tasks no group holds any more.
  std::set<std::string> tracked;
  for (const auto& [id, group] : groups_.reading) {
    for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
  }
  for (const auto& [id, groups] : groups_.publishing) {
    for (const Group& group : groups) {
      for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
    }
  }
  absl::MutexLock lock(&reports_mu_);
  for (auto it = reports_.begin(); it != reports_.end();) {
    it = tracked.count(it->first) ? std::next(it) : reports_.erase(it);
  }
}

bool StreamSupervisor::IsPreviousSpec(int64_t version) {
  if (version == spec_.version) return false;
  auto cached = previous_spec_.find(version);
  if (cached != previous_spec_.end()) return cached->second;
  std::vector<SpecRecord> history;
  absl::Status read = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(history, txn.SpecHistory(datasource_));
    return absl::OkStatus();
  });
  if (!read.ok()) return true;  // unknown: be careful, wait
  bool previous = true;
  for (const SpecRecord& record : history) {
    if (record.version != version) continue;
    // Versions that differ only in fields taken live are the same spec.
    previous = !AppliesLive(ChangedSpecFields(record.spec, spec_.spec));
  }
  previous_spec_[version] = previous;
  return previous;
}

absl::Status StreamSupervisor::CreateGroupsAndTasks() {
  for (const auto& [id, groups] : groups_.publishing) {
    for (const Group& group : groups) {
      if (IsPreviousSpec(group.spec_version)) {
        detailed_state_ = "WAITING_FOR_PREVIOUS_SPEC_TO_PUBLISH";
        return absl::OkStatus();
      }
    }
  }
  const int task_count = TaskCount();
  std::map<int32_t, std::vector<int32_t>> by_group;
  for (int32_t p : stream_->partitions()) by_group[p % task_count].push_back(p);
  // After a live taskCount change, groups of the old count read on until
  // their roll-over: a new group waits while one of its partitions is read.
  std::set<int32_t> held;
  for (const auto& [id, group] : groups_.reading) {
    for (int32_t p : group.partitions()) held.insert(p);
  }
  absl::Status first_error = absl::OkStatus();
  for (const auto& [group_id, partitions] : by_group) {
    if (groups_.reading.count(group_id)) continue;
    if (std::any_of(partitions.begin(), partitions.end(),
                    [&](int32_t p) { return held.count(p) > 0; })) {
      VLOG(1) << Prefix() << "group " << group_id << " waits for the groups reading its partitions";
      continue;
    }
    absl::Status status = CreateGroup(group_id, partitions);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  bool waiting_for_workers = false;
  for (auto& [group_id, group] : groups_.reading) {
    int live = 0;
    for (const auto& [id, task] : group.tasks) live += IsLive(task) ? 1 : 0;
    for (int i = live; i < spec_.spec.io_config().replicas(); ++i) {
      absl::Status status = CreateTask(group);
      if (absl::IsResourceExhausted(status)) waiting_for_workers = true;
      if (!status.ok()) {
        if (first_error.ok() && !absl::IsResourceExhausted(status)) first_error = status;
        break;
      }
    }
  }
  if (waiting_for_workers) {
    detailed_state_ = "WAITING_FOR_WORKERS";
  } else if (first_error.ok()) {
    detailed_state_ = "RUNNING";
  }
  return first_error;
}

absl::Status StreamSupervisor::CreateGroup(int32_t group_id,
                                           const std::vector<int32_t>& partitions) {
  const std::string topic = StreamNameOf(spec_.spec.io_config());
  OffsetMap committed;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(datasource_));
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> stored_topic, txn.CommitTopic(datasource_));
    if (stored_topic && *stored_topic != topic && !committed.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the stored offsets of ", datasource_, " are for topic \"", *stored_topic,
                       "\", not \"", topic, "\"; reset the supervisor to switch topics"));
    }
    return absl::OkStatus();
  }));
  const std::vector<int32_t> need_marks = PartitionsNeedingWatermarks(partitions, groups_.next_offsets);
  std::map<int32_t, PartitionWatermarks> marks;
  if (!need_marks.empty()) {
    auto queried = stream_->QueryWatermarks(need_marks);
    if (!queried.ok()) {
      return Annotate(queried.status(), absl::StrCat("watermarks of group ", group_id));
    }
    marks = *queried;
  }
  StartOffsetInputs inputs;
  inputs.partitions = partitions;
  inputs.committed = committed;
  inputs.next_offsets = groups_.next_offsets;
  inputs.watermarks = std::move(marks);
  inputs.first_partitions = stream_->first_partitions();
  inputs.use_earliest_offset = spec_.spec.io_config().use_earliest_offset();
  inputs.reset_offset_automatically = spec_.spec.tuning_config().reset_offset_automatically();
  StartOffsetDecision decision = DecideStartOffsets(inputs);
  if (decision.unavailable) {
    // Kafka answered: this is not a connection problem.
    detailed_state_ = "STORED_OFFSETS_UNAVAILABLE";
    stream_->SetOffsetsVerdict({StreamProblem::kStoredOffsetsUnavailable, *decision.unavailable});
    return absl::FailedPreconditionError(*decision.unavailable);
  }
  const OffsetMap& start = decision.start;
  const std::vector<std::string>& sources = decision.sources;
  const OffsetMap& auto_reset = decision.auto_reset;
  if (!auto_reset.empty()) {
    LOG(ERROR) << Prefix() << "ALERT: stored offsets of partitions "
               << FormatOffsets(Restrict(committed, auto_reset))
               << " are no longer in Kafka; resetting them to the earliest available "
               << FormatOffsets(auto_reset) << " (resetOffsetAutomatically): records were lost";
    HandleResetOffsets(auto_reset, "stored offset no longer available (resetOffsetAutomatically)");
  }

  const int64_t now_ms = options_.clock->NowMs();
  const MessageTimeBounds bounds = GroupMessageTimeBounds(timings_, now_ms);
  const int64_t min_time = bounds.min_ms;
  const int64_t max_time = bounds.max_ms;
  Group group;
  group.group_id = group_id;
  group.start_offsets = start;
  group.checkpoints[0] = start;
  group.min_message_time_ms = min_time;
  group.max_message_time_ms = max_time;
  group.created_at = options_.clock->Now();
  group.spec_version = spec_.version;
  // Read after an automatic reset above: it counts too.
  OffsetMap reset_counts;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(reset_counts, txn.OffsetResetCounts(datasource_));
    return absl::OkStatus();
  }));
  group.base_sequence_name =
      BaseSequenceName(datasource_, spec_.spec.data_schema(), spec_.spec.tuning_config(), start,
                       min_time, max_time, reset_counts,
                       InputParsingBytes(spec_.spec.io_config()));
  for (const auto& [id, groups] : groups_.publishing) {
    for (const Group& other : groups) {
      if (other.base_sequence_name == group.base_sequence_name) {
        VLOG(1) << Prefix() << "group " << group_id << " would reuse the name of publishing group "
                << other.base_sequence_name << "; waiting for it to finish";
        return absl::OkStatus();
      }
    }
  }
  TaskGroupRecord record;
  record.base_sequence_name = group.base_sequence_name;
  record.datasource = datasource_;
  record.group_id = group_id;
  record.state = GroupState::kReading;
  record.spec_version = spec_.version;
  record.start_offsets = start;
  record.checkpoints = group.checkpoints;
  record.min_message_time_ms = min_time;
  record.max_message_time_ms = max_time;
  record.created_at_ms = now_ms;
  OffsetMap recorded;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(recorded, txn.RecordInitialOffsets(datasource_, topic, start, now_ms));
    return txn.InsertTaskGroup(record);
  }));
  LOG(INFO) << Prefix() << "created group " << group_id << " (" << group.base_sequence_name
            << ") reading partitions [" << absl::StrJoin(group.partitions(), ",") << "] from "
            << FormatOffsets(start) << " (" << absl::StrJoin(sources, ", ") << ")"
            << (recorded.empty()
                    ? ""
                    : absl::StrCat("; recorded initial offsets ", FormatOffsets(recorded)));
  groups_.reading[group_id] = std::move(group);
  // Its tasks may ask to checkpoint before this run ends (RunTask of the
  // other tasks takes a while): CheckpointDataSourceMetadata must know it.
  PublishView();
  return absl::OkStatus();
}

absl::Status StreamSupervisor::CreateTask(Group& group) {
  // A replacement re-reads from the first sequence not yet published.
  SLUICE_ASSIGN_OR_RETURN(const auto checkpoints, actions_->UnpublishedCheckpoints(group));
  absl::StatusOr<std::string> worker = actions_->PickWorker(group);
  if (!worker.ok()) {
    detailed_state_ = "WAITING_FOR_WORKERS";
    if (options_.clock->Now() - last_resource_error_ > absl::Minutes(1)) {
      last_resource_error_ = options_.clock->Now();
      RecordError(
          Annotate(worker.status(), absl::StrCat("placing a task of group ", group.group_id)));
    }
    return worker.status();
  }
  SLUICE_ASSIGN_OR_RETURN(TaskLaunch launch,
                          actions_->CreateTask(group, *worker, checkpoints, spec_.spec, timings_,
                                               stream_->partition_ids()));
  // The answer comes back as a notice.
  const int32_t group_id = group.group_id;
  const std::string task_id = launch.spec.task_id();
  actions_->SendRunTask(
      std::move(launch), [this, group_id, task_id, worker = *worker](
                             const absl::StatusOr<v1::RunTaskResponse>& response) {
        Post("RunTask answer", [this, group_id, task_id, worker, response] {
          HandleRunTaskResult(group_id, task_id, worker, response);
        });
      });
  return absl::OkStatus();
}

void StreamSupervisor::HandleRunTaskResult(int32_t group_id, const std::string& task_id,
                                           const std::string& worker,
                                           const absl::StatusOr<v1::RunTaskResponse>& response) {
  TaskInfo* task = nullptr;
  if (auto group = groups_.reading.find(group_id); group != groups_.reading.end()) {
    auto it = group->second.tasks.find(task_id);
    if (it != group->second.tasks.end()) task = &it->second;
  }
  if (!response.ok()) {
    const std::string error = absl::StrCat("RunTask failed: ", response.status().ToString());
    actions_->NoteRunTaskFailed(task_id, worker, error);
    RecordError(Annotate(response.status(), absl::StrCat("starting task ", task_id, " of group ",
                                                         group_id, " on worker ", worker)));
    if (task != nullptr && IsLive(*task)) {
      // Not a task outcome: the next run replaces it (on another worker).
      task->state = v1::TASK_STATE_FAILED;
      task->status.set_error(error);
    }
    RequestRun();
    return;
  }
  options_.registry->NoteRunTaskSucceeded(worker);
  if (task == nullptr || !IsLive(*task)) {
    // Its group ended, or the task was killed, while RunTask was under way:
    // the worker must not keep it.
    actions_->KillGivenUp(task_id, worker);
    return;
  }
  task->starting = false;
  if (task->state == v1::TASK_STATE_NOT_STARTED &&
      response->status().state() != v1::TASK_STATE_UNSPECIFIED) {
    task->state = response->status().state();
  }
  LOG(INFO) << Prefix() << "started task " << task_id << " of group " << group_id
            << " on worker " << worker;
}

}  // namespace sluice::supervisor
