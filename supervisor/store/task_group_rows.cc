#include "supervisor/store/task_group_rows.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/store/row_helpers.h"

namespace sluice::supervisor {

using store_rows::ForEachRow;
using store_rows::FromJson;
using store_rows::ToJson;

namespace {

GroupState ParseGroupState(const std::string& text) {
  if (text == "READING") return GroupState::kReading;
  if (text == "PUBLISHING") return GroupState::kPublishing;
  if (text == "DONE") return GroupState::kDone;
  return GroupState::kAbandoned;
}

}  // namespace

const char* GroupStateName(GroupState state) {
  switch (state) {
    case GroupState::kReading:
      return "READING";
    case GroupState::kPublishing:
      return "PUBLISHING";
    case GroupState::kDone:
      return "DONE";
    case GroupState::kAbandoned:
      return "ABANDONED";
  }
  return "ABANDONED";
}

bool IsTerminal(v1::TaskState state) {
  return state == v1::TASK_STATE_SUCCESS || state == v1::TASK_STATE_FAILED || state == v1::TASK_STATE_STOPPED;
}

// ---- task groups ----

absl::Status TaskGroupRows::InsertTaskGroup(const TaskGroupRecord& g) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<TaskGroupRecord> existing,
                          GetTaskGroup(g.base_sequence_name));
  if (existing) {
    if (existing->state == GroupState::kReading || existing->state == GroupState::kPublishing) {
      return absl::AlreadyExistsError(absl::StrCat("task group ", g.base_sequence_name,
                                                   " already exists and is ",
                                                   GroupStateName(existing->state)));
    }
    SLUICE_ASSIGN_OR_RETURN(auto del,
                            db_->Prepare("DELETE FROM task_groups WHERE base_sequence_name = ?"));
    del.Bind(1, g.base_sequence_name);
    SLUICE_RETURN_IF_ERROR(del.Run());
  }
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO task_groups (base_sequence_name, datasource, group_id, "
                           "state, spec_version, start_offsets_json, end_offsets_json, "
                           "min_message_time_ms, max_message_time_ms, created_at_ms, "
                           "completion_deadline_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  q.Bind(1, g.base_sequence_name).Bind(2, g.datasource).Bind(3, g.group_id);
  q.Bind(4, GroupStateName(g.state)).Bind(5, g.spec_version);
  q.Bind(6, EncodeOffsets(g.start_offsets)).Bind(7, EncodeOffsets(g.end_offsets));
  q.Bind(8, g.min_message_time_ms).Bind(9, g.max_message_time_ms).Bind(10, g.created_at_ms);
  q.Bind(11, g.completion_deadline_ms);
  SLUICE_RETURN_IF_ERROR(q.Run());
  std::map<int32_t, OffsetMap> checkpoints = g.checkpoints;
  if (checkpoints.empty()) checkpoints[0] = g.start_offsets;
  for (const auto& [sequence_id, offsets] : checkpoints) {
    SLUICE_RETURN_IF_ERROR(
        AppendCheckpoint(g.base_sequence_name, sequence_id, offsets, g.created_at_ms));
  }
  return absl::OkStatus();
}

absl::Status TaskGroupRows::AppendCheckpoint(const std::string& base, int32_t sequence_id,
                                        const OffsetMap& offsets, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO task_group_checkpoints (base_sequence_name, sequence_id, "
                           "offsets_json, created_at_ms) VALUES (?, ?, ?, ?)"));
  q.Bind(1, base).Bind(2, sequence_id).Bind(3, EncodeOffsets(offsets)).Bind(4, now_ms);
  return q.Run();
}

absl::Status TaskGroupRows::RemoveLatestCheckpoint(const std::string& base, int32_t sequence_id) {
  SLUICE_ASSIGN_OR_RETURN(auto later,
                          db_->Prepare("SELECT COUNT(*) FROM task_group_checkpoints WHERE "
                                       "base_sequence_name = ? AND sequence_id > ?"));
  later.Bind(1, base).Bind(2, sequence_id);
  SLUICE_ASSIGN_OR_RETURN(const bool row, later.Step());
  if (row && later.Int64(0) > 0) {
    return absl::FailedPreconditionError(absl::StrCat("checkpoint ", sequence_id, " of group ",
                                                      base, " is not its latest"));
  }
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("DELETE FROM task_group_checkpoints WHERE "
                                               "base_sequence_name = ? AND sequence_id = ?"));
  q.Bind(1, base).Bind(2, sequence_id);
  SLUICE_RETURN_IF_ERROR(q.Run());
  if (q.Changes() != 1) {
    return absl::NotFoundError(absl::StrCat("no checkpoint ", sequence_id, " of group ", base));
  }
  return absl::OkStatus();
}

absl::Status TaskGroupRows::SetGroupPublishing(const std::string& base, const OffsetMap& end,
                                          int64_t completion_deadline_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE task_groups SET state = 'PUBLISHING', end_offsets_json = ?, "
                           "completion_deadline_ms = ? WHERE base_sequence_name = ?"));
  q.Bind(1, EncodeOffsets(end)).Bind(2, completion_deadline_ms).Bind(3, base);
  SLUICE_RETURN_IF_ERROR(q.Run());
  if (q.Changes() != 1) return absl::NotFoundError(absl::StrCat("no task group ", base));
  return absl::OkStatus();
}

absl::Status TaskGroupRows::FinishGroup(const std::string& base, GroupState state,
                                   const std::string& reason, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("UPDATE task_groups SET state = ?, reason = ?, "
                                               "finished_at_ms = ? WHERE base_sequence_name = ?"));
  q.Bind(1, GroupStateName(state)).Bind(2, reason).Bind(3, now_ms).Bind(4, base);
  return q.Run();
}

absl::StatusOr<std::map<int32_t, OffsetMap>> TaskGroupRows::LoadCheckpoints(const std::string& base) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT sequence_id, offsets_json FROM task_group_checkpoints WHERE "
                           "base_sequence_name = ? ORDER BY sequence_id"));
  q.Bind(1, base);
  std::map<int32_t, OffsetMap> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(OffsetMap offsets, DecodeOffsets(q.Text(1)));
    out[static_cast<int32_t>(q.Int64(0))] = std::move(offsets);
    return absl::OkStatus();
  }));
  return out;
}

namespace {
constexpr char kGroupColumns[] =
    "base_sequence_name, datasource, group_id, state, spec_version, start_offsets_json, "
    "end_offsets_json, min_message_time_ms, max_message_time_ms, created_at_ms, "
    "completion_deadline_ms";

absl::StatusOr<TaskGroupRecord> ReadGroupRow(const SqlStatement& q) {
  TaskGroupRecord g;
  g.base_sequence_name = q.Text(0);
  g.datasource = q.Text(1);
  g.group_id = static_cast<int32_t>(q.Int64(2));
  g.state = ParseGroupState(q.Text(3));
  g.spec_version = q.Int64(4);
  SLUICE_ASSIGN_OR_RETURN(g.start_offsets, DecodeOffsets(q.Text(5)));
  SLUICE_ASSIGN_OR_RETURN(g.end_offsets, DecodeOffsets(q.Text(6)));
  g.min_message_time_ms = q.Int64(7);
  g.max_message_time_ms = q.Int64(8);
  g.created_at_ms = q.Int64(9);
  g.completion_deadline_ms = q.Int64(10);
  return g;
}
}  // namespace

absl::StatusOr<std::vector<TaskGroupRecord>> TaskGroupRows::LiveTaskGroups(
    const std::string& datasource) {
  std::vector<TaskGroupRecord> out;
  {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare(absl::StrCat("SELECT ", kGroupColumns,
                                          " FROM task_groups WHERE datasource = ? AND state IN "
                                          "('READING', 'PUBLISHING') ORDER BY created_at_ms, "
                                          "base_sequence_name")));
    q.Bind(1, datasource);
    SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
      SLUICE_ASSIGN_OR_RETURN(TaskGroupRecord g, ReadGroupRow(q));
      out.push_back(std::move(g));
      return absl::OkStatus();
    }));
  }
  for (TaskGroupRecord& g : out) {
    SLUICE_ASSIGN_OR_RETURN(g.checkpoints, LoadCheckpoints(g.base_sequence_name));
  }
  return out;
}

absl::StatusOr<std::optional<TaskGroupRecord>> TaskGroupRows::GetTaskGroup(const std::string& base) {
  std::optional<TaskGroupRecord> out;
  {
    SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare(absl::StrCat("SELECT ", kGroupColumns,
                                                              " FROM task_groups WHERE "
                                                              "base_sequence_name = ?")));
    q.Bind(1, base);
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return out;
    SLUICE_ASSIGN_OR_RETURN(TaskGroupRecord g, ReadGroupRow(q));
    out = std::move(g);
  }
  SLUICE_ASSIGN_OR_RETURN(out->checkpoints, LoadCheckpoints(base));
  return out;
}

// ---- tasks and workers ----

absl::Status TaskGroupRows::InsertTask(const TaskRecord& t) {
  SLUICE_ASSIGN_OR_RETURN(std::string spec_json, ToJson(t.spec));
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO tasks (task_id, datasource, group_id, base_sequence_name, "
                           "worker_id, state, spec_json, created_at_ms, updated_at_ms, error, "
                           "current_offsets_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  q.Bind(1, t.task_id).Bind(2, t.datasource).Bind(3, t.group_id).Bind(4, t.base_sequence_name);
  q.Bind(5, t.worker_id).Bind(6, static_cast<int64_t>(t.state)).Bind(7, spec_json);
  q.Bind(8, t.created_at_ms).Bind(9, t.updated_at_ms).Bind(10, t.error);
  q.Bind(11, EncodeOffsets(t.current_offsets));
  return q.Run();
}

absl::Status TaskGroupRows::UpdateTask(const std::string& task_id, v1::TaskState state,
                                  const std::string& error, const OffsetMap& current_offsets,
                                  int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE tasks SET state = ?1, error = CASE WHEN ?2 = '' THEN error "
                           "ELSE ?2 END, current_offsets_json = CASE WHEN ?3 = '{}' THEN "
                           "current_offsets_json ELSE ?3 END, updated_at_ms = ?4 "
                           "WHERE task_id = ?5"));
  q.Bind(1, static_cast<int64_t>(state)).Bind(2, error).Bind(3, EncodeOffsets(current_offsets));
  q.Bind(4, now_ms).Bind(5, task_id);
  SLUICE_RETURN_IF_ERROR(q.Run());
  if (q.Changes() != 1) return absl::NotFoundError(absl::StrCat("no task ", task_id));
  return absl::OkStatus();
}

namespace {
constexpr char kTaskColumns[] =
    "task_id, datasource, group_id, base_sequence_name, worker_id, state, spec_json, "
    "created_at_ms, updated_at_ms, error, current_offsets_json";

absl::StatusOr<TaskRecord> ReadTaskRow(const SqlStatement& q) {
  TaskRecord t;
  t.task_id = q.Text(0);
  t.datasource = q.Text(1);
  t.group_id = static_cast<int32_t>(q.Int64(2));
  t.base_sequence_name = q.Text(3);
  t.worker_id = q.Text(4);
  t.state = static_cast<v1::TaskState>(q.Int64(5));
  SLUICE_RETURN_IF_ERROR(FromJson(q.Text(6), &t.spec));
  t.created_at_ms = q.Int64(7);
  t.updated_at_ms = q.Int64(8);
  t.error = q.Text(9);
  SLUICE_ASSIGN_OR_RETURN(t.current_offsets, DecodeOffsets(q.Text(10)));
  return t;
}
}  // namespace

absl::StatusOr<std::optional<TaskRecord>> TaskGroupRows::GetTask(const std::string& task_id) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare(absl::StrCat("SELECT ", kTaskColumns, " FROM tasks WHERE task_id = ?")));
  q.Bind(1, task_id);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<TaskRecord>();
  SLUICE_ASSIGN_OR_RETURN(TaskRecord t, ReadTaskRow(q));
  return std::optional<TaskRecord>(std::move(t));
}

absl::StatusOr<std::vector<TaskRecord>> TaskGroupRows::ListTasks(const std::string& datasource,
                                                            bool include_finished) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare(absl::StrCat(
                  "SELECT ", kTaskColumns,
                  " FROM tasks WHERE (?1 = '' OR datasource = ?1) AND (?2 = 1 OR state NOT IN (?3, "
                  "?4, ?5)) ORDER BY created_at_ms, task_id")));
  q.Bind(1, datasource).Bind(2, include_finished ? 1 : 0);
  q.Bind(3, static_cast<int64_t>(v1::TASK_STATE_SUCCESS)).Bind(4, static_cast<int64_t>(v1::TASK_STATE_FAILED));
  q.Bind(5, static_cast<int64_t>(v1::TASK_STATE_STOPPED));
  std::vector<TaskRecord> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(TaskRecord t, ReadTaskRow(q));
    out.push_back(std::move(t));
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace sluice::supervisor
