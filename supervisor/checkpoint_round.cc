// Checkpoint rounds of a stream supervisor (docs/protocol.md "Checkpoint
// round"): validating task requests, the pauseless round of incremental
// checkpoints (read offsets -> record max + margin -> SetEndOffsets, the
// furthest replica first), the pause -> max -> record -> SetEndOffsets round
// shared by the fallback and roll-over, and answers to stale requests.
#include <glog/logging.h>

#include <algorithm>
#include <limits>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  if (!view_.recovered) {
    // A restarted supervisor or a new leader before it adopted its groups:
    // not knowing the group is not the group being gone.
    return absl::UnavailableError(absl::StrCat(
        "the supervisor of ", datasource_,
        " is still recovering its task groups from the metadata store; retry"));
  }
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
  if (!id && FindCheckpoint(group.moved_from, start)) {
    // Asked before the round that moved this checkpoint back told it; that
    // round gave it the moved one (or replaced it).
    LOG(INFO) << Prefix() << "task " << request.task_id() << " asked with the start "
              << FormatOffsets(start) << " of a checkpoint since moved back; it has the new one";
    return;
  }
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

absl::StatusOr<v1::HandoffTaskGroupsResponse> StreamSupervisor::Handoff(
    const std::vector<int32_t>& group_ids, absl::Duration timeout) {
  auto result = std::make_shared<absl::StatusOr<v1::HandoffTaskGroupsResponse>>(
      absl::UnknownError("not handled"));
  SLUICE_RETURN_IF_ERROR(PostAndWait(
      "handoff", [this, group_ids, result] { *result = HandleHandoff(group_ids); }, timeout));
  return *result;
}

absl::StatusOr<v1::HandoffTaskGroupsResponse> StreamSupervisor::HandleHandoff(
    std::vector<int32_t> group_ids) {
  if (!recovered_) {
    return absl::UnavailableError(absl::StrCat(
        "the supervisor of ", datasource_, " is still recovering its task groups; retry"));
  }
  std::vector<std::string> reading;
  for (const auto& [id, group] : active_) reading.push_back(absl::StrCat(id));
  if (group_ids.empty()) {
    for (const auto& [id, group] : active_) group_ids.push_back(id);
  }
  for (int32_t id : group_ids) {
    if (active_.count(id) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", id, " is not a reading group of ", datasource_, " (reading: ",
          reading.empty() ? "none" : absl::StrJoin(reading, ", "), ")"));
    }
  }
  std::sort(group_ids.begin(), group_ids.end());
  group_ids.erase(std::unique(group_ids.begin(), group_ids.end()), group_ids.end());
  v1::HandoffTaskGroupsResponse response;
  for (int32_t id : group_ids) {
    Group& group = active_.at(id);
    // A round gives up replicas whose RunTask is unanswered; an operator's
    // handoff waits for them instead.
    if (std::any_of(group.tasks.begin(), group.tasks.end(),
                    [](const auto& task) { return IsLive(task.second) && task.second.starting; })) {
      response.add_skipped(absl::StrCat("group ", id, ": a task is still starting; retry"));
      continue;
    }
    const int32_t before = group.latest_sequence_id();
    LOG(INFO) << Prefix() << "early handoff of group " << id << " (" << group.base_sequence_name
              << ") asked by an operator";
    absl::StatusOr<OffsetMap> round = CheckpointRound(group, /*finish=*/false);
    if (!round.ok()) {
      RecordError(Annotate(round.status(), absl::StrCat("early handoff of group ", id)));
      response.add_skipped(absl::StrCat("group ", id, ": ", round.status().message()));
      continue;
    }
    if (group.latest_sequence_id() == before) {
      response.add_skipped(
          absl::StrCat("group ", id, ": nothing read since its last checkpoint (sequence ",
                       before, " starts at ", FormatOffsets(group.latest_checkpoint()), ")"));
      continue;
    }
    CountCheckpointRound(metrics::kSupervisorEarlyHandoffs);
    response.add_group_ids(id);
  }
  return response;
}

absl::StatusOr<OffsetMap> StreamSupervisor::CheckpointRound(Group& group, bool finish,
                                                            bool move_back_only) {
  const std::string what =
      absl::StrCat(finish ? "finalize" : move_back_only ? "move-back" : "checkpoint",
                   " round of group ", group.group_id, " (", group.base_sequence_name, ")");
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
  std::vector<std::optional<std::string>> addresses(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) addresses[i] = actions_->AddressOf(*tasks[i]);

  if (!finish && !move_back_only && options_.pauseless_checkpoints) {
    if (group.classic_rounds_ahead > 0) {
      --group.classic_rounds_ahead;
    } else {
      SLUICE_ASSIGN_OR_RETURN(std::optional<OffsetMap> done,
                              PauselessRound(group, tasks, addresses, what));
      if (done.has_value()) return *done;
    }
  }

  // 1. Pause every replica in parallel.
  const absl::Time round_started = absl::Now();
  std::vector<absl::StatusOr<v1::PauseResponse>> paused(tasks.size(),
                                                        absl::UnknownError("not called"));
  ParallelFor(tasks.size(), [&](size_t i) {
    paused[i] = addresses[i] ? client_->Pause(*addresses[i], tasks[i]->task_id)
                             : absl::NotFoundError("its worker is unknown");
  });
  const absl::Time all_paused = absl::Now();
  std::vector<size_t> live;
  OffsetMap read_max;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!paused[i].ok()) {
      actions_->KillTask(*tasks[i], absl::StrCat("it did not pause for the ", what, ": ",
                                                 paused[i].status().ToString()));
      continue;
    }
    live.push_back(i);
    read_max = MaxOffsets(
        read_max, Restrict(FromProto(paused[i]->current_offsets()), group.start_offsets));
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

  // 1b. A latest checkpoint no paused replica reached, past the records
  // known: moved back to what they read (recorded before they learn it;
  // the SetEndOffsets below tells them, whatever else it says).
  const bool moved = MoveCheckpointBack(group, read_max, what);
  OffsetMap max = move_back_only ? group.latest_checkpoint()
                                 : MaxOffsets(group.latest_checkpoint(), read_max);

  // 2. Nothing new read (and nothing moved): resume, record nothing.
  if (!finish && !moved && max == group.latest_checkpoint()) {
    resume_all();
    LOG(INFO) << Prefix() << what << ": no replica read past sequence "
              << group.latest_sequence_id() << " start " << FormatOffsets(max) << "; resumed "
              << live.size() << " replicas without a new checkpoint";
    return max;
  }

  // 3. Record the checkpoint before any replica learns it.
  const bool new_checkpoint = !finish && max != group.latest_checkpoint();
  const int32_t next_id = group.latest_sequence_id() + (new_checkpoint ? 1 : 0);
  if (new_checkpoint) {
    absl::Status recorded = options_.store->InTransaction([&](StoreTxn& txn) {
      return txn.AppendCheckpoint(group.base_sequence_name, next_id, max, options_.clock->NowMs());
    });
    if (!recorded.ok()) {
      resume_all();
      return Annotate(recorded, absl::StrCat(what, ": recording the checkpoint"));
    }
    group.checkpoints[next_id] = max;
    group.latest_checkpoint_at = options_.clock->Now();
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
  group.observed = OffsetObservation{max, all_set};
  if (finish) {
    LOG(INFO) << Prefix() << what << ": final end offsets " << FormatOffsets(max) << " (max of "
              << live.size() << " paused replicas of " << tasks.size() << "), set on " << accepted
              << timing;
  } else if (!new_checkpoint) {
    LOG(INFO) << Prefix() << what << ": sequence " << next_id - 1 << " ends at "
              << FormatOffsets(max) << " (moved back), set on " << accepted << " of "
              << live.size() << " paused replicas" << timing;
  } else {
    LOG(INFO) << Prefix() << what << ": sequence " << next_id - 1 << " ends at "
              << FormatOffsets(max) << " (max of " << live.size() << " paused replicas of "
              << tasks.size() << "), sequence " << next_id << " recorded and set on " << accepted
              << timing;
  }
  return max;
}

void StreamSupervisor::CountCheckpointRound(const metrics::MetricDef& def) {
  if (options_.metrics == nullptr) return;
  options_.metrics->GetCounter(def, {{"datasource", datasource_}})->Increment();
}

// After a round whose margin did not fit, this many rounds go straight to
// the classic round; the one after tries pauseless again (the rate may have
// dropped: a backlog read, then the live stream).
constexpr int kClassicRoundsAfterMarginMiss = 7;

std::optional<OffsetMap> StreamSupervisor::ClassicInstead(Group& group,
                                                          const OffsetObservation& now,
                                                          const std::string& why) {
  LOG(INFO) << Prefix() << why << "; pausing the replicas instead (and for the next "
            << kClassicRoundsAfterMarginMiss << " rounds)";
  CountCheckpointRound(metrics::kSupervisorCheckpointFallbacks);
  group.observed = now;
  group.classic_rounds_ahead = kClassicRoundsAfterMarginMiss;
  return std::nullopt;
}

absl::StatusOr<std::optional<OffsetMap>> StreamSupervisor::PauselessRound(
    Group& group, const std::vector<TaskInfo*>& tasks,
    const std::vector<std::optional<std::string>>& addresses, const std::string& what) {
  // 1. Every replica's offsets, without pausing it.
  const absl::Time round_started = absl::Now();
  std::vector<absl::StatusOr<OffsetMap>> read(tasks.size(), absl::UnknownError("not called"));
  ParallelFor(tasks.size(), [&](size_t i) {
    read[i] = addresses[i] ? client_->GetCurrentOffsets(*addresses[i], tasks[i]->task_id)
                           : absl::NotFoundError("its worker is unknown");
  });
  const absl::Time all_read = absl::Now();
  // The classic round's fault points, at the same places in the protocol:
  // the offsets are taken and nothing is recorded, then recorded and not
  // sent.
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.checkpoint.after_pause"));
  OffsetMap max = group.latest_checkpoint();
  std::vector<OffsetMap> offsets(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!read[i].ok()) {
      // The classic round deals with it (and kills it if it cannot pause).
      LOG(INFO) << Prefix() << what << ": reading the offsets of " << tasks[i]->task_id
                << " failed (" << read[i].status() << "); pausing the replicas instead";
      return std::optional<OffsetMap>();
    }
    offsets[i] = Restrict(*read[i], group.start_offsets);
    max = MaxOffsets(max, offsets[i]);
  }
  // A latest checkpoint that no replica has reached on some partition (a
  // pauseless end past the records that existed, still waiting for them):
  // only a paused round can move it back, so do that one.
  OffsetMap read_max;
  for (const OffsetMap& o : offsets) read_max = MaxOffsets(read_max, o);
  if (std::optional<int32_t> p = PartitionWaitingForRecords(group, read_max)) {
    LOG(INFO) << Prefix() << what << ": no replica reached the latest checkpoint "
              << FormatOffsets(group.latest_checkpoint()) << " on partition " << *p
              << " yet; pausing the replicas to move it back";
    return std::optional<OffsetMap>();
  }
  // 2. Nothing new read: record nothing (no replica was stopped).
  if (max == group.latest_checkpoint()) {
    LOG(INFO) << Prefix() << what << ": no replica read past sequence "
              << group.latest_sequence_id() << " start " << FormatOffsets(max)
              << "; no new checkpoint";
    return std::optional<OffsetMap>(max);
  }

  // 3. End offsets: max + a margin sized from the read rate and the time a
  // round takes (the offset reads now, the whole previous round).
  OffsetObservation before = group.observed;
  OffsetObservation now{max, all_read};
  std::map<int32_t, double> rates;
  if (before.at == absl::InfinitePast() || before.offsets.empty()) {
    // The group's first round: since the group started (on its clock).
    rates = ReadRates(OffsetObservation{group.latest_checkpoint(), group.created_at},
                      OffsetObservation{max, options_.clock->Now()});
  } else {
    rates = ReadRates(before, now);
  }
  const absl::Duration window =
      std::max(group.last_round_window, 3 * (all_read - round_started));
  std::map<int32_t, int64_t> margins = PauselessMargins(rates, window, options_.pauseless_margin);
  // A sequence asks early at 90% of maxRowsPerSegment: the margin (all
  // partitions together) stays within the last 10%, so sequences keep about
  // the size the spec asks for.
  // When the margin the read rate needs does not fit there (a fast stream
  // with small segments: a sequence fills in about the time a round takes),
  // a capped margin would only make the replicas read past the end, and a
  // replica other than the first one that does is replaced: pause them
  // instead (the classic round), which costs a pause rather than a task.
  const int64_t max_rows = spec_.spec.tuning_config().max_rows_per_segment();
  if (max_rows > 0 && !margins.empty()) {
    const int64_t cap =
        std::max<int64_t>(1, max_rows / 10 / static_cast<int64_t>(margins.size()));
    for (const auto& [p, margin] : margins) {
      if (margin > cap && tasks.size() > 1) {
        return ClassicInstead(group, now,
                              absl::StrCat(what, ": partition ", p, " needs a margin of ", margin,
                                           " records at its read rate, more than the ", cap,
                                           " that keep sequences near maxRowsPerSegment"));
      }
    }
    for (auto& [p, margin] : margins) margin = std::min(margin, cap);
  }
  OffsetMap end = PauselessEndOffsets(max, margins);
  // Past the records known to exist (the latest offset of the last metadata
  // query, or max if further) only by what the stream is expected to add during the
  // round: replicas caught up with a live stream read those records before
  // the end reaches them, and the sequence closes as they arrive. If they do
  // not come, the checkpoint is moved back to what the replicas read (the
  // next paused round, a finalize round, or MoveStalledCheckpoints). The
  // rate is the stream's production rate between the last two metadata
  // queries (none before there are two: the replicas' read rate says
  // nothing of what arrives while they read a backlog).
  for (auto& [p, offset] : end) {
    if (offset == kEndOfPartition) continue;
    const auto mark = watermarks_.find(p);
    const int64_t latest = mark == watermarks_.end() ? int64_t{0} : mark->second.latest;
    const int64_t known = std::max(max.at(p), latest);
    const auto produced = produce_rates_.find(p);
    const double rate = produced == produce_rates_.end() ? 0.0 : produced->second;
    const int64_t expected = ExpectedArrivals(rate, window, options_.pauseless_margin);
    offset = std::max(max.at(p), std::min(offset, known + expected));
  }

  // The replica that read the most since the latest checkpoint.
  size_t first = 0;
  int64_t furthest = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < tasks.size(); ++i) {
    int64_t ahead = 0;
    for (const auto& [p, o] : offsets[i]) ahead += o - group.latest_checkpoint().at(p);
    if (ahead > furthest) {
      furthest = ahead;
      first = i;
    }
  }

  // 4. Record the checkpoint before any replica learns it.
  const int32_t next_id = group.latest_sequence_id() + 1;
  absl::Status recorded = options_.store->InTransaction([&](StoreTxn& txn) {
    return txn.AppendCheckpoint(group.base_sequence_name, next_id, end, options_.clock->NowMs());
  });
  if (!recorded.ok()) return Annotate(recorded, absl::StrCat(what, ": recording the checkpoint"));
  group.checkpoints[next_id] = end;
  group.latest_checkpoint_at = options_.clock->Now();
  PublishView();
  const absl::Time recorded_at = absl::Now();

  // 5. The replica furthest ahead first: it is the one likely to have read
  // past the end. If it has, no replica knows the end yet: remove it and
  // pause instead. Otherwise the others, in parallel.
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.checkpoint.before_set_end_offsets"));
  absl::Status fault = SLUICE_FAULT_POINT("supervisor.checkpoint.before_pauseless_set");
  if (!fault.ok()) LOG(WARNING) << Prefix() << what << ": fault point: " << fault;
  std::vector<absl::StatusOr<v1::SetEndOffsetsResponse>> set(tasks.size(),
                                                             absl::UnknownError("not called"));
  set[first] = client_->SetEndOffsets(*addresses[first], tasks[first]->task_id, end, false);
  if (absl::IsAborted(set[first].status())) {
    // A definite refusal that changed nothing: no replica learned `end`.
    absl::Status removed = options_.store->InTransaction([&](StoreTxn& txn) {
      return txn.RemoveLatestCheckpoint(group.base_sequence_name, next_id);
    });
    if (!removed.ok()) {
      // The end stays recorded: the replica that passed it is replaced,
      // the others get it below.
      LOG(WARNING) << Prefix() << what << ": removing the refused end " << FormatOffsets(end)
                   << ": " << removed;
    } else {
      group.checkpoints.erase(next_id);
      PublishView();
      CountCheckpointRound(metrics::kSupervisorCheckpointFallbacks);
      LOG(INFO) << Prefix() << what << ": " << tasks[first]->task_id
                << " already read past the proposed end " << FormatOffsets(end) << " (max "
                << FormatOffsets(max) << " + margin): " << set[first].status().message()
                << "; no replica has it, falling back to pause-and-max";
      return std::optional<OffsetMap>();
    }
  }
  std::vector<size_t> rest;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (i != first) rest.push_back(i);
  }
  ParallelFor(rest.size(), [&](size_t j) {
    const size_t i = rest[j];
    set[i] = client_->SetEndOffsets(*addresses[i], tasks[i]->task_id, end, false);
  });
  const absl::Time all_set = absl::Now();
  int accepted = 0;
  int passed = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (set[i].ok()) {
      ++accepted;
      continue;
    }
    // The end is recorded and another replica may have it: a replica that
    // read past it cannot be given it, nor another one. Replace it.
    if (absl::IsAborted(set[i].status())) ++passed;
    actions_->KillTask(*tasks[i], absl::StrCat("it refused the recorded end offsets ",
                                               FormatOffsets(end), " of the pauseless ", what,
                                               ": ", set[i].status().ToString()));
  }
  group.observed = now;
  group.last_round_window = all_set - round_started;
  if (passed > 0) CountCheckpointRound(metrics::kSupervisorCheckpointFallbacks);
  if (accepted == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": no replica accepted the end offsets ", FormatOffsets(end)));
  }
  if (passed == 0 && accepted == static_cast<int>(tasks.size())) {
    CountCheckpointRound(metrics::kSupervisorPauselessCheckpoints);
  }
  LOG(INFO) << Prefix() << what << ": sequence " << next_id - 1 << " ends at "
            << FormatOffsets(end) << " (max " << FormatOffsets(max) << " of " << tasks.size()
            << " reading replicas + margin), sequence " << next_id << " recorded and set on "
            << accepted << " without pausing; read " << FormatMillis(all_read - round_started)
            << ", record " << FormatMillis(recorded_at - all_read) << ", set end offsets "
            << FormatMillis(all_set - recorded_at);
  return std::optional<OffsetMap>(end);
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
  if (options_.pauseless_checkpoints && status->state() == v1::TASK_STATE_READING) {
    // It takes the end while reading if it has not read past it; ABORTED
    // (it has) replaces it below, like any refusal.
    auto set = client_->SetEndOffsets(*address, task.task_id, end, /*finish=*/false);
    if (set.ok() || absl::IsAborted(set.status())) {
      if (!set.ok()) {
        actions_->KillTask(task, absl::StrCat("it refused the end offsets ", FormatOffsets(end),
                                              " of sequence ", sequence_id, ": ",
                                              set.status().ToString()));
        return;
      }
      LOG(INFO) << Prefix() << "task " << task.task_id << " asked again for sequence "
                << sequence_id << ", already checkpointed: sent its end offsets "
                << FormatOffsets(end) << " without pausing it"
                << (set->duplicate() ? " (the task already had them)" : "");
      return;
    }
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
