// Recovery of a stream supervisor's groups and tasks after a restart or a
// change of leader, from the metadata store alone: the live groups (reading
// ones kept only if their spec and name are still current, the others
// abandoned and their tasks killed), the tasks (orphans killed), and each
// kept task adopted from its worker: its checkpoints checked against the
// group's (inconsistent: killed), a checkpoint it missed sent, a paused one
// resumed.
//
// Called once by the stream supervisor's loop, which takes the groups it
// returns; it acts on tasks through TaskActions and the task client only.
// Not copyable. Everything it points to must outlive it.
#ifndef SLUICE_SUPERVISOR_GROUP_RECOVERY_H_
#define SLUICE_SUPERVISOR_GROUP_RECOVERY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/offsets.h"
#include "common/spec.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/idle_tracker.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/task_actions.h"
#include "supervisor/task_client.h"
#include "supervisor/task_group.h"
#include "supervisor/worker_registry.h"

namespace sluice::supervisor {

struct GroupRecoveryOptions {
  std::string datasource;
  MetadataStore* store = nullptr;
  WorkerRegistry* registry = nullptr;
  // GetTaskStatus, Pause, SetEndOffsets, Resume.
  TaskClient* client = nullptr;
  // Kills and task addresses.
  TaskActions* actions = nullptr;
};

// What a stream supervisor gets back from the store and its workers.
struct RecoveredGroups {
  // Reading groups by id, with their adopted tasks.
  std::map<int32_t, Group> reading;
  // Publishing groups by id, oldest first.
  std::map<int32_t, std::vector<Group>> publishing;
  // Per partition, the furthest end of its publishing groups: where its
  // next group starts.
  OffsetMap publishing_ends;
  // The rest of the datasource's stored state.
  std::optional<IdleState> idle;
  std::optional<int32_t> autoscaled_task_count;
  std::optional<v1::ScalingDecision> last_scaling;
};

class GroupRecovery {
 public:
  explicit GroupRecovery(GroupRecoveryOptions options);
  GroupRecovery(const GroupRecovery&) = delete;
  GroupRecovery& operator=(const GroupRecovery&) = delete;

  // Reads and judges the stored groups and tasks against the running
  // `spec` (version `spec_version`); `is_previous_spec(v)`: whether groups
  // created under version v belong to an earlier spec (one not taken live).
  // An error only when the store could not be read (nothing was done).
  absl::StatusOr<RecoveredGroups> Recover(const v1::SupervisorSpec& spec,
                                          const std::function<bool(int64_t)>& is_previous_spec);

 private:
  // Takes the worker's word for the task's state; kills it when the worker
  // no longer knows it or its checkpoints contradict the group's.
  void Adopt(Group& group, TaskInfo& task, bool publishing);
  std::string Prefix() const;

  const GroupRecoveryOptions options_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_GROUP_RECOVERY_H_
