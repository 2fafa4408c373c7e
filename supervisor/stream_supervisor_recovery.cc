// Recovery after a supervisor restart (group_recovery.h does the work; the
// loop takes its groups) and the operations that move stored offsets: reset,
// reset offsets, automatic reset on OffsetOutOfRange.
#include <glog/logging.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/group_recovery.h"
#include "supervisor/naming.h"
#include "supervisor/stream_health.h"
#include "supervisor/stream_supervisor.h"

namespace sluice::supervisor {

absl::Status StreamSupervisor::Recover() {
  GroupRecoveryOptions options;
  options.datasource = datasource_;
  options.store = options_.store;
  options.registry = options_.registry;
  options.client = client_.get();
  options.actions = actions_.get();
  SLUICE_ASSIGN_OR_RETURN(RecoveredGroups recovered,
                          GroupRecovery(std::move(options))
                              .Recover(spec_.spec, [this](int64_t version) {
                                return creation_->IsPreviousSpec(version);
                              }));
  task_count_->Configure(spec_.spec.io_config(), recovered.autoscaled_task_count);
  if (task_count_->on()) {
    LOG(INFO) << Prefix() << "autoscaler on: " << TaskCount() << " task groups"
              << (recovered.autoscaled_task_count ? " (as last applied)" : "");
  }
  const std::optional<IdleState>& idle = recovered.idle;
  idle_.Restore(idle ? &*idle : nullptr);
  if (idle) {
    LOG(INFO) << Prefix() << "idle since " << absl::FormatTime(absl::FromUnixMillis(idle->since_ms))
              << " (latest offsets " << FormatOffsets(idle->latest) << ")";
  }
  for (auto& [id, group] : recovered.reading) groups_.reading[id] = std::move(group);
  for (auto& [id, list] : recovered.publishing) {
    for (Group& group : list) groups_.publishing[id].push_back(std::move(group));
  }
  for (const auto& [p, offset] : recovered.publishing_ends) {
    auto [it, inserted] = groups_.next_offsets.emplace(p, offset);
    if (!inserted) it->second = std::max(it->second, offset);
  }
  // A scaling action the previous leader had not finished: the groups of
  // the old count still roll over now.
  task_count_->Resume(spec_.spec.io_config(), std::move(recovered.last_scaling), groups_.reading);
  recovered_ = true;
  return absl::OkStatus();
}

void StreamSupervisor::KillGroupsReading(const std::set<int32_t>& partitions,
                                         const std::string& reason) {
  for (auto it = groups_.reading.begin(); it != groups_.reading.end();) {
    bool affected = false;
    for (int32_t p : partitions) affected = affected || it->second.HasPartition(p);
    if (!affected) {
      ++it;
      continue;
    }
    actions_->KillGroup(it->second, reason);
    actions_->FinishGroup(it->second, GroupState::kAbandoned, reason);
    for (int32_t p : it->second.partitions()) groups_.next_offsets.erase(p);
    it = groups_.reading.erase(it);
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
  for (const auto& [id, group] : groups_.reading) {
    for (int32_t p : group.partitions()) all.insert(p);
  }
  KillGroupsReading(all, "the supervisor was reset");
  groups_.next_offsets.clear();
  stream_->TreatAllAsFirstSeen();
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
      stream_->QueryWatermarks(partitions);
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
    for (auto& [id, group] : groups_.reading) {
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
