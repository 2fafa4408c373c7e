// Checkpoint rounds of a stream supervisor (docs/protocol.md "Checkpoint
// round"): validating task requests, the pause -> max -> record ->
// SetEndOffsets round shared by incremental checkpoints and roll-over, and
// answers to stale requests.
#include <glog/logging.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/stream_supervisor.h"

namespace sluice::supervisor {
namespace {

// Runs fn(0..n-1) on n threads (replicas are few) and waits.
template <typename Fn>
void ParallelFor(size_t n, Fn fn) {
  if (n == 1) {
    fn(0);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

// The id of the checkpoint whose offsets equal `start`, newest first.
std::optional<int32_t> FindCheckpoint(const std::map<int32_t, OffsetMap>& checkpoints,
                                      const OffsetMap& start) {
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    if (it->second == start) return it->first;
  }
  return std::nullopt;
}

std::string FormatMillis(absl::Duration d) {
  return absl::StrCat(absl::ToDoubleMilliseconds(d), " ms");
}

}  // namespace

absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> StreamSupervisor::Checkpoint(
    const v1::CheckpointDataSourceMetadataRequest& request) {
  const OffsetMap start = FromProto(request.start_offsets());
  v1::CheckpointDataSourceMetadataResponse response;
  absl::MutexLock lock(&view_mu_);
  auto group = view_.reading.find(request.group_id());
  if (group == view_.reading.end() || group->second.first != request.base_sequence_name()) {
    if (view_.publishing.count(request.base_sequence_name())) {
      return absl::FailedPreconditionError(
          absl::StrCat("group ", request.base_sequence_name(),
                       " is publishing; its end offsets are fixed, no checkpoint needed"));
    }
    return absl::FailedPreconditionError(absl::StrCat("group ", request.group_id(), " (",
                                                      request.base_sequence_name(),
                                                      ") is not a reading group of ", datasource_));
  }
  const std::map<int32_t, OffsetMap>& checkpoints = group->second.second;
  std::optional<int32_t> id = FindCheckpoint(checkpoints, start);
  if (!id) {
    Post("bad checkpoint", [this, request, now = absl::Now()] { HandleCheckpoint(request, now); });
    return absl::FailedPreconditionError(
        absl::StrCat("start offsets ", FormatOffsets(start), " of task ", request.task_id(),
                     " match no checkpoint of group ", request.base_sequence_name(),
                     "; the task will be replaced"));
  }
  Post("checkpoint", [this, request, now = absl::Now()] { HandleCheckpoint(request, now); });
  if (*id == checkpoints.rbegin()->first) {
    response.set_accepted(true);
    response.set_message(absl::StrCat("checkpoint of sequence ", *id, " queued"));
  } else {
    response.set_accepted(false);
    response.set_message(
        absl::StrCat("sequence ", *id, " is already checkpointed; its end offsets are on the way"));
  }
  return response;
}

void StreamSupervisor::HandleCheckpoint(const v1::CheckpointDataSourceMetadataRequest& request,
                                        absl::Time received) {
  auto it = active_.find(request.group_id());
  if (it == active_.end() || it->second.base_sequence_name != request.base_sequence_name()) {
    LOG(INFO) << Prefix() << "ignoring checkpoint request of task " << request.task_id()
              << ": group " << request.base_sequence_name() << " is no longer reading";
    return;
  }
  Group& group = it->second;
  auto task = group.tasks.find(request.task_id());
  if (task == group.tasks.end() || !IsLive(task->second)) {
    LOG(WARNING) << Prefix() << "ignoring checkpoint request of task " << request.task_id()
                 << ": not a live task of group " << group.base_sequence_name;
    return;
  }
  const OffsetMap start = FromProto(request.start_offsets());
  std::optional<int32_t> id = FindCheckpoint(group.checkpoints, start);
  if (!id) {
    actions_->KillTask(task->second,
                       absl::StrCat("its checkpoint request (start ", FormatOffsets(start),
                                    ") matches no checkpoint of its group"));
    return;
  }
  if (*id != group.latest_sequence_id()) {
    AnswerStaleCheckpoint(group, task->second, *id);
    return;
  }
  LOG(INFO) << Prefix() << "task " << request.task_id() << " asks to checkpoint sequence " << *id
            << " of group " << group.group_id << " (started at " << FormatOffsets(start)
            << "; waited " << FormatMillis(absl::Now() - received) << " in the queue)";
  const int32_t before = group.latest_sequence_id();
  absl::StatusOr<OffsetMap> result = CheckpointRound(group, /*finish=*/false);
  if (!result.ok()) {
    RecordError(Annotate(result.status(), absl::StrCat("checkpoint of group ", group.group_id)));
    return;
  }
  if (options_.metrics != nullptr && group.latest_sequence_id() > before) {
    options_.metrics->GetCounter(metrics::kSupervisorCheckpoints, {{"datasource", datasource_}})
        ->Increment();
    options_.metrics
        ->GetHistogram(metrics::kSupervisorCheckpointSeconds, {{"datasource", datasource_}})
        ->ObserveDuration(absl::Now() - received);
  }
}

absl::StatusOr<OffsetMap> StreamSupervisor::CheckpointRound(Group& group, bool finish) {
  const std::string what = absl::StrCat(finish ? "finalize" : "checkpoint", " round of group ",
                                        group.group_id, " (", group.base_sequence_name, ")");
  std::vector<TaskInfo*> tasks;
  for (auto& [id, task] : group.tasks) {
    if (!IsLive(task)) continue;
    if (task.starting) {
      // Its RunTask is not answered (a frozen worker waits out its
      // deadline): pausing it would hold up the round, and it would miss
      // the checkpoint. Its replacement starts with the checkpoints.
      actions_->KillTask(task, absl::StrCat("it was still starting at the ", what));
      continue;
    }
    tasks.push_back(&task);
  }
  if (tasks.empty()) return absl::FailedPreconditionError(absl::StrCat(what, ": no live task"));

  // 1. Pause every replica in parallel.
  const absl::Time round_started = absl::Now();
  std::vector<std::optional<std::string>> addresses(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) addresses[i] = actions_->AddressOf(*tasks[i]);
  std::vector<absl::StatusOr<v1::PauseResponse>> paused(tasks.size(),
                                                        absl::UnknownError("not called"));
  ParallelFor(tasks.size(), [&](size_t i) {
    paused[i] = addresses[i] ? client_->Pause(*addresses[i], tasks[i]->task_id)
                             : absl::NotFoundError("its worker is unknown");
  });
  const absl::Time all_paused = absl::Now();
  std::vector<size_t> live;
  OffsetMap max = group.latest_checkpoint();
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!paused[i].ok()) {
      actions_->KillTask(*tasks[i], absl::StrCat("it did not pause for the ", what, ": ",
                                                 paused[i].status().ToString()));
      continue;
    }
    live.push_back(i);
    max = MaxOffsets(max, Restrict(FromProto(paused[i]->current_offsets()), group.start_offsets));
  }
  if (live.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": no replica paused"));
  }
  auto resume_all = [&] {
    ParallelFor(live.size(), [&](size_t j) {
      const size_t i = live[j];
      absl::Status resumed = client_->Resume(*addresses[i], tasks[i]->task_id);
      if (!resumed.ok()) {
        LOG(WARNING) << Prefix() << "resume of " << tasks[i]->task_id << ": " << resumed;
      }
    });
  };
  if (absl::Status fault = SLUICE_FAULT_POINT("supervisor.checkpoint.after_pause"); !fault.ok()) {
    resume_all();
    return fault;
  }

  // 2. Nothing new read: resume, record nothing.
  if (!finish && max == group.latest_checkpoint()) {
    resume_all();
    LOG(INFO) << Prefix() << what << ": no replica read past sequence "
              << group.latest_sequence_id() << " start " << FormatOffsets(max) << "; resumed "
              << live.size() << " replicas without a new checkpoint";
    return max;
  }

  // 3. Record the checkpoint before any replica learns it.
  const int32_t next_id = group.latest_sequence_id() + 1;
  if (!finish) {
    absl::Status recorded = options_.store->InTransaction([&](StoreTxn& txn) {
      return txn.AppendCheckpoint(group.base_sequence_name, next_id, max, options_.clock->NowMs());
    });
    if (!recorded.ok()) {
      resume_all();
      return Annotate(recorded, absl::StrCat(what, ": recording the checkpoint"));
    }
    group.checkpoints[next_id] = max;
    // A replica told first may fill the new sequence and ask for its
    // checkpoint while the others are still being told.
    PublishView();
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
    set[j] = client_->SetEndOffsets(*addresses[i], tasks[i]->task_id, max, finish);
  });
  const absl::Time all_set = absl::Now();
  // Where the round's time went, for the log line.
  const std::string timing = absl::StrCat(
      "; pause ", FormatMillis(all_paused - round_started), ", record ",
      FormatMillis(recorded_at - all_paused), ", set end offsets ",
      FormatMillis(all_set - recorded_at));
  int accepted = 0;
  for (size_t j = 0; j < live.size(); ++j) {
    if (set[j].ok()) {
      ++accepted;
      continue;
    }
    actions_->KillTask(*tasks[live[j]],
                       absl::StrCat("it refused the end offsets ", FormatOffsets(max), " of the ",
                                    what, ": ", set[j].status().ToString()));
  }
  if (accepted == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": no replica accepted the end offsets ", FormatOffsets(max)));
  }
  if (finish) {
    LOG(INFO) << Prefix() << what << ": final end offsets " << FormatOffsets(max) << " (max of "
              << live.size() << " paused replicas of " << tasks.size() << "), set on " << accepted
              << timing;
  } else {
    LOG(INFO) << Prefix() << what << ": sequence " << next_id - 1 << " ends at "
              << FormatOffsets(max) << " (max of " << live.size() << " paused replicas of "
              << tasks.size() << "), sequence " << next_id << " recorded and set on " << accepted
              << timing;
  }
  return max;
}

void StreamSupervisor::AnswerStaleCheckpoint(Group& group, TaskInfo& task, int32_t sequence_id) {
  const OffsetMap& end = group.checkpoints.at(sequence_id + 1);
  std::optional<std::string> address = actions_->AddressOf(task);
  if (!address) return;
  auto status = client_->GetTaskStatus(*address, task.task_id);
  if (!status.ok()) {
    if (absl::IsNotFound(status.status())) {
      actions_->KillTask(task, "its worker no longer knows it");
    } else {
      LOG(WARNING) << Prefix() << "stale checkpoint of " << task.task_id << ": " << status.status();
    }
    return;
  }
  if (status->latest_sequence_id() > sequence_id) {
    VLOG(1) << Prefix() << "task " << task.task_id << " already has sequence "
            << status->latest_sequence_id() << "; nothing to answer";
    return;
  }
  if (status->state() != v1::TASK_STATE_PAUSED) {
    auto paused = client_->Pause(*address, task.task_id);
    if (!paused.ok()) {
      actions_->KillTask(task, absl::StrCat("it did not pause to receive the end of sequence ",
                                            sequence_id, ": ", paused.status().ToString()));
      return;
    }
  }
  auto set = client_->SetEndOffsets(*address, task.task_id, end, /*finish=*/false);
  if (!set.ok()) {
    actions_->KillTask(task, absl::StrCat("it refused the end offsets ", FormatOffsets(end),
                                          " of sequence ", sequence_id, ": ",
                                          set.status().ToString()));
    return;
  }
  LOG(INFO) << Prefix() << "task " << task.task_id << " asked again for sequence " << sequence_id
            << ", already checkpointed: sent its end offsets " << FormatOffsets(end)
            << (set->duplicate() ? " (the task already had them)" : "");
}

void StreamSupervisor::Finalize(int32_t group_id, const std::string& why) {
  auto it = active_.find(group_id);
  if (it == active_.end()) return;
  Group group = std::move(it->second);
  active_.erase(it);
  absl::StatusOr<OffsetMap> end = CheckpointRound(group, /*finish=*/true);
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

}  // namespace sluice::supervisor
