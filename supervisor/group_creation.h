// Creation of a stream supervisor's groups and tasks: a group for each
// p % taskCount with no reading group (once no group of the previous spec
// publishes, and none of the old count still reads its partitions), starting
// where start_offset_policy.h says and recorded before any task reads; then
// replicas up to ioConfig.replicas, each placed on a worker, recorded and
// sent RunTask off the loop, its answer handled back on the loop.
//
// Used on the stream supervisor's loop only, on the state it shares for the
// supervisor's lifetime (loop_state.h); what it needs besides comes through
// GroupCreationOptions. Not copyable. Everything it points to must outlive
// it.
#ifndef SLUICE_SUPERVISOR_GROUP_CREATION_H_
#define SLUICE_SUPERVISOR_GROUP_CREATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/offsets.h"
#include "common/spec.h"
#include "supervisor/clock.h"
#include "supervisor/loop_state.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/stream_tracker.h"
#include "supervisor/task_actions.h"
#include "supervisor/task_group.h"
#include "supervisor/worker_registry.h"

namespace sluice::supervisor {

struct GroupCreationOptions {
  std::string datasource;
  MetadataStore* store = nullptr;
  WorkerRegistry* registry = nullptr;
  Clock* clock = Clock::Real();
  TaskActions* actions = nullptr;
  // Partitions, watermarks, first-seen partitions, the stored offsets'
  // verdict.
  StreamTracker* stream = nullptr;
  // The loop's shared state: the running spec and its durations, the
  // groups, the detailed state, recorded errors.
  LoopState* state = nullptr;
  // The supervisor's offset reset (stored offsets no longer in Kafka,
  // resetOffsetAutomatically): it kills the groups reading them.
  std::function<void(const OffsetMap&, const std::string&)> reset_offsets;
  // Runs `handle` on the loop later (a RunTask answer arrives off it).
  std::function<void(std::string kind, std::function<void()> handle)> post;
  std::function<void()> request_run;
  // A group was created: RPC threads must know it before its tasks ask.
  std::function<void()> publish_view;
};

class GroupCreation {
 public:
  explicit GroupCreation(GroupCreationOptions options);
  GroupCreation(const GroupCreation&) = delete;
  GroupCreation& operator=(const GroupCreation&) = delete;

  // Creates the missing groups of `task_count` and the missing replicas of
  // every reading group. Returns the first error (not a lack of workers,
  // which is a state).
  absl::Status CreateGroupsAndTasks(int32_t task_count);
  // Whether groups created under spec `version` belong to an earlier spec
  // (one that differs from the running one in more than fields taken live).
  bool IsPreviousSpec(int64_t version);

 private:
  absl::Status CreateGroup(int32_t group_id, const std::vector<int32_t>& partitions);
  // Places a task of the group and sends RunTask off the loop: the task is
  // in the group (NOT_STARTED) at once, HandleRunTaskResult settles it.
  absl::Status CreateTask(Group& group);
  void HandleRunTaskResult(int32_t group_id, const std::string& task_id, const std::string& worker,
                           const absl::StatusOr<v1::RunTaskResponse>& response);
  std::string Prefix() const;

  const GroupCreationOptions options_;
  // Spec version -> whether it is an earlier spec than the running one.
  std::map<int64_t, bool> previous_spec_;
  // The last "no worker has a free slot" recorded (at most one a minute).
  absl::Time last_resource_error_ = absl::InfinitePast();
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_GROUP_CREATION_H_
