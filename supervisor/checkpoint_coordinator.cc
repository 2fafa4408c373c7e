// The checkpoint rounds of a stream supervisor: see checkpoint_coordinator.h.
#include "supervisor/checkpoint_coordinator.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/fault_injection.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

std::optional<int32_t> FindCheckpoint(const std::map<int32_t, OffsetMap>& checkpoints,
                                      const OffsetMap& start) {
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    if (it->second == start) return it->first;
  }
  return std::nullopt;
}

CheckpointRequestAnswer AnswerCheckpointRequest(
    const std::string& datasource, bool recovered, const ReadingCheckpoints& reading,
    const std::set<std::string>& publishing,
    const v1::CheckpointDataSourceMetadataRequest& request) {
  const OffsetMap start = FromProto(request.start_offsets());
  if (!recovered) {
    // A restarted supervisor or a new leader before it adopted its groups:
    // not knowing the group is not the group being gone.
    return {absl::UnavailableError(
        absl::StrCat("the supervisor of ", datasource,
                     " is still recovering its task groups from the metadata store; retry"))};
  }
  auto group = reading.find(request.group_id());
  if (group == reading.end() || group->second.first != request.base_sequence_name()) {
    if (publishing.count(request.base_sequence_name())) {
      return {absl::FailedPreconditionError(
          absl::StrCat("group ", request.base_sequence_name(),
                       " is publishing; its end offsets are fixed, no checkpoint needed"))};
    }
    return {absl::FailedPreconditionError(
        absl::StrCat("group ", request.group_id(), " (", request.base_sequence_name(),
                     ") is not a reading group of ", datasource))};
  }
  const std::map<int32_t, OffsetMap>& checkpoints = group->second.second;
  std::optional<int32_t> id = FindCheckpoint(checkpoints, start);
  if (!id) {
    return {absl::FailedPreconditionError(
                absl::StrCat("start offsets ", FormatOffsets(start), " of task ", request.task_id(),
                             " match no checkpoint of group ", request.base_sequence_name(),
                             "; the task will be replaced")),
            /*queue=*/true};
  }
  v1::CheckpointDataSourceMetadataResponse response;
  if (*id == checkpoints.rbegin()->first) {
    response.set_accepted(true);
    response.set_message(absl::StrCat("checkpoint of sequence ", *id, " queued"));
  } else {
    response.set_accepted(false);
    response.set_message(
        absl::StrCat("sequence ", *id, " is already checkpointed; its end offsets are on the way"));
  }
  return {std::move(response), /*queue=*/true};
}

CheckpointCoordinator::CheckpointCoordinator(CheckpointContext context)
    : context_(std::move(context)), pauseless_(context_), move_back_(context_) {}

void CheckpointCoordinator::HandleRequest(std::map<int32_t, Group>& reading,
                                          const v1::CheckpointDataSourceMetadataRequest& request,
                                          absl::Time received) {
  auto it = reading.find(request.group_id());
  if (it == reading.end() || it->second.base_sequence_name != request.base_sequence_name()) {
    LOG(INFO) << context_.Prefix() << "ignoring checkpoint request of task " << request.task_id()
              << ": group " << request.base_sequence_name() << " is no longer reading";
    return;
  }
  Group& group = it->second;
  auto task = group.tasks.find(request.task_id());
  if (task == group.tasks.end() || !IsLive(task->second)) {
    LOG(WARNING) << context_.Prefix() << "ignoring checkpoint request of task " << request.task_id()
                 << ": not a live task of group " << group.base_sequence_name;
    return;
  }
  const OffsetMap start = FromProto(request.start_offsets());
  std::optional<int32_t> id = FindCheckpoint(group.checkpoints, start);
  if (!id && FindCheckpoint(group.rounds.moved_from, start)) {
    // Asked before the round that moved this checkpoint back told it; that
    // round gave it the moved one (or replaced it).
    LOG(INFO) << context_.Prefix() << "task " << request.task_id() << " asked with the start "
              << FormatOffsets(start) << " of a checkpoint since moved back; it has the new one";
    return;
  }
  if (!id) {
    context_.actions->KillTask(task->second,
                               absl::StrCat("its checkpoint request (start ", FormatOffsets(start),
                                            ") matches no checkpoint of its group"));
    return;
  }
  if (*id != group.latest_sequence_id()) {
    AnswerStaleCheckpoint(group, task->second, *id);
    return;
  }
  LOG(INFO) << context_.Prefix() << "task " << request.task_id() << " asks to checkpoint sequence "
            << *id << " of group " << group.group_id << " (started at " << FormatOffsets(start)
            << "; waited " << FormatMillis(absl::Now() - received) << " in the queue)";
  const int32_t before = group.latest_sequence_id();
  absl::StatusOr<OffsetMap> result = Round(group, /*finish=*/false);
  if (!result.ok()) {
    context_.record_error(
        Annotate(result.status(), absl::StrCat("checkpoint of group ", group.group_id)));
    return;
  }
  if (context_.metrics != nullptr && group.latest_sequence_id() > before) {
    context_.metrics
        ->GetCounter(metrics::kSupervisorCheckpoints, {{"datasource", context_.datasource}})
        ->Increment();
    context_.metrics
        ->GetHistogram(metrics::kSupervisorCheckpointSeconds, {{"datasource", context_.datasource}})
        ->ObserveDuration(absl::Now() - received);
  }
}

absl::StatusOr<v1::HandoffTaskGroupsResponse> CheckpointCoordinator::Handoff(
    std::map<int32_t, Group>& reading, std::vector<int32_t> group_ids) {
  std::vector<std::string> reading_ids;
  for (const auto& [id, group] : reading) reading_ids.push_back(absl::StrCat(id));
  if (group_ids.empty()) {
    for (const auto& [id, group] : reading) group_ids.push_back(id);
  }
  for (int32_t id : group_ids) {
    if (reading.count(id) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", id, " is not a reading group of ", context_.datasource,
          " (reading: ", reading_ids.empty() ? "none" : absl::StrJoin(reading_ids, ", "), ")"));
    }
  }
  std::sort(group_ids.begin(), group_ids.end());
  group_ids.erase(std::unique(group_ids.begin(), group_ids.end()), group_ids.end());
  v1::HandoffTaskGroupsResponse response;
  for (int32_t id : group_ids) {
    Group& group = reading.at(id);
    // A round gives up replicas whose RunTask is unanswered; an operator's
    // handoff waits for them instead.
    if (std::any_of(group.tasks.begin(), group.tasks.end(),
                    [](const auto& task) { return IsLive(task.second) && task.second.starting; })) {
      response.add_skipped(absl::StrCat("group ", id, ": a task is still starting; retry"));
      continue;
    }
    const int32_t before = group.latest_sequence_id();
    LOG(INFO) << context_.Prefix() << "early handoff of group " << id << " ("
              << group.base_sequence_name << ") asked by an operator";
    absl::StatusOr<OffsetMap> round = Round(group, /*finish=*/false);
    if (!round.ok()) {
      context_.record_error(Annotate(round.status(), absl::StrCat("early handoff of group ", id)));
      response.add_skipped(absl::StrCat("group ", id, ": ", round.status().message()));
      continue;
    }
    if (group.latest_sequence_id() == before) {
      response.add_skipped(
          absl::StrCat("group ", id, ": nothing read since its last checkpoint (sequence ", before,
                       " starts at ", FormatOffsets(group.latest_checkpoint()), ")"));
      continue;
    }
    context_.Count(metrics::kSupervisorEarlyHandoffs);
    response.add_group_ids(id);
  }
  return response;
}

absl::StatusOr<OffsetMap> CheckpointCoordinator::Round(Group& group, bool finish,
                                                       bool move_back_only) {
  const std::string what =
      absl::StrCat(finish           ? "finalize"
                   : move_back_only ? "move-back"
                                    : "checkpoint",
                   " round of group ", group.group_id, " (", group.base_sequence_name, ")");
  std::vector<TaskInfo*> tasks;
  for (auto& [id, task] : group.tasks) {
    if (!IsLive(task)) continue;
    if (task.starting) {
      // Its RunTask is not answered (a frozen worker waits out its
      // deadline): pausing it would hold up the round, and it would miss
      // the checkpoint. Its replacement starts with the checkpoints.
      context_.actions->KillTask(task, absl::StrCat("it was still starting at the ", what));
      continue;
    }
    tasks.push_back(&task);
  }
  if (tasks.empty()) return absl::FailedPreconditionError(absl::StrCat(what, ": no live task"));
  std::vector<std::optional<std::string>> addresses(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) addresses[i] = context_.actions->AddressOf(*tasks[i]);

  if (!finish && !move_back_only && context_.pauseless_checkpoints) {
    if (group.rounds.classic_rounds_ahead > 0) {
      --group.rounds.classic_rounds_ahead;
    } else {
      SLUICE_ASSIGN_OR_RETURN(std::optional<OffsetMap> done,
                              pauseless_.Run(group, tasks, addresses, what));
      if (done.has_value()) return *done;
    }
  }

  // 1. Pause every replica in parallel.
  const absl::Time round_started = absl::Now();
  std::vector<absl::StatusOr<v1::PauseResponse>> paused(tasks.size(),
                                                        absl::UnknownError("not called"));
  ParallelFor(tasks.size(), [&](size_t i) {
    paused[i] = addresses[i] ? context_.client->Pause(*addresses[i], tasks[i]->task_id)
                             : absl::NotFoundError("its worker is unknown");
  });
  const absl::Time all_paused = absl::Now();
  std::vector<size_t> live;
  OffsetMap read_max;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!paused[i].ok()) {
      context_.actions->KillTask(*tasks[i], absl::StrCat("it did not pause for the ", what, ": ",
                                                         paused[i].status().ToString()));
      continue;
    }
    live.push_back(i);
    read_max = MaxOffsets(read_max,
                          Restrict(FromProto(paused[i]->current_offsets()), group.start_offsets));
  }
  if (live.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": no replica paused"));
  }
  auto resume_all = [&] {
    ParallelFor(live.size(), [&](size_t j) {
      const size_t i = live[j];
      absl::Status resumed = context_.client->Resume(*addresses[i], tasks[i]->task_id);
      if (!resumed.ok()) {
        LOG(WARNING) << context_.Prefix() << "resume of " << tasks[i]->task_id << ": " << resumed;
      }
    });
  };
  if (absl::Status fault = SLUICE_FAULT_POINT("supervisor.checkpoint.after_pause"); !fault.ok()) {
    resume_all();
    return fault;
  }

  // 1b. A latest checkpoint no paused replica reached, past the records
  // known: moved back to what they read (recorded before they learn it;
  // the SetEndOffsets below tells them, whatever else it says).
  const bool moved = move_back_.MoveBack(group, read_max, what);
  OffsetMap max =
      move_back_only ? group.latest_checkpoint() : MaxOffsets(group.latest_checkpoint(), read_max);

  // 2. Nothing new read (and nothing moved): resume, record nothing.
  if (!finish && !moved && max == group.latest_checkpoint()) {
    resume_all();
    LOG(INFO) << context_.Prefix() << what << ": no replica read past sequence "
              << group.latest_sequence_id() << " start " << FormatOffsets(max) << "; resumed "
              << live.size() << " replicas without a new checkpoint";
    return max;
  }

  // 3. Record the checkpoint before any replica learns it.
  const bool new_checkpoint = !finish && max != group.latest_checkpoint();
  const int32_t next_id = group.latest_sequence_id() + (new_checkpoint ? 1 : 0);
  if (new_checkpoint) {
    absl::Status recorded = context_.store->InTransaction([&](StoreTxn& txn) {
      return txn.AppendCheckpoint(group.base_sequence_name, next_id, max, context_.clock->NowMs());
    });
    if (!recorded.ok()) {
      resume_all();
      return Annotate(recorded, absl::StrCat(what, ": recording the checkpoint"));
    }
    group.checkpoints[next_id] = max;
    group.rounds.latest_checkpoint_at = context_.clock->Now();
    // A replica told first may fill the new sequence and ask for its
    // checkpoint while the others are still being told.
    context_.publish_view();
  }
  if (absl::Status fault = SLUICE_FAULT_POINT("supervisor.checkpoint.before_set_end_offsets");
      !fault.ok()) {
    resume_all();
    return fault;
  }

  const absl::Time recorded_at = absl::Now();
  // 4. SetEndOffsets on every paused replica (it resumes them).
  std::vector<absl::StatusOr<v1::SetEndOffsetsResponse>> set(live.size(),
                                                             absl::UnknownError("not called"));
  ParallelFor(live.size(), [&](size_t j) {
    const size_t i = live[j];
    set[j] = context_.client->SetEndOffsets(*addresses[i], tasks[i]->task_id, max, finish);
  });
  const absl::Time all_set = absl::Now();
  // Where the round's time went, for the log line.
  const std::string timing =
      absl::StrCat("; pause ", FormatMillis(all_paused - round_started), ", record ",
                   FormatMillis(recorded_at - all_paused), ", set end offsets ",
                   FormatMillis(all_set - recorded_at));
  int accepted = 0;
  for (size_t j = 0; j < live.size(); ++j) {
    if (set[j].ok()) {
      ++accepted;
      continue;
    }
    context_.actions->KillTask(
        *tasks[live[j]], absl::StrCat("it refused the end offsets ", FormatOffsets(max), " of the ",
                                      what, ": ", set[j].status().ToString()));
  }
  if (accepted == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": no replica accepted the end offsets ", FormatOffsets(max)));
  }
  group.rounds.observed = OffsetObservation{max, all_set};
  if (finish) {
    LOG(INFO) << context_.Prefix() << what << ": final end offsets " << FormatOffsets(max)
              << " (max of " << live.size() << " paused replicas of " << tasks.size()
              << "), set on " << accepted << timing;
  } else if (!new_checkpoint) {
    LOG(INFO) << context_.Prefix() << what << ": sequence " << next_id - 1 << " ends at "
              << FormatOffsets(max) << " (moved back), set on " << accepted << " of " << live.size()
              << " paused replicas" << timing;
  } else {
    LOG(INFO) << context_.Prefix() << what << ": sequence " << next_id - 1 << " ends at "
              << FormatOffsets(max) << " (max of " << live.size() << " paused replicas of "
              << tasks.size() << "), sequence " << next_id << " recorded and set on " << accepted
              << timing;
  }
  return max;
}

void CheckpointCoordinator::MoveStalledCheckpoints(std::map<int32_t, Group>& reading) {
  const absl::Time now = context_.clock->Now();
  std::vector<int32_t> stalled;
  for (auto& [id, group] : reading) {
    if (group.checkpoints.size() < 2) continue;
    if (group.rounds.latest_checkpoint_at == absl::InfinitePast()) {
      // Recovered after a restart: counted from now.
      group.rounds.latest_checkpoint_at = now;
      continue;
    }
    if (now - group.rounds.latest_checkpoint_at <
        context_.pauseless_margin.stalled_checkpoint_after) {
      continue;
    }
    // The replicas' last reported offsets.
    OffsetMap read_to;
    for (const auto& [task_id, task] : group.tasks) {
      if (!IsLive(task)) continue;
      read_to = MaxOffsets(read_to,
                           Restrict(FromProto(task.status.current_offsets()), group.start_offsets));
    }
    if (PartitionWaitingForRecords(*context_.watermarks, group, read_to)) stalled.push_back(id);
  }
  for (int32_t id : stalled) {
    Group& group = reading.at(id);
    LOG(INFO) << context_.Prefix() << "group " << id << " (" << group.base_sequence_name
              << "): checkpoint " << group.latest_sequence_id() << " "
              << FormatOffsets(group.latest_checkpoint())
              << " waits for records past the latest offsets known since "
              << absl::FormatDuration(now - group.rounds.latest_checkpoint_at)
              << "; pausing the replicas to move it back";
    absl::StatusOr<OffsetMap> round = Round(group, /*finish=*/false,
                                            /*move_back_only=*/true);
    // Not again for this long, moved or not.
    group.rounds.latest_checkpoint_at = now;
    if (!round.ok()) {
      context_.record_error(
          Annotate(round.status(), absl::StrCat("moving back the checkpoint of group ", id)));
    }
  }
}

void CheckpointCoordinator::AnswerStaleCheckpoint(Group& group, TaskInfo& task,
                                                  int32_t sequence_id) {
  const OffsetMap& end = group.checkpoints.at(sequence_id + 1);
  std::optional<std::string> address = context_.actions->AddressOf(task);
  if (!address) return;
  auto status = context_.client->GetTaskStatus(*address, task.task_id);
  if (!status.ok()) {
    if (absl::IsNotFound(status.status())) {
      context_.actions->KillTask(task, "its worker no longer knows it");
    } else {
      LOG(WARNING) << context_.Prefix() << "stale checkpoint of " << task.task_id << ": "
                   << status.status();
    }
    return;
  }
  if (status->latest_sequence_id() > sequence_id) {
    VLOG(1) << context_.Prefix() << "task " << task.task_id << " already has sequence "
            << status->latest_sequence_id() << "; nothing to answer";
    return;
  }
  if (context_.pauseless_checkpoints && status->state() == v1::TASK_STATE_READING) {
    // It takes the end while reading if it has not read past it; ABORTED
    // (it has) replaces it below, like any refusal.
    auto set = context_.client->SetEndOffsets(*address, task.task_id, end, /*finish=*/false);
    if (set.ok() || absl::IsAborted(set.status())) {
      if (!set.ok()) {
        context_.actions->KillTask(
            task, absl::StrCat("it refused the end offsets ", FormatOffsets(end), " of sequence ",
                               sequence_id, ": ", set.status().ToString()));
        return;
      }
      LOG(INFO) << context_.Prefix() << "task " << task.task_id << " asked again for sequence "
                << sequence_id << ", already checkpointed: sent its end offsets "
                << FormatOffsets(end) << " without pausing it"
                << (set->duplicate() ? " (the task already had them)" : "");
      return;
    }
  }
  if (status->state() != v1::TASK_STATE_PAUSED) {
    auto paused = context_.client->Pause(*address, task.task_id);
    if (!paused.ok()) {
      context_.actions->KillTask(
          task, absl::StrCat("it did not pause to receive the end of sequence ", sequence_id, ": ",
                             paused.status().ToString()));
      return;
    }
  }
  auto set = context_.client->SetEndOffsets(*address, task.task_id, end, /*finish=*/false);
  if (!set.ok()) {
    context_.actions->KillTask(
        task, absl::StrCat("it refused the end offsets ", FormatOffsets(end), " of sequence ",
                           sequence_id, ": ", set.status().ToString()));
    return;
  }
  LOG(INFO) << context_.Prefix() << "task " << task.task_id << " asked again for sequence "
            << sequence_id << ", already checkpointed: sent its end offsets " << FormatOffsets(end)
            << (set->duplicate() ? " (the task already had them)" : "");
}

}  // namespace sluice::supervisor
