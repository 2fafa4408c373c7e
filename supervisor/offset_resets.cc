// The operations that move a stream supervisor's stored offsets: see
// offset_resets.h.
#include "supervisor/offset_resets.h"

#include <glog/logging.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/stream_health.h"

namespace sluice::supervisor {

OffsetResets::OffsetResets(OffsetResetsOptions options) : options_(std::move(options)) {}

std::string OffsetResets::Prefix() const {
  return absl::StrCat("[supervisor ", options_.datasource, "] ");
}

void OffsetResets::KillGroupsReading(const std::set<int32_t>& partitions,
                                     const std::string& reason) {
  TaskGroups& groups = options_.state->groups;
  for (auto it = groups.reading.begin(); it != groups.reading.end();) {
    bool affected = false;
    for (int32_t p : partitions) affected = affected || it->second.HasPartition(p);
    if (!affected) {
      ++it;
      continue;
    }
    options_.actions->KillGroup(it->second, reason);
    options_.actions->FinishGroup(it->second, GroupState::kAbandoned, reason);
    for (int32_t p : it->second.partitions()) groups.next_offsets.erase(p);
    it = groups.reading.erase(it);
  }
}

bool OffsetResets::ResetAll() {
  TaskGroups& groups = options_.state->groups;
  options_.wake_up("the supervisor was reset");
  OffsetMap before;
  absl::Status status = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(before, txn.CommittedOffsets(options_.datasource));
    SLUICE_RETURN_IF_ERROR(txn.DeleteCommittedOffsets(options_.datasource, {}));
    for (const auto& [p, offset] : before) {
      SLUICE_RETURN_IF_ERROR(txn.RecordOffsetReset(options_.datasource, p, offset, std::nullopt,
                                                   "operator reset", options_.clock->NowMs()));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    options_.state->RecordError(Annotate(status, "reset"));
    return false;
  }
  std::set<int32_t> all;
  for (const auto& [id, group] : groups.reading) {
    for (int32_t p : group.partitions()) all.insert(p);
  }
  KillGroupsReading(all, "the supervisor was reset");
  groups.next_offsets.clear();
  options_.stream->TreatAllAsFirstSeen();
  LOG(WARNING) << Prefix() << "reset: cleared the stored offsets " << FormatOffsets(before)
               << " and killed the reading groups; reading restarts from "
               << (options_.state->spec.spec.io_config().use_earliest_offset() ? "earliest"
                                                                               : "latest");
  return true;
}

void OffsetResets::ResetOffsets(const OffsetMap& offsets, const std::string& reason) {
  options_.wake_up("offsets were reset");
  OffsetMap before;
  absl::Status status = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(before, txn.CommittedOffsets(options_.datasource));
    const std::string topic = StreamNameOf(options_.state->spec.spec.io_config());
    SLUICE_RETURN_IF_ERROR(
        txn.RecordInitialOffsets(options_.datasource, topic, offsets, options_.clock->NowMs())
            .status());
    SLUICE_RETURN_IF_ERROR(
        txn.SetCommittedOffsets(options_.datasource, topic, offsets, options_.clock->NowMs()));
    for (const auto& [p, offset] : offsets) {
      auto old = before.find(p);
      SLUICE_RETURN_IF_ERROR(txn.RecordOffsetReset(
          options_.datasource, p,
          old == before.end() ? std::nullopt : std::optional<int64_t>(old->second), offset, reason,
          options_.clock->NowMs()));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    options_.state->RecordError(Annotate(status, "reset offsets"));
    return;
  }
  std::set<int32_t> partitions;
  for (const auto& [p, offset] : offsets) partitions.insert(p);
  KillGroupsReading(partitions,
                    absl::StrCat("the offsets of its partitions were reset (", reason, ")"));
  // Where finished groups ended no longer says where the next one starts
  // (no group reads these partitions while suspended, so the kill above did
  // not forget it): the next group starts at the stored offsets.
  for (int32_t p : partitions) options_.state->groups.next_offsets.erase(p);
  LOG(WARNING) << Prefix() << "stored offsets " << FormatOffsets(Restrict(before, offsets))
               << " set to " << FormatOffsets(offsets) << ": " << reason;
}

v1::ReportOffsetOutOfRangeResponse OffsetResets::OffsetOutOfRange(
    const v1::ReportOffsetOutOfRangeRequest& request) {
  v1::ReportOffsetOutOfRangeResponse response;
  const OffsetMap wanted = FromProto(request.offsets());
  if (!options_.state->spec.spec.tuning_config().reset_offset_automatically()) {
    const std::string message = absl::StrCat(
        "task ", request.task_id(), " cannot read offsets ", FormatOffsets(wanted),
        " (out of range; earliest available ", FormatOffsets(FromProto(request.earliest_offsets())),
        "); reset the offsets or set tuningConfig.resetOffsetAutomatically");
    options_.state->RecordError(absl::OutOfRangeError(message));
    response.set_message(message);
    return response;
  }
  // The earliest offsets come from Kafka, never from the report: a task's
  // word is not enough to skip records.
  std::vector<int32_t> partitions;
  for (const auto& [p, offset] : wanted) partitions.push_back(p);
  OffsetMap earliest;
  absl::StatusOr<std::map<int32_t, PartitionWatermarks>> marks =
      options_.stream->QueryWatermarks(partitions);
  if (!marks.ok()) {
    response.set_message(absl::StrCat(
        "cannot read the earliest offsets: ", marks.status().ToString(), "; not resetting"));
    options_.state->RecordError(marks.status());
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
    SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(options_.datasource));
    return absl::OkStatus();
  });
  if (!read.ok()) {
    response.set_message(
        absl::StrCat("cannot read the committed offsets: ", read.ToString(), "; not resetting"));
    options_.state->RecordError(Annotate(read, "offset out of range"));
    return response;
  }
  const OutOfRangeJudgement judged =
      JudgeOutOfRangeReport(request.task_id(), wanted, committed, *marks);
  std::string message = absl::StrJoin(judged.findings, "; ");
  if (judged.task_suspect) {
    absl::StrAppend(&message, "; the task is replaced");
    options_.state->RecordError(absl::FailedPreconditionError(message));
    for (auto& [id, group] : options_.state->groups.reading) {
      auto task = group.tasks.find(request.task_id());
      if (task == group.tasks.end() || !IsLive(task->second)) continue;
      options_.actions->KillTask(task->second,
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
      "ALERT: ", lost, " records lost (deleted by retention before they were ingested): ", message,
      " (resetOffsetAutomatically)");
  LOG(ERROR) << Prefix() << alert;
  options_.state->health.NoteError(options_.clock->NowMs(), absl::DataLossError(alert));
  ResetOffsets(judged.reset, absl::StrCat("OffsetOutOfRange reported by task ", request.task_id(),
                                          " (resetOffsetAutomatically)"));
  response.set_reset(true);
  response.set_message(absl::StrCat(message, "; the task is replaced"));
  return response;
}

}  // namespace sluice::supervisor
