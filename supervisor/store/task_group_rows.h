// Task groups with their checkpoints, and tasks (tables task_groups,
// task_group_checkpoints, tasks). Typed statements over one open transaction; StoreTxn
// (metadata_store.h) offers them.
#ifndef SLUICE_SUPERVISOR_STORE_TASK_GROUP_ROWS_H_
#define SLUICE_SUPERVISOR_STORE_TASK_GROUP_ROWS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/task.pb.h"
#include "common/offsets.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

enum class GroupState { kReading, kPublishing, kDone, kAbandoned };
const char* GroupStateName(GroupState state);

struct TaskGroupRecord {
  std::string base_sequence_name;
  std::string datasource;
  int32_t group_id = 0;
  GroupState state = GroupState::kReading;
  int64_t spec_version = 0;
  OffsetMap start_offsets;
  // Sequence id -> start offsets, ascending.
  std::map<int32_t, OffsetMap> checkpoints;
  OffsetMap end_offsets;
  int64_t min_message_time_ms = 0;
  int64_t max_message_time_ms = 0;
  int64_t created_at_ms = 0;
  int64_t completion_deadline_ms = 0;
};

struct TaskRecord {
  std::string task_id;
  std::string datasource;
  int32_t group_id = 0;
  std::string base_sequence_name;
  std::string worker_id;
  v1::TaskState state = v1::TASK_STATE_UNSPECIFIED;
  v1::TaskSpec spec;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  std::string error;
  OffsetMap current_offsets;
};

bool IsTerminal(v1::TaskState state);

class TaskGroupRows {
 public:
  explicit TaskGroupRows(SqlConnection* db) : db_(db) {}

  // ---- task groups ----
  // Inserts the group with its first checkpoint (sequence 0 = start
  // offsets). A finished (DONE/ABANDONED) group of the same name is replaced;
  // a live one is ALREADY_EXISTS.
  absl::Status InsertTaskGroup(const TaskGroupRecord& group);
  absl::Status AppendCheckpoint(const std::string& base_sequence_name, int32_t sequence_id,
                                const OffsetMap& offsets, int64_t now_ms);
  // Removes checkpoint `sequence_id` of the group, which must be its latest
  // (a pauseless round's end that no replica accepted). NOT_FOUND if absent,
  // FAILED_PRECONDITION if a later one exists.
  absl::Status RemoveLatestCheckpoint(const std::string& base_sequence_name, int32_t sequence_id);
  absl::Status SetGroupPublishing(const std::string& base_sequence_name, const OffsetMap& end,
                                  int64_t completion_deadline_ms);
  absl::Status FinishGroup(const std::string& base_sequence_name, GroupState state,
                           const std::string& reason, int64_t now_ms);
  // READING and PUBLISHING groups of the datasource, with their checkpoints.
  absl::StatusOr<std::vector<TaskGroupRecord>> LiveTaskGroups(const std::string& datasource);
  absl::StatusOr<std::optional<TaskGroupRecord>> GetTaskGroup(
      const std::string& base_sequence_name);

  // ---- tasks and workers ----
  absl::Status InsertTask(const TaskRecord& task);
  // Updates state, error (when non-empty) and current offsets (when non-empty).
  absl::Status UpdateTask(const std::string& task_id, v1::TaskState state, const std::string& error,
                          const OffsetMap& current_offsets, int64_t now_ms);
  absl::StatusOr<std::optional<TaskRecord>> GetTask(const std::string& task_id);
  // Empty datasource: all. Non-terminal tasks only unless include_finished.
  absl::StatusOr<std::vector<TaskRecord>> ListTasks(const std::string& datasource,
                                                    bool include_finished);

 private:
  absl::StatusOr<std::map<int32_t, OffsetMap>> LoadCheckpoints(const std::string& base);

  SqlConnection* db_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_TASK_GROUP_ROWS_H_
