// Recovery of a stream supervisor's groups and tasks: see group_recovery.h.
#include "supervisor/group_recovery.h"

#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/naming.h"

namespace sluice::supervisor {

GroupRecovery::GroupRecovery(GroupRecoveryOptions options) : options_(std::move(options)) {}

std::string GroupRecovery::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

absl::StatusOr<RecoveredGroups> GroupRecovery::Recover(
    const v1::SupervisorSpec& running, const std::function<bool(int64_t)>& is_previous_spec) {
  RecoveredGroups out;
  std::vector<TaskGroupRecord> groups;
  std::vector<TaskRecord> tasks;
  OffsetMap reset_counts;
  std::vector<SpecRecord> history;
  std::optional<IdleState> idle;
  std::optional<int32_t> autoscaled;
  std::vector<v1::ScalingDecision> scalings;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(groups, txn.LiveTaskGroups(options_.datasource));
    SLUICE_ASSIGN_OR_RETURN(tasks, txn.ListTasks(options_.datasource, /*include_finished=*/false));
    SLUICE_ASSIGN_OR_RETURN(reset_counts, txn.OffsetResetCounts(options_.datasource));
    SLUICE_ASSIGN_OR_RETURN(history, txn.SpecHistory(options_.datasource));
    SLUICE_ASSIGN_OR_RETURN(idle, txn.IdleStateOf(options_.datasource));
    SLUICE_ASSIGN_OR_RETURN(autoscaled, txn.AutoscaledTaskCount(options_.datasource));
    SLUICE_ASSIGN_OR_RETURN(scalings, txn.ScalingDecisions(options_.datasource));
    return absl::OkStatus();
  }));
  if (!scalings.empty()) out.last_scaling = scalings.back();
  out.idle = idle;
  out.autoscaled_task_count = autoscaled;
  std::map<int64_t, const v1::SupervisorSpec*> spec_of_version;
  for (const SpecRecord& record : history) spec_of_version[record.version] = &record.spec;
  std::vector<Group> abandoned;
  std::set<int32_t> held;
  for (const TaskGroupRecord& record : groups) {
    Group group = GroupFromRecord(record);
    if (record.state == GroupState::kPublishing) {
      out.publishing[group.group_id].push_back(std::move(group));
      continue;
    }
    // A reading group stays when it was created under this spec or one that
    // differs only in fields taken live (a taskCount change included: its
    // partitions are its own until it rolls over), and its name still
    // matches (no offset reset of its partitions since).
    auto created_under = spec_of_version.find(record.spec_version);
    const v1::SupervisorSpec& spec =
        created_under == spec_of_version.end() ? running : *created_under->second;
    bool current = !is_previous_spec(record.spec_version) &&
                   record.base_sequence_name ==
                       BaseSequenceName(options_.datasource, spec.data_schema(),
                                        spec.tuning_config(), record.start_offsets,
                                        record.min_message_time_ms, record.max_message_time_ms,
                                        reset_counts, InputParsingBytes(spec.io_config()));
    for (int32_t p : group.partitions()) current = current && held.count(p) == 0;
    if (!current || out.reading.count(group.group_id)) {
      abandoned.push_back(std::move(group));
    } else {
      for (int32_t p : group.partitions()) held.insert(p);
      out.reading[group.group_id] = std::move(group);
    }
  }
  std::map<std::string, Group*> by_name;
  for (auto& [id, group] : out.reading) by_name[group.base_sequence_name] = &group;
  for (auto& [id, list] : out.publishing) {
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
      options_.actions->KillTask(info, "its group is no longer live");
      ++orphans;
      continue;
    }
    group->second->tasks[info.task_id] = info;
  }
  for (Group& group : abandoned) {
    const std::string why = "its spec changed while the supervisor was down";
    options_.actions->KillGroup(group, why);
    options_.actions->FinishGroup(group, GroupState::kAbandoned, why);
  }

  int adopted = 0;
  for (auto& [id, group] : out.reading) {
    for (auto& [task_id, task] : group.tasks) {
      Adopt(group, task, /*publishing=*/false);
      adopted += IsLive(task) ? 1 : 0;
    }
  }
  for (auto& [id, list] : out.publishing) {
    for (Group& group : list) {
      for (auto& [task_id, task] : group.tasks) {
        Adopt(group, task, /*publishing=*/true);
        adopted += IsLive(task) ? 1 : 0;
      }
      for (const auto& [p, offset] : group.end_offsets) {
        if (offset == kEndOfPartition) continue;
        auto [it, inserted] = out.publishing_ends.emplace(p, offset);
        if (!inserted) it->second = std::max(it->second, offset);
      }
    }
  }
  int publishing = 0;
  for (const auto& [id, list] : out.publishing) publishing += static_cast<int>(list.size());
  if (!groups.empty() || !tasks.empty()) {
    LOG(INFO) << Prefix() << "recovered " << out.reading.size() << " reading and " << publishing
              << " publishing groups from the metadata store (" << abandoned.size()
              << " abandoned); adopted " << adopted << " of " << tasks.size() << " tasks, killed "
              << orphans << " orphans";
  }
  return out;
}

void GroupRecovery::Adopt(Group& group, TaskInfo& task, bool publishing) {
  std::optional<std::string> address = options_.actions->AddressOf(task);
  if (!address) {
    VLOG(1) << Prefix() << "task " << task.task_id << ": worker " << task.worker_id
            << " unknown; waiting for it to register";
    return;
  }
  auto status = options_.client->GetTaskStatus(*address, task.task_id);
  if (!status.ok()) {
    if (absl::IsNotFound(status.status())) {
      options_.actions->KillTask(task, "its worker no longer knows it");
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
        options_.actions->KillTask(task, absl::StrCat("its checkpoint ", c.sequence_id(), " ",
                                                      FormatOffsets(FromProto(c.offsets())),
                                                      " is not the group's in the metadata store"));
        return;
      }
    }
    const int32_t latest = group.latest_sequence_id();
    if (status->latest_sequence_id() > latest || status->latest_sequence_id() + 1 < latest) {
      options_.actions->KillTask(task,
                                 absl::StrCat("its latest sequence ", status->latest_sequence_id(),
                                              " is inconsistent with the group's ", latest));
      return;
    }
    if (status->latest_sequence_id() + 1 == latest) {
      // The supervisor recorded a checkpoint and stopped before telling this
      // replica: send it now.
      if (status->state() != v1::TASK_STATE_PAUSED) {
        auto paused = options_.client->Pause(*address, task.task_id);
        if (!paused.ok()) {
          options_.actions->KillTask(
              task, absl::StrCat("it did not pause to receive a missed checkpoint: ",
                                 paused.status().ToString()));
          return;
        }
      }
      auto set =
          options_.client->SetEndOffsets(*address, task.task_id, group.latest_checkpoint(), false);
      if (!set.ok()) {
        options_.actions->KillTask(task, absl::StrCat("it refused the missed checkpoint ",
                                                      FormatOffsets(group.latest_checkpoint()),
                                                      ": ", set.status().ToString()));
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
    absl::Status resumed = options_.client->Resume(*address, task.task_id);
    if (!resumed.ok()) {
      options_.actions->KillTask(
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

}  // namespace sluice::supervisor
