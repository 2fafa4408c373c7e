#include "supervisor/task_claims.h"

#include "absl/strings/str_cat.h"
#include "common/auth/policy.h"
#include "common/status_macros.h"
#include "supervisor/naming.h"

namespace sluice::supervisor {
namespace {

absl::Status Denied(const TaskClaim& claim, absl::string_view why) {
  return absl::PermissionDeniedError(
      absl::StrCat("task ", claim.task_id, " of datasource ", claim.datasource, ": ", why));
}

}  // namespace

absl::Status CheckWorkerClaim(const auth::Caller& caller, const std::string& worker_id) {
  if (caller.worker_id.empty() || caller.worker_id == worker_id) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("principal ", caller.principal,
                                                  " is bound to worker ", caller.worker_id,
                                                  " and may not act as worker ", worker_id));
}

absl::Status CheckWorkerPlacement(const auth::Caller& caller, const v1::WorkerInfo& worker) {
  if (!caller.worker_address_pattern.empty() &&
      !auth::AddressMatches(caller.worker_address_pattern, worker.address())) {
    return absl::PermissionDeniedError(absl::StrCat(
        "principal ", caller.principal, " may register worker ", worker.worker_id(), " only at ",
        caller.worker_address_pattern, ", not at ", worker.address()));
  }
  if (caller.max_capacity > 0 && worker.capacity() > caller.max_capacity) {
    return absl::PermissionDeniedError(absl::StrCat(
        "principal ", caller.principal, " may claim at most ", caller.max_capacity,
        " task slots, not ", worker.capacity()));
  }
  return absl::OkStatus();
}

absl::StatusOr<TaskRecord> CheckTaskClaim(MetadataStore* store, const auth::Caller& caller,
                                          const TaskClaim& claim) {
  std::optional<TaskRecord> record;
  SLUICE_RETURN_IF_ERROR(store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(record, txn.GetTask(claim.task_id));
    return absl::OkStatus();
  }));
  if (!record) return Denied(claim, "no such task was assigned by this supervisor");
  if (record->datasource != claim.datasource) {
    return Denied(claim, absl::StrCat("the task belongs to datasource ", record->datasource));
  }
  if (!caller.worker_id.empty() && record->worker_id != caller.worker_id) {
    return Denied(claim, absl::StrCat("the task runs on worker ", record->worker_id,
                                      ", not on the caller's worker ", caller.worker_id));
  }
  if (claim.group_id && *claim.group_id != record->group_id) {
    return Denied(claim, absl::StrCat("the task is in group ", record->group_id, ", not ",
                                      *claim.group_id));
  }
  if (!claim.base_sequence_name.empty() &&
      claim.base_sequence_name != record->base_sequence_name) {
    return Denied(claim, absl::StrCat("the task's base sequence is ", record->base_sequence_name,
                                      ", not ", claim.base_sequence_name));
  }
  if (!claim.sequence_name.empty()) {
    absl::StatusOr<int32_t> id =
        ParseSequenceName(record->base_sequence_name, claim.sequence_name);
    if (absl::IsInvalidArgument(id.status())) return id.status();
    if (!id.ok()) {
      return Denied(claim, absl::StrCat("sequence ", claim.sequence_name,
                                        " is not a sequence of the task's group ",
                                        record->base_sequence_name));
    }
  }
  for (int32_t partition : claim.partitions) {
    if (!record->spec.start_offsets().count(partition)) {
      return Denied(claim, absl::StrCat("the task does not read partition ", partition));
    }
  }
  return *std::move(record);
}

absl::Status CheckSequenceRange(MetadataStore* store, const TaskRecord& task,
                                const std::string& sequence_name, const OffsetMap& start,
                                const OffsetMap& end) {
  return store->InTransaction([&](StoreTxn& txn) {
    return CheckSequenceRangeIn(txn, task.base_sequence_name, sequence_name, start, end);
  });
}

absl::Status CheckSequenceStarted(MetadataStore* store, const TaskRecord& task,
                                  const std::string& sequence_name) {
  absl::StatusOr<int32_t> id = ParseSequenceName(task.base_sequence_name, sequence_name);
  if (absl::IsInvalidArgument(id.status())) return id.status();
  if (!id.ok()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "sequence ", sequence_name, " is not a sequence of group ", task.base_sequence_name));
  }
  std::optional<TaskGroupRecord> group;
  SLUICE_RETURN_IF_ERROR(store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(group, txn.GetTaskGroup(task.base_sequence_name));
    return absl::OkStatus();
  }));
  if (!group || !group->checkpoints.count(*id)) {
    return absl::PermissionDeniedError(
        absl::StrCat("sequence ", sequence_name, ": the supervisor never started it"));
  }
  return absl::OkStatus();
}

absl::Status CheckSequenceRangeIn(StoreTxn& txn, const std::string& base_sequence_name,
                                  const std::string& sequence_name, const OffsetMap& start,
                                  const OffsetMap& end) {
  absl::StatusOr<int32_t> parsed = ParseSequenceName(base_sequence_name, sequence_name);
  if (absl::IsInvalidArgument(parsed.status())) return parsed.status();
  if (!parsed.ok()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "sequence ", sequence_name, " is not a sequence of group ", base_sequence_name));
  }
  const int32_t id = *parsed;
  SLUICE_ASSIGN_OR_RETURN(std::optional<TaskGroupRecord> group,
                          txn.GetTaskGroup(base_sequence_name));
  auto denied = [&](absl::string_view why) {
    return absl::PermissionDeniedError(absl::StrCat("sequence ", sequence_name, " ",
                                                    FormatOffsets(start), " -> ",
                                                    FormatOffsets(end), ": ", why));
  };
  if (!group) return denied("its group is unknown to the supervisor");
  auto first = group->checkpoints.find(id);
  if (first == group->checkpoints.end()) return denied("the supervisor never checkpointed it");
  if (first->second != start) {
    return denied(absl::StrCat("the supervisor recorded its start as ",
                               FormatOffsets(first->second)));
  }
  auto next = group->checkpoints.find(id + 1);
  if (next != group->checkpoints.end()) {
    if (next->second != end) {
      return denied(absl::StrCat("the supervisor recorded its end as ",
                                 FormatOffsets(next->second)));
    }
    return absl::OkStatus();
  }
  if (group->end_offsets.empty()) {
    return absl::UnavailableError(absl::StrCat("sequence ", sequence_name,
                                               " is the group's open sequence: its end is not "
                                               "recorded yet; retry"));
  }
  if (Restrict(group->end_offsets, start) != end) {
    return denied(absl::StrCat("the supervisor recorded the group's final end as ",
                               FormatOffsets(group->end_offsets)));
  }
  return absl::OkStatus();
}

}  // namespace sluice::supervisor
