// A worker may act only for the tasks the supervisor assigned to it. Every
// task-protocol call (checkpoint, allocate, publish, out-of-range, task
// status) names a task and what the task says it is; this checks the claim
// against the supervisor's own task records before the call does anything.
#ifndef SLUICE_SUPERVISOR_TASK_CLAIMS_H_
#define SLUICE_SUPERVISOR_TASK_CLAIMS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/auth/identity.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

// What a request says about the task it acts for; unset parts are not checked.
struct TaskClaim {
  std::string datasource;
  std::string task_id;
  std::optional<int32_t> group_id;
  // The group's base sequence name, or a sequence name "<base>_<n>" of it.
  std::string base_sequence_name;
  std::string sequence_name;
  // Partitions the request touches; each must be one the task reads.
  std::vector<int32_t> partitions;
};

// The partitions a request's offsets map (partition -> offset) names.
template <typename OffsetsMap>
std::vector<int32_t> PartitionsOf(const OffsetsMap& offsets) {
  std::vector<int32_t> partitions;
  for (const auto& [partition, offset] : offsets) partitions.push_back(partition);
  return partitions;
}

// The task's record when the claim holds. PERMISSION_DENIED, naming what did
// not match, when the task is unknown, belongs to another datasource, group or
// base sequence, does not read a named partition, or runs on a worker other
// than the caller's bound worker (caller.worker_id, when set).
// INVALID_ARGUMENT, naming it, for a sequence name of the task's group not in
// its one canonical form (naming.h ParseSequenceName: "<base>_007").
absl::StatusOr<TaskRecord> CheckTaskClaim(MetadataStore* store, const auth::Caller& caller,
                                          const TaskClaim& claim);

// The publish of `sequence_name` ("<base>_<n>") of `task`'s group must cover
// exactly the range the supervisor agreed on: start = its checkpoint n, end =
// checkpoint n+1 or, for the group's last sequence, the group's final end
// offsets. PERMISSION_DENIED for any other range (a task's word is not
// enough to move the stored offsets); UNAVAILABLE while the last sequence's
// end is not recorded yet (retry); INVALID_ARGUMENT for a non-canonical
// sequence name.
absl::Status CheckSequenceRange(MetadataStore* store, const TaskRecord& task,
                                const std::string& sequence_name, const OffsetMap& start,
                                const OffsetMap& end);

// PERMISSION_DENIED unless `sequence_name` ("<base>_<n>") of `task`'s group
// is one the supervisor started (checkpointed): a task allocates segments
// only for sequences the supervisor told it about, so the sequences a caller
// can hold allocations for are bounded by the group's checkpoints.
// INVALID_ARGUMENT for a non-canonical sequence name.
absl::Status CheckSequenceStarted(MetadataStore* store, const TaskRecord& task,
                                  const std::string& sequence_name);

// The same inside a transaction: the publish transaction checks it again,
// so that a range moved meanwhile (a checkpoint moved back) is not
// committed with its old end.
absl::Status CheckSequenceRangeIn(StoreTxn& txn, const std::string& base_sequence_name,
                                  const std::string& sequence_name, const OffsetMap& start,
                                  const OffsetMap& end);

// PERMISSION_DENIED unless the caller may speak for `worker_id` (a caller
// bound to a worker may speak only for that worker).
absl::Status CheckWorkerClaim(const auth::Caller& caller, const std::string& worker_id);

// PERMISSION_DENIED unless a registering worker's address and capacity are
// within what its principal's grant declares (policy.h: address=,
// max_capacity=). An unbound caller (authentication off) may register
// anywhere.
absl::Status CheckWorkerPlacement(const auth::Caller& caller, const v1::WorkerInfo& worker);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_TASK_CLAIMS_H_
