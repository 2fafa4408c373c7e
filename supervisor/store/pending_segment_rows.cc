#include "supervisor/store/pending_segment_rows.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

// ---- allocation ----

namespace {
PendingSegment ReadPendingRow(const SqlStatement& q) {
  PendingSegment s;
  s.id = q.Text(0);
  s.datasource = q.Text(1);
  s.sequence_name = q.Text(2);
  s.start_ms = q.Int64(3);
  s.end_ms = q.Int64(4);
  s.version = q.Text(5);
  s.partition_num = static_cast<int32_t>(q.Int64(6));
  s.task_id = q.Text(7);
  return s;
}
constexpr char kPendingColumns[] =
    "id, datasource, sequence_name, start_ms, end_ms, version, partition_num, task_id";
}  // namespace

absl::StatusOr<std::optional<PendingSegment>> PendingSegmentRows::FindPendingSegment(
    const std::string& datasource, const std::string& sequence_name, int64_t start_ms,
    int64_t end_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare(absl::StrCat("SELECT ", kPendingColumns,
                                        " FROM pending_segments WHERE datasource = ? AND "
                                        "sequence_name = ? AND start_ms = ? AND end_ms = ?")));
  q.Bind(1, datasource).Bind(2, sequence_name).Bind(3, start_ms).Bind(4, end_ms);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<PendingSegment>();
  return std::optional<PendingSegment>(ReadPendingRow(q));
}

absl::StatusOr<int64_t> PendingSegmentRows::CountPendingSegments(const std::string& datasource,
                                                       const std::string& sequence_name) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT COUNT(*) FROM pending_segments WHERE "
                                               "datasource = ? AND sequence_name = ?"));
  q.Bind(1, datasource).Bind(2, sequence_name);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::InternalError("count query returned no row");
  return q.Int64(0);
}

absl::StatusOr<std::optional<PendingSegment>> PendingSegmentRows::PendingSegmentById(const std::string& id) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare(
                  absl::StrCat("SELECT ", kPendingColumns, " FROM pending_segments WHERE id = ?")));
  q.Bind(1, id);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<PendingSegment>();
  return std::optional<PendingSegment>(ReadPendingRow(q));
}

absl::StatusOr<std::optional<std::string>> PendingSegmentRows::IntervalVersion(const std::string& datasource,
                                                                     int64_t start_ms,
                                                                     int64_t end_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT version FROM interval_versions WHERE "
                                               "datasource = ? AND start_ms = ? AND end_ms = ?"));
  q.Bind(1, datasource).Bind(2, start_ms).Bind(3, end_ms);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(q.Text(0));
}

absl::Status PendingSegmentRows::InsertIntervalVersion(const std::string& datasource, int64_t start_ms,
                                             int64_t end_ms, const std::string& version,
                                             int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO interval_versions (datasource, start_ms, end_ms, "
                           "version, created_at_ms) VALUES (?, ?, ?, ?, ?)"));
  q.Bind(1, datasource).Bind(2, start_ms).Bind(3, end_ms).Bind(4, version).Bind(5, now_ms);
  return q.Run();
}

absl::StatusOr<int32_t> PendingSegmentRows::NextPartitionNum(const std::string& datasource, int64_t start_ms,
                                                   int64_t end_ms, const std::string& version) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q,
      db_->Prepare("SELECT coalesce(max(p), -1) + 1 FROM (SELECT max(partition_num) AS p FROM "
                   "pending_segments WHERE datasource = ?1 AND start_ms = ?2 AND end_ms = ?3 AND "
                   "version = ?4 UNION ALL SELECT max(partition_num) FROM segments WHERE "
                   "datasource = ?1 AND start_ms = ?2 AND end_ms = ?3 AND version = ?4) AS parts"));
  q.Bind(1, datasource).Bind(2, start_ms).Bind(3, end_ms).Bind(4, version);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::InternalError("partition number query returned no row");
  return static_cast<int32_t>(q.Int64(0));
}

absl::Status PendingSegmentRows::InsertPendingSegment(const PendingSegment& s, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO pending_segments (id, datasource, sequence_name, "
                           "start_ms, end_ms, version, partition_num, task_id, created_at_ms) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  q.Bind(1, s.id).Bind(2, s.datasource).Bind(3, s.sequence_name).Bind(4, s.start_ms);
  q.Bind(5, s.end_ms).Bind(6, s.version).Bind(7, s.partition_num).Bind(8, s.task_id);
  q.Bind(9, now_ms);
  return q.Run();
}

absl::StatusOr<int64_t> PendingSegmentRows::DeletePendingSegmentsOfEndedGroups(int64_t ended_before_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("DELETE FROM pending_segments WHERE EXISTS (SELECT 1 FROM tasks t "
                           "JOIN task_groups g ON g.base_sequence_name = t.base_sequence_name "
                           "WHERE t.task_id = pending_segments.task_id AND "
                           "g.state IN ('DONE', 'ABANDONED') AND g.finished_at_ms < ?)"));
  q.Bind(1, ended_before_ms);
  SLUICE_RETURN_IF_ERROR(q.Run());
  return static_cast<int64_t>(q.Changes());
}

absl::StatusOr<int64_t> PendingSegmentRows::DeletePendingSegmentsOfCommittedSequences(
    int64_t committed_before_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("DELETE FROM pending_segments WHERE EXISTS (SELECT 1 FROM "
                           "committed_sequences c WHERE c.datasource = pending_segments.datasource "
                           "AND c.sequence_name = pending_segments.sequence_name AND "
                           "c.committed_at_ms < ?)"));
  q.Bind(1, committed_before_ms);
  SLUICE_RETURN_IF_ERROR(q.Run());
  return static_cast<int64_t>(q.Changes());
}

}  // namespace sluice::supervisor
