// The run steps of a stream supervisor (stream_supervisor.h): partitions,
// task statuses, roll-over (a group's final round, then publishing),
// completion timeouts, replacement of ended tasks and groups, creation of
// groups and tasks. Loop only.
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
  for (auto& [id, group] : active_) update(group);
  for (auto& [id, groups] : publishing_) {
    for (Group& group : groups) update(group);
  }
  // Forget reports of tasks no group holds any more.
  std::set<std::string> tracked;
  for (const auto& [id, group] : active_) {
    for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
  }
  for (const auto& [id, groups] : publishing_) {
    for (const Group& group : groups) {
      for (const auto& [task_id, task] : group.tasks) tracked.insert(task_id);
    }
  }
  absl::MutexLock lock(&reports_mu_);
  for (auto it = reports_.begin(); it != reports_.end();) {
    it = tracked.count(it->first) ? std::next(it) : reports_.erase(it);
  }
}

void StreamSupervisor::CheckTaskDuration() {
  const absl::Time now = options_.clock->Now();
  const bool stop_all = spec_.spec.suspended() || stopping_;
  std::vector<std::pair<absl::Time, int32_t>> due;
  std::set<int32_t> repartitioned;
  // Groups of the count before the last scaling action.
  std::set<int32_t> regrouped;
  const int task_count = TaskCount();
  for (const auto& [id, group] : active_) {
    // Partitions added to the topic (CreatePartitions) that belong to this
    // group (p % taskCount) are read by its next generation: roll over now
    // rather than at the end of the task duration (Druid waits
    // repartitionTransitionDuration, PT2M by default, then does the same).
    bool grown = false;
    for (int32_t p : stream_->partitions()) {
      if (task_count > 0 && p % task_count == id && !group.HasPartition(p)) grown = true;
    }
    if (grown) repartitioned.insert(id);
    if (task_count_->Regrouping(group.base_sequence_name)) regrouped.insert(id);
    if (stop_all || grown || regrouped.count(id) ||
        now >= group.created_at + timings_.task_duration) {
      due.emplace_back(group.created_at, id);
    }
  }
  std::sort(due.begin(), due.end());
  int publishing = 0;
  for (const auto& [id, groups] : publishing_) publishing += static_cast<int>(groups.size());
  for (const auto& [created, id] : due) {
    if (!stop_all && publishing >= spec_.spec.io_config().stop_task_count()) {
      VLOG(1) << Prefix() << "group " << id << " is due to roll over but " << publishing
              << " groups are still publishing (stopTaskCount "
              << spec_.spec.io_config().stop_task_count() << ")";
      break;
    }
    Finalize(id, stop_all ? (stopping_ ? "the supervisor is stopping" : "the supervisor is suspended")
                 : repartitioned.count(id) ? "partitions were added to the topic"
                 : regrouped.count(id)
                     ? absl::StrCat("the autoscaler changed the number of groups to ", task_count)
                     : std::string("its task duration elapsed"));
    ++publishing;
  }
}

void StreamSupervisor::FinalizeAll(const std::string& why) {
  std::vector<int32_t> ids;
  for (const auto& [id, group] : active_) ids.push_back(id);
  for (int32_t id : ids) Finalize(id, why);
}

void StreamSupervisor::Finalize(int32_t group_id, const std::string& why) {
  auto it = active_.find(group_id);
  if (it == active_.end()) return;
  Group group = std::move(it->second);
  active_.erase(it);
  absl::StatusOr<OffsetMap> end = checkpoints_->Round(group, /*finish=*/true);
  if (!end.ok()) {
    LOG(WARNING) << Prefix() << "could not finalize group " << group_id << " ("
                 << group.base_sequence_name << "): " << end.status()
                 << "; killing it, the next group starts from the stored offsets";
    actions_->KillGroup(group,
                        absl::StrCat("its group could not be finalized: ", end.status().message()));
    actions_->FinishGroup(group, GroupState::kAbandoned, std::string(end.status().message()));
    for (int32_t p : group.partitions()) next_offsets_.erase(p);
    return;
  }
  const absl::Time deadline = options_.clock->Now() + timings_.completion_timeout;
  absl::Status recorded = options_.store->InTransaction([&](StoreTxn& txn) {
    return txn.SetGroupPublishing(group.base_sequence_name, *end, absl::ToUnixMillis(deadline));
  });
  if (!recorded.ok()) RecordError(Annotate(recorded, "recording a publishing group"));
  group.end_offsets = *end;
  group.completion_deadline = deadline;
  for (const auto& [p, offset] : *end) {
    if (offset == kEndOfPartition) {
      next_offsets_.erase(p);
    } else {
      next_offsets_[p] = offset;
    }
  }
  LOG(INFO) << Prefix() << "rolled over group " << group_id << " (" << group.base_sequence_name
            << "): " << why << "; it publishes up to " << FormatOffsets(*end) << " before "
            << FormatIsoInstant(absl::ToUnixMillis(deadline)) << ", the next group starts there";
  publishing_[group_id].push_back(std::move(group));
}

void StreamSupervisor::CheckPendingCompletion() {
  const absl::Time now = options_.clock->Now();
  for (auto& [group_id, groups] : publishing_) {
    bool earlier_timed_out = false;
    for (auto it = groups.begin(); it != groups.end();) {
      Group& group = *it;
      if (earlier_timed_out) {
        actions_->KillGroup(group,
                            "an earlier group of the same partitions did not publish in time");
        actions_->FinishGroup(group, GroupState::kAbandoned, "an earlier group timed out");
        it = groups.erase(it);
        continue;
      }
      bool any_live = false;
      for (const auto& [id, task] : group.tasks) any_live = any_live || IsLive(task);
      if (const TaskInfo* winner = WinnerOf(group)) {
        const std::string winner_id = winner->task_id;
        actions_->FinishWonGroup(
            group, winner_id,
            absl::StrCat("group ", group_id, " (", group.base_sequence_name,
                         ") published everything up to ", FormatOffsets(group.end_offsets),
                         ": task ", winner_id, " succeeded"));
        it = groups.erase(it);
        continue;
      }
      const bool timed_out = now >= group.completion_deadline;
      if (!any_live || timed_out) {
        const std::string why = !any_live
                                    ? "every task of the group failed"
                                    : absl::StrCat("no task succeeded within completionTimeout ",
                                                   spec_.spec.io_config().completion_timeout());
        LOG(ERROR) << Prefix() << "ALERT: publishing group " << group_id << " ("
                   << group.base_sequence_name << ", end " << FormatOffsets(group.end_offsets)
                   << "): " << why << "; killing it and the group reading after it, and "
                   << "restarting from the stored offsets";
        actions_->KillGroup(group, why);
        actions_->FinishGroup(group, GroupState::kAbandoned, why);
        for (int32_t p : group.partitions()) next_offsets_.erase(p);
        auto active = active_.find(group_id);
        if (active != active_.end()) {
          actions_->KillGroup(active->second, "the group it started after did not publish");
          actions_->FinishGroup(active->second, GroupState::kAbandoned,
                                "the group it started after did not publish");
          for (int32_t p : active->second.partitions()) next_offsets_.erase(p);
          active_.erase(active);
        }
        earlier_timed_out = true;
        it = groups.erase(it);
        continue;
      }
      ++it;
    }
  }
  for (auto it = publishing_.begin(); it != publishing_.end();) {
    it = it->second.empty() ? publishing_.erase(it) : std::next(it);
  }
}

void StreamSupervisor::CheckCurrentTasks() {
  for (auto it = active_.begin(); it != active_.end();) {
    Group& group = it->second;
    for (auto task = group.tasks.begin(); task != group.tasks.end();) {
      if (task->second.state == v1::TASK_STATE_FAILED || task->second.state == v1::TASK_STATE_STOPPED) {
        LOG(WARNING) << Prefix() << "task " << task->first << " of group " << it->first << " ended "
                     << v1::TaskState_Name(task->second.state) << ": "
                     << task->second.status.error() << "; it will be replaced";
        ++group.tasks_lost;
        task = group.tasks.erase(task);
        continue;
      }
      ++task;
    }
    if (const TaskInfo* winner = WinnerOf(group)) {
      const std::string winner_id = winner->task_id;
      actions_->FinishWonGroup(
          group, winner_id,
          absl::StrCat("reading group ", it->first, " (", group.base_sequence_name,
                       ") ended: task ", winner_id,
                       " succeeded; the next group starts from the stored offsets"));
      for (int32_t p : group.partitions()) next_offsets_.erase(p);
      it = active_.erase(it);
      continue;
    }
    ++it;
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
  for (const auto& [id, groups] : publishing_) {
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
  for (const auto& [id, group] : active_) {
    for (int32_t p : group.partitions()) held.insert(p);
  }
  absl::Status first_error = absl::OkStatus();
  for (const auto& [group_id, partitions] : by_group) {
    if (active_.count(group_id)) continue;
    if (std::any_of(partitions.begin(), partitions.end(),
                    [&](int32_t p) { return held.count(p) > 0; })) {
      VLOG(1) << Prefix() << "group " << group_id << " waits for the groups reading its partitions";
      continue;
    }
    absl::Status status = CreateGroup(group_id, partitions);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  bool waiting_for_workers = false;
  for (auto& [group_id, group] : active_) {
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
  const std::vector<int32_t> need_marks = PartitionsNeedingWatermarks(partitions, next_offsets_);
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
  inputs.next_offsets = next_offsets_;
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
  for (const auto& [id, groups] : publishing_) {
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
  active_[group_id] = std::move(group);
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
  if (auto group = active_.find(group_id); group != active_.end()) {
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
