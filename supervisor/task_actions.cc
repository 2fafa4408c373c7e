#include "supervisor/task_actions.h"

#include <glog/logging.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/naming.h"

namespace sluice::supervisor {

const TaskInfo* WinnerOf(const Group& group) {
  for (const auto& [id, task] : group.tasks) {
    if (task.state == v1::TASK_STATE_SUCCESS) return &task;
  }
  return nullptr;
}

v1::TaskSpec BuildTaskSpec(const std::string& datasource, const std::string& task_id,
                           const v1::SupervisorSpec& supervisor_spec, const SpecTimings& timings,
                           const Group& group, const std::map<int32_t, OffsetMap>& checkpoints,
                           int64_t now_ms, const StreamPartitionIds* stream_partition_ids) {
  v1::TaskSpec spec;
  spec.set_task_id(task_id);
  spec.set_datasource(datasource);
  spec.set_group_id(group.group_id);
  spec.set_base_sequence_name(group.base_sequence_name);
  spec.set_topic(supervisor_spec.io_config().topic());
  spec.set_topic_pattern(supervisor_spec.io_config().topic_pattern());
  if (stream_partition_ids != nullptr) {
    for (const auto& [partition, offset] : group.start_offsets) {
      std::optional<TopicPartition> name = stream_partition_ids->Find(partition);
      // Never absent (ids are given before groups use them); if it were, the
      // task refuses its spec for the partition it cannot name.
      if (!name.has_value()) continue;
      v1::StreamPartition* entry = spec.add_stream_partitions();
      entry->set_id(partition);
      entry->set_topic(name->topic);
      entry->set_partition(name->partition);
    }
  }
  *spec.mutable_consumer_properties() = supervisor_spec.io_config().consumer_properties();
  ToProto(group.start_offsets, spec.mutable_start_offsets());
  for (const auto& [id, offsets] : checkpoints) {
    v1::Checkpoint* checkpoint = spec.add_checkpoints();
    checkpoint->set_sequence_id(id);
    ToProto(offsets, checkpoint->mutable_offsets());
  }
  spec.set_minimum_message_time_ms(group.min_message_time_ms);
  spec.set_maximum_message_time_ms(group.max_message_time_ms);
  *spec.mutable_data_schema() = supervisor_spec.data_schema();
  *spec.mutable_tuning_config() = supervisor_spec.tuning_config();
  const v1::IoConfig& io = supervisor_spec.io_config();
  if (io.has_input_format()) *spec.mutable_input_format() = io.input_format();
  if (io.has_header_based_filter_config()) {
    *spec.mutable_header_based_filter_config() = io.header_based_filter_config();
  }
  spec.set_poll_timeout_ms(absl::ToInt64Milliseconds(timings.poll_timeout));
  spec.set_created_at_ms(now_ms);
  return spec;
}

TaskActions::TaskActions(TaskActionsOptions deps) : options_(std::move(deps)) {}

std::string TaskActions::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

std::optional<std::string> TaskActions::AddressOf(const TaskInfo& task) {
  return options_.registry->Address(task.worker_id);
}

// ---- create ----

absl::StatusOr<std::map<int32_t, OffsetMap>> TaskActions::UnpublishedCheckpoints(
    const Group& group) {
  std::map<int32_t, OffsetMap> checkpoints;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    checkpoints.clear();
    for (const auto& [id, offsets] : group.checkpoints) {
      if (id != group.latest_sequence_id()) {
        SLUICE_ASSIGN_OR_RETURN(
            auto committed,
            txn.CommittedSequence(options_.datasource, SequenceName(group.base_sequence_name, id)));
        if (committed) continue;
      }
      checkpoints[id] = offsets;
    }
    return absl::OkStatus();
  }));
  return checkpoints;
}

absl::StatusOr<std::string> TaskActions::PickWorker(const Group& group) {
  std::set<std::string> avoid;
  for (const auto& [id, task] : group.tasks) {
    if (IsLive(task)) avoid.insert(task.worker_id);
  }
  return options_.registry->PickWorker(avoid);
}

absl::StatusOr<TaskLaunch> TaskActions::CreateTask(Group& group, const std::string& worker,
                                                   const std::map<int32_t, OffsetMap>& checkpoints,
                                                   const v1::SupervisorSpec& supervisor_spec,
                                                   const SpecTimings& timings,
                                                   const StreamPartitionIds* stream_partition_ids) {
  std::optional<std::string> address = options_.registry->Address(worker);
  if (!address) return absl::InternalError(absl::StrCat("worker ", worker, " has no address"));

  const int64_t now_ms = options_.clock->NowMs();
  TaskLaunch launch;
  launch.address = *address;
  launch.worker_id = worker;
  launch.group_id = group.group_id;
  launch.spec = BuildTaskSpec(options_.datasource, NewTaskId(group.base_sequence_name),
                              supervisor_spec, timings, group, checkpoints, now_ms,
                              stream_partition_ids);
  launch.spec.set_supervisor_decodes_segments(options_.publisher_decodes_segments);
  const v1::TaskSpec& spec = launch.spec;

  TaskRecord record;
  record.task_id = spec.task_id();
  record.datasource = options_.datasource;
  record.group_id = group.group_id;
  record.base_sequence_name = group.base_sequence_name;
  record.worker_id = worker;
  record.state = v1::TASK_STATE_NOT_STARTED;
  record.spec = spec;
  record.created_at_ms = now_ms;
  record.updated_at_ms = now_ms;
  SLUICE_RETURN_IF_ERROR(
      options_.store->InTransaction([&](StoreTxn& txn) { return txn.InsertTask(record); }));
  options_.registry->Assign(spec.task_id(), worker);

  TaskInfo info;
  info.task_id = spec.task_id();
  info.worker_id = worker;
  info.state = v1::TASK_STATE_NOT_STARTED;
  info.created_at = options_.clock->Now();
  info.starting = true;
  const bool replacement = group.tasks_lost > 0;
  if (replacement) --group.tasks_lost;
  group.tasks[info.task_id] = info;
  LOG(INFO) << Prefix() << "starting " << (replacement ? "replacement " : "") << "task "
            << info.task_id << " of group " << group.group_id << " on worker " << worker
            << " from sequence " << checkpoints.begin()->first << " at "
            << FormatOffsets(checkpoints.begin()->second) << " (" << checkpoints.size()
            << " checkpoints)";
  return launch;
}

void TaskActions::SendRunTask(
    TaskLaunch launch, std::function<void(const absl::StatusOr<v1::RunTaskResponse>&)> answered) {
  // Off the loop: a frozen worker costs this task its RunTask deadline, not
  // the datasource's loop.
  {
    absl::MutexLock lock(&mu_);
    ++run_tasks_in_flight_;
  }
  options_.task_rpcs->Run([this, launch = std::move(launch), answered = std::move(answered)] {
    absl::StatusOr<v1::RunTaskResponse> response =
        options_.run_client->RunTask(launch.address, launch.spec);
    answered(response);
    absl::MutexLock lock(&mu_);
    --run_tasks_in_flight_;
  });
}

bool TaskActions::AwaitRunTasks(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return run_tasks_in_flight_ == 0; };
  // Real time: RunTask deadlines are real.
  return mu_.AwaitWithDeadline(absl::Condition(&none), deadline);
}

void TaskActions::NoteRunTaskFailed(const std::string& task_id, const std::string& worker,
                                    const std::string& error) {
  // The next placement goes elsewhere for a while: a frozen worker must
  // not take every replacement (and a RunTask deadline each time).
  options_.registry->NoteRunTaskFailed(worker);
  options_.registry->Release(task_id);
  options_.store
      ->InTransaction([&](StoreTxn& txn) {
        return txn.UpdateTask(task_id, v1::TASK_STATE_FAILED, error, {}, options_.clock->NowMs());
      })
      .IgnoreError();
}

void TaskActions::KillGivenUp(const std::string& task_id, const std::string& worker) {
  LOG(INFO) << Prefix() << "task " << task_id << " started on worker " << worker
            << " after it was given up; killing it";
  if (std::optional<std::string> address = options_.registry->Address(worker)) {
    options_.client->StopTask(*address, task_id, v1::STOP_MODE_KILL, "given up while starting").IgnoreError();
  }
}

// ---- stop and kill ----

void TaskActions::KillTask(TaskInfo& task, const std::string& reason) {
  // A task still starting gets no call (its worker may be frozen): if its
  // RunTask succeeds after all, the supervisor kills it then (KillGivenUp).
  if (std::optional<std::string> address = AddressOf(task);
      address && options_.registry->IsAlive(task.worker_id) && !task.starting) {
    auto stopped = options_.client->StopTask(*address, task.task_id, v1::STOP_MODE_KILL, reason);
    if (!stopped.ok()) {
      VLOG(1) << Prefix() << "kill of " << task.task_id << ": " << stopped.status();
    }
  }
  LOG(WARNING) << Prefix() << "killed task " << task.task_id << " on worker " << task.worker_id
               << ": " << reason;
  task.state = v1::TASK_STATE_FAILED;
  task.status.set_error(absl::StrCat("killed by supervisor: ", reason));
  options_.registry->Release(task.task_id);
  options_.store
      ->InTransaction([&](StoreTxn& txn) {
        return txn.UpdateTask(task.task_id, v1::TASK_STATE_FAILED, task.status.error(), {},
                              options_.clock->NowMs());
      })
      .IgnoreError();
  if (options_.note_outcome) options_.note_outcome(task.state);
}

void TaskActions::StopTaskGracefully(TaskInfo& task, const std::string& reason) {
  if (std::optional<std::string> address = AddressOf(task)) {
    auto stopped = options_.client->StopTask(*address, task.task_id, v1::STOP_MODE_GRACEFUL, reason);
    if (!stopped.ok()) {
      VLOG(1) << Prefix() << "stop of " << task.task_id << ": " << stopped.status();
    }
  }
  LOG(INFO) << Prefix() << "stopped task " << task.task_id << ": " << reason;
  task.state = v1::TASK_STATE_STOPPED;
  options_.registry->Release(task.task_id);
  options_.store
      ->InTransaction([&](StoreTxn& txn) {
        return txn.UpdateTask(task.task_id, v1::TASK_STATE_STOPPED, absl::StrCat("stopped: ", reason), {},
                              options_.clock->NowMs());
      })
      .IgnoreError();
}

void TaskActions::KillGroup(Group& group, const std::string& reason) {
  for (auto& [id, task] : group.tasks) {
    if (IsLive(task)) KillTask(task, reason);
  }
}

void TaskActions::FinishGroup(const Group& group, GroupState state, const std::string& reason) {
  if (state == GroupState::kReading) return;
  absl::Status status = options_.store->InTransaction([&](StoreTxn& txn) {
    return txn.FinishGroup(group.base_sequence_name, state, reason, options_.clock->NowMs());
  });
  if (!status.ok() && options_.record_error) {
    options_.record_error(Annotate(status, "recording the end of a task group"));
  }
}

void TaskActions::FinishWonGroup(Group& group, const std::string& winner_id,
                                 const std::string& log_line) {
  for (auto& [id, task] : group.tasks) {
    if (IsLive(task)) StopTaskGracefully(task, absl::StrCat("replica ", winner_id, " succeeded"));
  }
  LOG(INFO) << Prefix() << log_line;
  FinishGroup(group, GroupState::kDone, absl::StrCat("task ", winner_id, " succeeded"));
}

}  // namespace sluice::supervisor
