// Recovery after a supervisor restart (groups from the metadata store, tasks
// from their workers) and the operations that move stored offsets: reset,
// reset offsets, automatic reset on OffsetOutOfRange.
#include <glog/logging.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/naming.h"
#include "supervisor/stream_health.h"
#include "supervisor/stream_supervisor.h"

namespace sluice::supervisor {

absl::Status StreamSupervisor::Recover() {
  std::vector<TaskGroupRecord> groups;
  std::vector<TaskRecord> tasks;
  OffsetMap reset_counts;
  std::vector<SpecRecord> history;
  std::optional<IdleState> idle;
  std::optional<int32_t> autoscaled;
  std::vector<v1::ScalingDecision> scalings;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(groups, txn.LiveTaskGroups(datasource_));
    SLUICE_ASSIGN_OR_RETURN(tasks, txn.ListTasks(datasource_, /*include_finished=*/false));
    SLUICE_ASSIGN_OR_RETURN(reset_counts, txn.OffsetResetCounts(datasource_));
    SLUICE_ASSIGN_OR_RETURN(history, txn.SpecHistory(datasource_));
    SLUICE_ASSIGN_OR_RETURN(idle, txn.IdleStateOf(datasource_));
    SLUICE_ASSIGN_OR_RETURN(autoscaled, txn.AutoscaledTaskCount(datasource_));
    SLUICE_ASSIGN_OR_RETURN(scalings, txn.ScalingDecisions(datasource_));
    return absl::OkStatus();
  }));
  task_count_->Configure(spec_.spec.io_config(), autoscaled);
  if (task_count_->on()) {
    LOG(INFO) << Prefix() << "autoscaler on: " << TaskCount() << " task groups"
              << (autoscaled ? " (as last applied)" : "");
  }
  idle_.Restore(idle ? &*idle : nullptr);
  if (idle) {
    LOG(INFO) << Prefix() << "idle since " << absl::FormatTime(absl::FromUnixMillis(idle->since_ms))
              << " (latest offsets " << FormatOffsets(idle->latest) << ")";
  }
  std::map<int64_t, const v1::SupervisorSpec*> spec_of_version;
  for (const SpecRecord& record : history) spec_of_version[record.version] = &record.spec;
  std::vector<Group> abandoned;
  std::set<int32_t> held;
  for (const TaskGroupRecord& record : groups) {
    Group group = GroupFromRecord(record);
    if (record.state == GroupState::kPublishing) {
      publishing_[group.group_id].push_back(std::move(group));
      continue;
    }
    // A reading group stays when it was created under this spec or one that
    // differs only in fields taken live (a taskCount change included: its
    // partitions are its own until it rolls over), and its name still
    // matches (no offset reset of its partitions since).
    auto created_under = spec_of_version.find(record.spec_version);
    const v1::SupervisorSpec& spec =
        created_under == spec_of_version.end() ? spec_.spec : *created_under->second;
    bool current = !IsPreviousSpec(record.spec_version) &&
                   record.base_sequence_name ==
                       BaseSequenceName(datasource_, spec.data_schema(), spec.tuning_config(),
                                        record.start_offsets, record.min_message_time_ms,
                                        record.max_message_time_ms, reset_counts,
                                        InputParsingBytes(spec.io_config()));
    for (int32_t p : group.partitions()) current = current && held.count(p) == 0;
    if (!current || active_.count(group.group_id)) {
      abandoned.push_back(std::move(group));
    } else {
      for (int32_t p : group.partitions()) held.insert(p);
      active_[group.group_id] = std::move(group);
    }
  }
  // A scaling action the previous leader had not finished: the groups of
  // the old count still roll over now.
  task_count_->Resume(spec_.spec.io_config(),
                      scalings.empty() ? std::nullopt
                                       : std::optional<v1::ScalingDecision>(scalings.back()),
                      active_);
  std::map<std::string, Group*> by_name;
  for (auto& [id, group] : active_) by_name[group.base_sequence_name] = &group;
  for (auto& [id, list] : publishing_) {
    for (Group& group : list) by_name[group.base_sequence_name] = &group;
  }
  for (Group& group : abandoned) by_name[group.base_sequence_name] = &group;

  int orphans = 0;
  for (const TaskRecord& record : tasks) {
    TaskInfo info;
    info.task_id = record.task_id;
    info.worker_id = record.worker_id;
    info.state = record.state;
    info.created_at = absl::FromUnixMillis(record.created_at_ms);
    options_.registry->Assign(record.task_id, record.worker_id);
    auto group = by_name.find(record.base_sequence_name);
    if (group == by_name.end()) {
      actions_->KillTask(info, "its group is no longer live");
      ++orphans;
      continue;
    }
    group->second->tasks[info.task_id] = info;
  }
  for (Group& group : abandoned) {
    const std::string why = "its spec changed while the supervisor was down";
    actions_->KillGroup(group, why);
    actions_->FinishGroup(group, GroupState::kAbandoned, why);
  }

  int adopted = 0;
  for (auto& [id, group] : active_) {
    for (auto& [task_id, task] : group.tasks) {
      AdoptTask(group, task, /*publishing=*/false);
      adopted += IsLive(task) ? 1 : 0;
    }
  }
  for (auto& [id, list] : publishing_) {
    for (Group& group : list) {
      for (auto& [task_id, task] : group.tasks) {
        AdoptTask(group, task, /*publishing=*/true);
        adopted += IsLive(task) ? 1 : 0;
      }
      for (const auto& [p, offset] : group.end_offsets) {
        if (offset == kEndOfPartition) continue;
        auto [it, inserted] = next_offsets_.emplace(p, offset);
        if (!inserted) it->second = std::max(it->second, offset);
      }
    }
  }
  int publishing = 0;
  for (const auto& [id, list] : publishing_) publishing += static_cast<int>(list.size());
  if (!groups.empty() || !tasks.empty()) {
    LOG(INFO) << Prefix() << "recovered " << active_.size() << " reading and " << publishing
              << " publishing groups from the metadata store (" << abandoned.size()
              << " abandoned); adopted " << adopted << " of " << tasks.size() << " tasks, killed "
              << orphans << " orphans";
  }
  recovered_ = true;
  return absl::OkStatus();
}

void StreamSupervisor::AdoptTask(Group& group, TaskInfo& task, bool publishing) {
  std::optional<std::string> address = actions_->AddressOf(task);
  if (!address) {
    VLOG(1) << Prefix() << "task " << task.task_id << ": worker " << task.worker_id
            << " unknown; waiting for it to register";
    return;
  }
  auto status = client_->GetTaskStatus(*address, task.task_id);
  if (!status.ok()) {
    if (absl::IsNotFound(status.status())) {
      actions_->KillTask(task, "its worker no longer knows it");
    } else {
      LOG(WARNING) << Prefix() << "cannot reach task " << task.task_id
                   << " yet: " << status.status();
    }
    return;
  }
  task.status = *status;
  task.state = status->state();
  task.reported = true;
  if (!IsLive(task)) {
    options_.registry->Release(task.task_id);
    return;
  }
  if (!publishing) {
    for (const v1::Checkpoint& c : status->checkpoints()) {
      auto it = group.checkpoints.find(c.sequence_id());
      if (it == group.checkpoints.end() || it->second != FromProto(c.offsets())) {
        actions_->KillTask(task, absl::StrCat("its checkpoint ", c.sequence_id(), " ",
                                              FormatOffsets(FromProto(c.offsets())),
                                              " is not the group's in the metadata store"));
        return;
      }
    }
    const int32_t latest = group.latest_sequence_id();
    if (status->latest_sequence_id() > latest || status->latest_sequence_id() + 1 < latest) {
      actions_->KillTask(task, absl::StrCat("its latest sequence ", status->latest_sequence_id(),
                                            " is inconsistent with the group's ", latest));
      return;
    }
    if (status->latest_sequence_id() + 1 == latest) {
      // The supervisor recorded a checkpoint and stopped before telling this
      // replica: send it now.
      if (status->state() != v1::TASK_STATE_PAUSED) {
        auto paused = client_->Pause(*address, task.task_id);
        if (!paused.ok()) {
          actions_->KillTask(task, absl::StrCat("it did not pause to receive a missed checkpoint: ",
                                                paused.status().ToString()));
          return;
        }
      }
      auto set = client_->SetEndOffsets(*address, task.task_id, group.latest_checkpoint(), false);
      if (!set.ok()) {
        actions_->KillTask(task, absl::StrCat("it refused the missed checkpoint ",
                                              FormatOffsets(group.latest_checkpoint()), ": ",
                                              set.status().ToString()));
        return;
      }
      LOG(INFO) << Prefix() << "adopted task " << task.task_id << " and sent it the end of "
                << "sequence " << latest - 1
                << " it missed: " << FormatOffsets(group.latest_checkpoint());
      task.state = v1::TASK_STATE_READING;
      return;
    }
  }
  if (status->state() == v1::TASK_STATE_PAUSED) {
    absl::Status resumed = client_->Resume(*address, task.task_id);
    if (!resumed.ok()) {
      actions_->KillTask(
          task, absl::StrCat("it could not be resumed after the supervisor restarted: ",
                             resumed.ToString()));
      return;
    }
    task.state = v1::TASK_STATE_READING;
    LOG(INFO) << Prefix() << "adopted paused task " << task.task_id << " of group "
              << group.group_id << " and resumed it";
    return;
  }
  LOG(INFO) << Prefix() << "adopted task " << task.task_id << " of "
            << (publishing ? "publishing" : "reading") << " group " << group.group_id << " ("
            << v1::TaskState_Name(status->state()) << ")";
}

void StreamSupervisor::KillGroupsReading(const std::set<int32_t>& partitions,
                                         const std::string& reason) {
  for (auto it = active_.begin(); it != active_.end();) {
    bool affected = false;
    for (int32_t p : partitions) affected = affected || it->second.HasPartition(p);
    if (!affected) {
      ++it;
      continue;
    }
    actions_->KillGroup(it->second, reason);
    actions_->FinishGroup(it->second, GroupState::kAbandoned, reason);
    for (int32_t p : it->second.partitions()) next_offsets_.erase(p);
    it = active_.erase(it);
  }
}

void StreamSupervisor::HandleReset() {
  WakeUp("the supervisor was reset");
  OffsetMap before;
  absl::Status status = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(before, txn.CommittedOffsets(datasource_));
    SLUICE_RETURN_IF_ERROR(txn.DeleteCommittedOffsets(datasource_, {}));
    for (const auto& [p, offset] : before) {
      SLUICE_RETURN_IF_ERROR(txn.RecordOffsetReset(datasource_, p, offset, std::nullopt,
                                                   "operator reset", options_.clock->NowMs()));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    RecordError(Annotate(status, "reset"));
    return;
  }
  std::set<int32_t> all;
  for (const auto& [id, group] : active_) {
    for (int32_t p : group.partitions()) all.insert(p);
  }
  KillGroupsReading(all, "the supervisor was reset");
  next_offsets_.clear();
  first_partitions_ = std::set<int32_t>(partitions_.begin(), partitions_.end());
  LOG(WARNING) << Prefix() << "reset: cleared the stored offsets " << FormatOffsets(before)
               << " and killed the reading groups; reading restarts from "
               << (spec_.spec.io_config().use_earliest_offset() ? "earliest" : "latest");
  RunOnce();
}

void StreamSupervisor::HandleResetOffsets(const OffsetMap& offsets, const std::string& reason) {
  WakeUp("offsets were reset");
  OffsetMap before;
  absl::Status status = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(before, txn.CommittedOffsets(datasource_));
    const std::string topic = StreamNameOf(spec_.spec.io_config());
    SLUICE_RETURN_IF_ERROR(
        txn.RecordInitialOffsets(datasource_, topic, offsets, options_.clock->NowMs()).status());
    SLUICE_RETURN_IF_ERROR(
        txn.SetCommittedOffsets(datasource_, topic, offsets, options_.clock->NowMs()));
    for (const auto& [p, offset] : offsets) {
      auto old = before.find(p);
      SLUICE_RETURN_IF_ERROR(txn.RecordOffsetReset(
          datasource_, p, old == before.end() ? std::nullopt : std::optional<int64_t>(old->second),
          offset, reason, options_.clock->NowMs()));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    RecordError(Annotate(status, "reset offsets"));
    return;
  }
  std::set<int32_t> partitions;
  for (const auto& [p, offset] : offsets) partitions.insert(p);
  KillGroupsReading(partitions,
                    absl::StrCat("the offsets of its partitions were reset (", reason, ")"));
  LOG(WARNING) << Prefix() << "stored offsets " << FormatOffsets(Restrict(before, offsets))
               << " set to " << FormatOffsets(offsets) << ": " << reason;
}

v1::ReportOffsetOutOfRangeResponse StreamSupervisor::HandleOffsetOutOfRange(
    const v1::ReportOffsetOutOfRangeRequest& request) {
  v1::ReportOffsetOutOfRangeResponse response;
  const OffsetMap wanted = FromProto(request.offsets());
  if (!spec_.spec.tuning_config().reset_offset_automatically()) {
    const std::string message = absl::StrCat(
        "task ", request.task_id(), " cannot read offsets ", FormatOffsets(wanted),
        " (out of range; earliest available ", FormatOffsets(FromProto(request.earliest_offsets())),
        "); reset the offsets or set tuningConfig.resetOffsetAutomatically");
    RecordError(absl::OutOfRangeError(message));
    response.set_message(message);
    return response;
  }
  // The earliest offsets come from Kafka, never from the report: a task's
  // word is not enough to skip records.
  std::vector<int32_t> partitions;
  for (const auto& [p, offset] : wanted) partitions.push_back(p);
  OffsetMap earliest;
  absl::StatusOr<std::map<int32_t, PartitionWatermarks>> marks =
      stream_ ? stream_->QueryWatermarks(partitions, options_.kafka_timeout)
              : absl::UnavailableError("no connection to the stream");
  if (!marks.ok()) {
    response.set_message(absl::StrCat("cannot read the earliest offsets: ",
                                      marks.status().ToString(), "; not resetting"));
    RecordError(marks.status());
    return response;
  }
  for (const auto& [p, mark] : *marks) earliest[p] = mark.earliest;
  const OffsetMap reported = FromProto(request.earliest_offsets());
  if (!reported.empty() && Restrict(reported, earliest) != Restrict(earliest, reported)) {
    LOG(WARNING) << Prefix() << "task " << request.task_id() << " reported earliest offsets "
                 << FormatOffsets(reported) << "; Kafka says " << FormatOffsets(earliest)
                 << " (Kafka's are used)";
  }
  // Judged against the committed offsets, not the task's position: a report
  // for an offset Kafka still holds must never move the stored offset back.
  OffsetMap committed;
  absl::Status read = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(datasource_));
    return absl::OkStatus();
  });
  if (!read.ok()) {
    response.set_message(
        absl::StrCat("cannot read the committed offsets: ", read.ToString(), "; not resetting"));
    RecordError(Annotate(read, "offset out of range"));
    return response;
  }
  const OutOfRangeJudgement judged =
      JudgeOutOfRangeReport(request.task_id(), wanted, committed, *marks);
  std::string message = absl::StrJoin(judged.findings, "; ");
  if (judged.task_suspect) {
    absl::StrAppend(&message, "; the task is replaced");
    RecordError(absl::FailedPreconditionError(message));
    for (auto& [id, group] : active_) {
      auto task = group.tasks.find(request.task_id());
      if (task == group.tasks.end() || !IsLive(task->second)) continue;
      actions_->KillTask(task->second,
                         "its OffsetOutOfRange report contradicts Kafka's watermarks");
    }
  }
  if (judged.reset.empty()) {
    if (!judged.task_suspect) LOG(WARNING) << Prefix() << message;
    response.set_message(message);
    return response;
  }
  int64_t lost = 0;
  for (const auto& [p, n] : judged.lost) lost += n;
  const std::string alert = absl::StrCat(
      "ALERT: ", lost, " records lost (deleted by retention before they were ingested): ",
      message, " (resetOffsetAutomatically)");
  LOG(ERROR) << Prefix() << alert;
  health_.NoteError(options_.clock->NowMs(), absl::DataLossError(alert));
  HandleResetOffsets(judged.reset, absl::StrCat("OffsetOutOfRange reported by task ",
                                                request.task_id(), " (resetOffsetAutomatically)"));
  response.set_reset(true);
  response.set_message(absl::StrCat(message, "; the task is replaced"));
  return response;
}

}  // namespace sluice::supervisor
