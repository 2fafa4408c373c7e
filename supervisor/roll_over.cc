// Roll-over and the end of a stream supervisor's groups: see roll_over.h.
#include "supervisor/roll_over.h"

#include <glog/logging.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/time_util.h"

namespace sluice::supervisor {

RollOver::RollOver(RollOverOptions options) : options_(std::move(options)) {}

std::string RollOver::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

void RollOver::FinalizeDue(TaskGroups& groups, const RollOverRun& run) {
  const absl::Time now = options_.clock->Now();
  const bool stop_all = run.stop_all.has_value();
  std::vector<std::pair<absl::Time, int32_t>> due;
  std::set<int32_t> repartitioned;
  // Groups of the count before the last scaling action.
  std::set<int32_t> regrouped;
  const int task_count = run.task_count;
  for (const auto& [id, group] : groups.reading) {
    // Partitions added to the topic (CreatePartitions) that belong to this
    // group (p % taskCount) are read by its next generation: roll over now
    // rather than at the end of the task duration (Druid waits
    // repartitionTransitionDuration, PT2M by default, then does the same).
    bool grown = false;
    for (int32_t p : run.partitions) {
      if (task_count > 0 && p % task_count == id && !group.HasPartition(p)) grown = true;
    }
    if (grown) repartitioned.insert(id);
    if (run.regrouping(group.base_sequence_name)) regrouped.insert(id);
    if (stop_all || grown || regrouped.count(id) || now >= group.created_at + run.task_duration) {
      due.emplace_back(group.created_at, id);
    }
  }
  std::sort(due.begin(), due.end());
  int publishing = 0;
  for (const auto& [id, list] : groups.publishing) publishing += static_cast<int>(list.size());
  for (const auto& [created, id] : due) {
    if (!stop_all && publishing >= run.stop_task_count) {
      VLOG(1) << Prefix() << "group " << id << " is due to roll over but " << publishing
              << " groups are still publishing (stopTaskCount " << run.stop_task_count << ")";
      break;
    }
    Finalize(groups, id,
             stop_all                  ? *run.stop_all
             : repartitioned.count(id) ? "partitions were added to the topic"
             : regrouped.count(id)
                 ? absl::StrCat("the autoscaler changed the number of groups to ", task_count)
                 : std::string("its task duration elapsed"),
             run.completion_timeout);
    ++publishing;
  }
}

void RollOver::FinalizeAll(TaskGroups& groups, const std::string& why,
                           absl::Duration completion_timeout) {
  std::vector<int32_t> ids;
  for (const auto& [id, group] : groups.reading) ids.push_back(id);
  for (int32_t id : ids) Finalize(groups, id, why, completion_timeout);
}

void RollOver::Finalize(TaskGroups& groups, int32_t group_id, const std::string& why,
                        absl::Duration completion_timeout) {
  auto it = groups.reading.find(group_id);
  if (it == groups.reading.end()) return;
  Group group = std::move(it->second);
  groups.reading.erase(it);
  absl::StatusOr<OffsetMap> end = options_.checkpoints->Round(group, /*finish=*/true);
  if (!end.ok()) {
    LOG(WARNING) << Prefix() << "could not finalize group " << group_id << " ("
                 << group.base_sequence_name << "): " << end.status()
                 << "; killing it, the next group starts from the stored offsets";
    options_.actions->KillGroup(
        group, absl::StrCat("its group could not be finalized: ", end.status().message()));
    options_.actions->FinishGroup(group, GroupState::kAbandoned,
                                  std::string(end.status().message()));
    for (int32_t p : group.partitions()) groups.next_offsets.erase(p);
    return;
  }
  const absl::Time deadline = options_.clock->Now() + completion_timeout;
  absl::Status recorded = options_.store->InTransaction([&](StoreTxn& txn) {
    return txn.SetGroupPublishing(group.base_sequence_name, *end, absl::ToUnixMillis(deadline));
  });
  if (!recorded.ok()) options_.record_error(Annotate(recorded, "recording a publishing group"));
  group.end_offsets = *end;
  group.completion_deadline = deadline;
  for (const auto& [p, offset] : *end) {
    if (offset == kEndOfPartition) {
      groups.next_offsets.erase(p);
    } else {
      groups.next_offsets[p] = offset;
    }
  }
  LOG(INFO) << Prefix() << "rolled over group " << group_id << " (" << group.base_sequence_name
            << "): " << why << "; it publishes up to " << FormatOffsets(*end) << " before "
            << FormatIsoInstant(absl::ToUnixMillis(deadline)) << ", the next group starts there";
  groups.publishing[group_id].push_back(std::move(group));
}

void RollOver::CheckPublishing(TaskGroups& groups, const std::string& completion_timeout) {
  const absl::Time now = options_.clock->Now();
  for (auto& [group_id, list] : groups.publishing) {
    bool earlier_timed_out = false;
    for (auto it = list.begin(); it != list.end();) {
      Group& group = *it;
      if (earlier_timed_out) {
        options_.actions->KillGroup(
            group, "an earlier group of the same partitions did not publish in time");
        options_.actions->FinishGroup(group, GroupState::kAbandoned, "an earlier group timed out");
        it = list.erase(it);
        continue;
      }
      bool any_live = false;
      for (const auto& [id, task] : group.tasks) any_live = any_live || IsLive(task);
      if (const TaskInfo* winner = WinnerOf(group)) {
        const std::string winner_id = winner->task_id;
        options_.actions->FinishWonGroup(
            group, winner_id,
            absl::StrCat("group ", group_id, " (", group.base_sequence_name,
                         ") published everything up to ", FormatOffsets(group.end_offsets),
                         ": task ", winner_id, " succeeded"));
        it = list.erase(it);
        continue;
      }
      const bool timed_out = now >= group.completion_deadline;
      if (!any_live || timed_out) {
        const std::string why =
            !any_live
                ? "every task of the group failed"
                : absl::StrCat("no task succeeded within completionTimeout ", completion_timeout);
        LOG(ERROR) << Prefix() << "ALERT: publishing group " << group_id << " ("
                   << group.base_sequence_name << ", end " << FormatOffsets(group.end_offsets)
                   << "): " << why << "; killing it and the group reading after it, and "
                   << "restarting from the stored offsets";
        options_.actions->KillGroup(group, why);
        options_.actions->FinishGroup(group, GroupState::kAbandoned, why);
        for (int32_t p : group.partitions()) groups.next_offsets.erase(p);
        auto active = groups.reading.find(group_id);
        if (active != groups.reading.end()) {
          options_.actions->KillGroup(active->second, "the group it started after did not publish");
          options_.actions->FinishGroup(active->second, GroupState::kAbandoned,
                                        "the group it started after did not publish");
          for (int32_t p : active->second.partitions()) groups.next_offsets.erase(p);
          groups.reading.erase(active);
        }
        earlier_timed_out = true;
        it = list.erase(it);
        continue;
      }
      ++it;
    }
  }
  for (auto it = groups.publishing.begin(); it != groups.publishing.end();) {
    it = it->second.empty() ? groups.publishing.erase(it) : std::next(it);
  }
}

void RollOver::CheckReading(TaskGroups& groups) {
  for (auto it = groups.reading.begin(); it != groups.reading.end();) {
    Group& group = it->second;
    for (auto task = group.tasks.begin(); task != group.tasks.end();) {
      if (task->second.state == v1::TASK_STATE_FAILED ||
          task->second.state == v1::TASK_STATE_STOPPED) {
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
      options_.actions->FinishWonGroup(
          group, winner_id,
          absl::StrCat("reading group ", it->first, " (", group.base_sequence_name,
                       ") ended: task ", winner_id,
                       " succeeded; the next group starts from the stored offsets"));
      for (int32_t p : group.partitions()) groups.next_offsets.erase(p);
      it = groups.reading.erase(it);
      continue;
    }
    ++it;
  }
}

}  // namespace sluice::supervisor
