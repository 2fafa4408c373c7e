#include "supervisor/store/offset_rows.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/store/row_helpers.h"

namespace sluice::supervisor {

using store_rows::ForEachRow;

namespace {
// Rows of (partition, offset or count), as an offset map.
absl::StatusOr<OffsetMap> ReadOffsetMap(SqlStatement& q) {
  OffsetMap out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    out[static_cast<int32_t>(q.Int64(0))] = q.Int64(1);
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace

// ---- commit metadata ----

absl::StatusOr<std::optional<std::string>> OffsetRows::CommitTopic(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT commit_topic FROM datasources WHERE datasource = ?"));
  q.Bind(1, datasource);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row || q.IsNull(0)) return std::optional<std::string>();
  return std::optional<std::string>(q.Text(0));
}

absl::StatusOr<OffsetMap> OffsetRows::CommittedOffsets(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT partition, next_offset FROM "
                                               "committed_offsets WHERE datasource = ?"));
  q.Bind(1, datasource);
  return ReadOffsetMap(q);
}

absl::Status OffsetRows::SetCommittedOffsets(const std::string& datasource, const std::string& topic,
                                           const OffsetMap& offsets, int64_t now_ms) {
  SLUICE_RETURN_IF_ERROR(store_rows::EnsureDatasourceRow(db_, datasource, now_ms));
  {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("UPDATE datasources SET commit_topic = ? WHERE datasource = ?"));
    q.Bind(1, topic).Bind(2, datasource);
    SLUICE_RETURN_IF_ERROR(q.Run());
  }
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO committed_offsets (datasource, partition, next_offset, "
                           "updated_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (datasource, partition) "
                           "DO UPDATE SET next_offset = excluded.next_offset, "
                           "updated_at_ms = excluded.updated_at_ms"));
  for (const auto& [partition, offset] : offsets) {
    q.Bind(1, datasource).Bind(2, partition).Bind(3, offset).Bind(4, now_ms);
    SLUICE_RETURN_IF_ERROR(q.Run());
  }
  return absl::OkStatus();
}

absl::StatusOr<OffsetMap> OffsetRows::RecordInitialOffsets(const std::string& datasource,
                                                         const std::string& topic,
                                                         const OffsetMap& offsets, int64_t now_ms) {
  SLUICE_RETURN_IF_ERROR(store_rows::EnsureDatasourceRow(db_, datasource, now_ms));
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> stored_topic, CommitTopic(datasource));
  SLUICE_ASSIGN_OR_RETURN(OffsetMap committed, CommittedOffsets(datasource));
  if (stored_topic.has_value() && *stored_topic != topic && !committed.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "datasource ", datasource, " has stored offsets for topic \"", *stored_topic, "\", not \"",
        topic, "\"; reset the supervisor (or its offsets) to switch topics"));
  }
  OffsetMap recorded;
  for (const auto& [partition, offset] : offsets) {
    if (!committed.count(partition)) recorded[partition] = offset;
  }
  SLUICE_RETURN_IF_ERROR(SetCommittedOffsets(datasource, topic, recorded, now_ms));
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO initial_offsets (datasource, partition, start_offset, "
                           "recorded_at_ms) VALUES (?, ?, ?, ?) "
                           "ON CONFLICT (datasource, partition) DO NOTHING"));
  for (const auto& [partition, offset] : recorded) {
    q.Bind(1, datasource).Bind(2, partition).Bind(3, offset).Bind(4, now_ms);
    SLUICE_RETURN_IF_ERROR(q.Run());
  }
  return recorded;
}

absl::StatusOr<OffsetMap> OffsetRows::InitialOffsets(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT partition, start_offset FROM "
                                               "initial_offsets WHERE datasource = ?"));
  q.Bind(1, datasource);
  return ReadOffsetMap(q);
}

absl::Status OffsetRows::DeleteCommittedOffsets(const std::string& datasource,
                                              const std::vector<int32_t>& partitions) {
  if (partitions.empty()) {
    SLUICE_ASSIGN_OR_RETURN(auto q,
                            db_->Prepare("DELETE FROM committed_offsets WHERE datasource = ?"));
    q.Bind(1, datasource);
    SLUICE_RETURN_IF_ERROR(q.Run());
  } else {
    SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("DELETE FROM committed_offsets WHERE "
                                                 "datasource = ? AND partition = ?"));
    for (int32_t partition : partitions) {
      q.Bind(1, datasource).Bind(2, partition);
      SLUICE_RETURN_IF_ERROR(q.Run());
    }
  }
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE datasources SET commit_topic = NULL WHERE datasource = ?1 AND "
                           "NOT EXISTS (SELECT 1 FROM committed_offsets WHERE datasource = ?1)"));
  q.Bind(1, datasource);
  return q.Run();
}

absl::Status OffsetRows::RecordOffsetReset(const std::string& datasource, int32_t partition,
                                         std::optional<int64_t> old_offset,
                                         std::optional<int64_t> new_offset,
                                         const std::string& reason, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO offset_resets (datasource, partition, old_offset, "
                           "new_offset, reason, reset_at_ms) VALUES (?, ?, ?, ?, ?, ?)"));
  q.Bind(1, datasource).Bind(2, partition);
  if (old_offset)
    q.Bind(3, *old_offset);
  else
    q.BindNull(3);
  if (new_offset)
    q.Bind(4, *new_offset);
  else
    q.BindNull(4);
  q.Bind(5, reason).Bind(6, now_ms);
  return q.Run();
}

absl::StatusOr<std::vector<v1::OffsetReset>> OffsetRows::OffsetResets(
    const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT reset_id, partition, old_offset, new_offset, reason, "
                           "reset_at_ms FROM offset_resets WHERE datasource = ? "
                           "ORDER BY reset_id"));
  q.Bind(1, datasource);
  std::vector<v1::OffsetReset> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    v1::OffsetReset& reset = out.emplace_back();
    reset.set_reset_id(q.Int64(0));
    reset.set_partition(static_cast<int32_t>(q.Int64(1)));
    if (!q.IsNull(2)) reset.set_old_offset(q.Int64(2));
    if (!q.IsNull(3)) reset.set_new_offset(q.Int64(3));
    reset.set_reason(q.Text(4));
    reset.set_reset_at_ms(q.Int64(5));
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<OffsetMap> OffsetRows::OffsetResetCounts(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT partition, COUNT(*) FROM offset_resets "
                                               "WHERE datasource = ? GROUP BY partition"));
  q.Bind(1, datasource);
  return ReadOffsetMap(q);
}

// ---- commit log and segments ----

absl::StatusOr<std::optional<v1::CommittedSequence>> OffsetRows::CommittedSequence(
    const std::string& datasource, const std::string& sequence_name) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT commit_id, task_id, committed_at_ms FROM committed_sequences "
                           "WHERE datasource = ? AND sequence_name = ?"));
  q.Bind(1, datasource).Bind(2, sequence_name);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<v1::CommittedSequence>();
  const int64_t commit_id = q.Int64(0);
  v1::CommittedSequence out;
  out.set_sequence_name(sequence_name);
  out.set_task_id(q.Text(1));
  out.set_committed_at_ms(q.Int64(2));

  SLUICE_ASSIGN_OR_RETURN(
      auto parts,
      db_->Prepare("SELECT partition, start_offset, end_offset, rows, unparseable, thrown_away "
                   "FROM committed_sequence_partitions WHERE commit_id = ? ORDER BY partition"));
  parts.Bind(1, commit_id);
  SLUICE_RETURN_IF_ERROR(ForEachRow(parts, [&](SqlStatement& parts) -> absl::Status {
    const int32_t partition = static_cast<int32_t>(parts.Int64(0));
    (*out.mutable_start_offsets())[partition] = parts.Int64(1);
    (*out.mutable_end_offsets())[partition] = parts.Int64(2);
    v1::PartitionRange* range = out.add_partition_stats();
    range->set_partition(partition);
    range->set_start_offset(parts.Int64(1));
    range->set_end_offset(parts.Int64(2));
    range->set_rows(parts.Int64(3));
    range->set_unparseable(parts.Int64(4));
    range->set_thrown_away(parts.Int64(5));
    return absl::OkStatus();
  }));
  SLUICE_ASSIGN_OR_RETURN(auto segs,
                          db_->Prepare("SELECT id FROM segments WHERE commit_id = ? AND "
                                       "sequence_name <> '' ORDER BY id"));
  segs.Bind(1, commit_id);
  SLUICE_RETURN_IF_ERROR(ForEachRow(segs, [&](SqlStatement& segs) -> absl::Status {
    out.add_segment_ids(segs.Text(0));
    return absl::OkStatus();
  }));
  return std::optional<v1::CommittedSequence>(std::move(out));
}

absl::StatusOr<int64_t> OffsetRows::InsertCommittedSequence(
    const std::string& datasource, const std::string& sequence_name, const std::string& task_id,
    const OffsetMap& start, const OffsetMap& end, const std::vector<v1::PartitionRange>& stats,
    int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO committed_sequences (datasource, sequence_name, task_id, "
                           "committed_at_ms) VALUES (?, ?, ?, ?) RETURNING commit_id"));
  q.Bind(1, datasource).Bind(2, sequence_name).Bind(3, task_id).Bind(4, now_ms);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::InternalError("commit log insert returned no id");
  const int64_t commit_id = q.Int64(0);
  SLUICE_RETURN_IF_ERROR(q.Run());

  std::map<int32_t, const v1::PartitionRange*> by_partition;
  for (const v1::PartitionRange& range : stats) by_partition[range.partition()] = &range;
  SLUICE_ASSIGN_OR_RETURN(
      auto p, db_->Prepare("INSERT INTO committed_sequence_partitions (commit_id, partition, "
                           "start_offset, end_offset, rows, unparseable, thrown_away) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)"));
  for (const auto& [partition, start_offset] : start) {
    auto end_it = end.find(partition);
    const int64_t end_offset = end_it == end.end() ? start_offset : end_it->second;
    auto stat = by_partition.find(partition);
    p.Bind(1, commit_id).Bind(2, partition).Bind(3, start_offset).Bind(4, end_offset);
    p.Bind(5, stat == by_partition.end() ? int64_t{0} : stat->second->rows());
    p.Bind(6, stat == by_partition.end() ? int64_t{0} : stat->second->unparseable());
    p.Bind(7, stat == by_partition.end() ? int64_t{0} : stat->second->thrown_away());
    SLUICE_RETURN_IF_ERROR(p.Run());
  }
  return commit_id;
}

absl::StatusOr<std::vector<v1::CommittedSequence>> OffsetRows::CommitLog(
    const std::string& datasource) {
  std::vector<std::string> names;
  {
    SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT sequence_name FROM committed_sequences "
                                                 "WHERE datasource = ? ORDER BY commit_id"));
    q.Bind(1, datasource);
    SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
      names.push_back(q.Text(0));
      return absl::OkStatus();
    }));
  }
  std::vector<v1::CommittedSequence> out;
  for (const std::string& name : names) {
    SLUICE_ASSIGN_OR_RETURN(auto sequence, CommittedSequence(datasource, name));
    if (sequence) out.push_back(std::move(*sequence));
  }
  return out;
}

}  // namespace sluice::supervisor
