#include "supervisor/store/segment_rows.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/store/row_helpers.h"

namespace sluice::supervisor {

using store_rows::ForEachRow;
using store_rows::FromJson;
using store_rows::ToJson;

absl::StatusOr<bool> SegmentRows::SegmentExists(const std::string& id) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT 1 FROM segments WHERE id = ?"));
  q.Bind(1, id);
  return q.Step();
}

absl::Status SegmentRows::InsertSegment(const v1::SegmentDescriptor& s, const std::string& sha256,
                                     int64_t commit_id, const std::string& task_id,
                                     int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(std::string provenance, ToJson(s.provenance()));
  SLUICE_ASSIGN_OR_RETURN(
      auto q,
      db_->Prepare("INSERT INTO segments (id, datasource, start_ms, end_ms, version, "
                   "partition_num, num_rows, size_bytes, checksum, path, provenance_json, "
                   "sequence_name, commit_id, used, created_at_ms, handoff_state, "
                   "published_by_task, sha256) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)"));
  q.Bind(1, s.id()).Bind(2, s.datasource()).Bind(3, s.interval().start_ms());
  q.Bind(4, s.interval().end_ms()).Bind(5, s.version()).Bind(6, s.partition_num());
  q.Bind(7, s.num_rows()).Bind(8, s.size_bytes()).Bind(9, s.checksum()).Bind(10, s.path());
  q.Bind(11, provenance).Bind(12, s.sequence_name()).Bind(13, commit_id).Bind(14, now_ms);
  q.Bind(15, static_cast<int64_t>(v1::HANDOFF_STATE_PENDING)).Bind(16, task_id);
  if (sha256.empty()) {
    q.BindNull(17);
  } else {
    q.Bind(17, sha256);
  }
  return q.Run();
}

absl::Status SegmentRows::ReplaceSegments(const std::string& datasource,
                                       const std::vector<std::string>& replaced_ids,
                                       const std::vector<v1::SegmentDescriptor>& segments,
                                       const std::string& task_id, int64_t now_ms) {
  if (replaced_ids.empty() || segments.empty()) {
    return absl::InvalidArgumentError("a replacement needs segments to replace and new segments");
  }
  std::set<std::string> ids;
  for (const std::string& id : replaced_ids) {
    if (!ids.insert(id).second) {
      return absl::InvalidArgumentError(absl::StrCat("segment ", id, " is named twice"));
    }
  }
  for (const v1::SegmentDescriptor& s : segments) {
    if (s.id().empty() || !ids.insert(s.id()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("new segment id \"", s.id(), "\" is empty or named twice"));
    }
  }
  // Every check before any write.
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT start_ms, end_ms, used, commit_id FROM "
                                               "segments WHERE id = ? AND datasource = ?"));
  int64_t start_ms = 0, end_ms = 0, commit_id = 0;
  for (size_t i = 0; i < replaced_ids.size(); ++i) {
    q.Bind(1, replaced_ids[i]).Bind(2, datasource);
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) {
      return absl::NotFoundError(absl::StrCat("segment ", replaced_ids[i],
                                              " is not a segment of datasource ", datasource));
    }
    const int64_t start = q.Int64(0), end = q.Int64(1);
    const bool used = q.Int64(2) == 1;
    commit_id = std::max(commit_id, q.Int64(3));
    SLUICE_RETURN_IF_ERROR(q.Run());
    if (!used) {
      return absl::AbortedError(absl::StrCat("segment ", replaced_ids[i],
                                             " is no longer used (replaced or dropped since it "
                                             "was read); nothing was replaced"));
    }
    if (i == 0) {
      start_ms = start;
      end_ms = end;
    } else if (start != start_ms || end != end_ms) {
      return absl::InvalidArgumentError(absl::StrCat(
          "segment ", replaced_ids[i], " covers [", start, ", ", end, "), segment ",
          replaced_ids[0], " [", start_ms, ", ", end_ms, "): one interval at a time"));
    }
  }
  for (const v1::SegmentDescriptor& s : segments) {
    if (s.datasource() != datasource || s.interval().start_ms() != start_ms ||
        s.interval().end_ms() != end_ms) {
      return absl::InvalidArgumentError(absl::StrCat(
          "new segment ", s.id(), " is not of datasource ", datasource, " and interval [",
          start_ms, ", ", end_ms, ")"));
    }
    SLUICE_ASSIGN_OR_RETURN(bool exists, SegmentExists(s.id()));
    if (exists) return absl::AlreadyExistsError(absl::StrCat("segment ", s.id(), " exists"));
  }
  for (const v1::SegmentDescriptor& s : segments) {
    v1::SegmentDescriptor stored = s;
    stored.clear_sequence_name();
    SLUICE_RETURN_IF_ERROR(InsertSegment(stored, s.sha256(), commit_id, task_id, now_ms));
  }
  SLUICE_ASSIGN_OR_RETURN(auto unuse, db_->Prepare("UPDATE segments SET used = 0 WHERE id = ? "
                                                   "AND datasource = ? AND used = 1"));
  SLUICE_ASSIGN_OR_RETURN(auto record,
                          db_->Prepare("INSERT INTO segment_replacements (replaced_id, "
                                       "replacing_id, replaced_at_ms) VALUES (?, ?, ?)"));
  for (const std::string& id : replaced_ids) {
    unuse.Bind(1, id).Bind(2, datasource);
    SLUICE_RETURN_IF_ERROR(unuse.Run());
    // A concurrent replacement that won the row since the check above.
    if (unuse.Changes() != 1) {
      return absl::AbortedError(absl::StrCat("segment ", id, " is no longer used (replaced or "
                                             "dropped since it was read); nothing was replaced"));
    }
    for (const v1::SegmentDescriptor& s : segments) {
      record.Bind(1, id).Bind(2, s.id()).Bind(3, now_ms);
      SLUICE_RETURN_IF_ERROR(record.Run());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
SegmentRows::ReplacedSegmentFilesToRemove(int64_t replaced_before_ms, int limit) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT s.id, s.path, MIN(r.replaced_at_ms) AS replaced_at FROM "
                           "segments s JOIN segment_replacements r ON r.replaced_id = s.id "
                           "WHERE s.used = 0 AND s.file_removed_at_ms = 0 "
                           "GROUP BY s.id, s.path HAVING MIN(r.replaced_at_ms) <= ? "
                           "ORDER BY replaced_at, s.id LIMIT ?"));
  q.Bind(1, replaced_before_ms).Bind(2, static_cast<int64_t>(limit));
  std::vector<std::pair<std::string, std::string>> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    out.emplace_back(q.Text(0), q.Text(1));
    return absl::OkStatus();
  }));
  return out;
}

absl::Status SegmentRows::SetSegmentFileRemoved(const std::string& id, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE segments SET file_removed_at_ms = ? WHERE id = ? AND used = 0"));
  q.Bind(1, now_ms).Bind(2, id);
  return q.Run();
}

absl::StatusOr<std::vector<std::string>> SegmentRows::ReplacedBy(const std::string& id) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT replacing_id FROM segment_replacements "
                                               "WHERE replaced_id = ? ORDER BY replacing_id"));
  q.Bind(1, id);
  std::vector<std::string> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    out.push_back(q.Text(0));
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::vector<std::string>> SegmentRows::UsedSegmentIds(
    const std::string& datasource, const std::vector<std::string>& ids) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT 1 FROM segments WHERE id = ? AND "
                                               "datasource = ? AND used = 1"));
  std::vector<std::string> out;
  for (const std::string& id : ids) {
    q.Bind(1, id).Bind(2, datasource);
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (row) out.push_back(id);
    SLUICE_RETURN_IF_ERROR(q.Run());
  }
  return out;
}

namespace {
constexpr char kSegmentColumns[] =
    "id, datasource, start_ms, end_ms, version, partition_num, num_rows, size_bytes, checksum, "
    "path, provenance_json, sequence_name, used, created_at_ms, handoff_state, handed_off_at_ms, "
    "published_by_task, sha256";

absl::StatusOr<v1::SegmentDescriptor> ReadSegmentRow(const SqlStatement& q) {
  v1::SegmentDescriptor s;
  s.set_id(q.Text(0));
  s.set_datasource(q.Text(1));
  s.mutable_interval()->set_start_ms(q.Int64(2));
  s.mutable_interval()->set_end_ms(q.Int64(3));
  s.set_version(q.Text(4));
  s.set_partition_num(static_cast<int32_t>(q.Int64(5)));
  s.set_num_rows(q.Int64(6));
  s.set_size_bytes(q.Int64(7));
  s.set_checksum(q.Text(8));
  s.set_path(q.Text(9));
  SLUICE_RETURN_IF_ERROR(FromJson(q.Text(10), s.mutable_provenance()));
  s.set_sequence_name(q.Text(11));
  s.set_used(q.Int64(12) != 0);
  s.set_created_at_ms(q.Int64(13));
  s.set_handoff_state(static_cast<v1::HandoffState>(q.Int64(14)));
  s.set_handed_off_at_ms(q.Int64(15));
  s.set_published_by_task(q.Text(16));
  if (!q.IsNull(17)) s.set_sha256(q.Text(17));
  return s;
}
}  // namespace

absl::StatusOr<std::vector<v1::SegmentDescriptor>> SegmentRows::ListSegments(
    const std::string& datasource, const v1::Interval* overlapping, bool include_unused,
    int limit) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare(absl::StrCat("SELECT ", kSegmentColumns,
                                        " FROM segments WHERE datasource = ?1 AND (?2 = 1 OR used = 1)"
                                        " AND end_ms > ?3 AND start_ms < ?4 "
                                        "ORDER BY start_ms, version, partition_num LIMIT ?5")));
  q.Bind(1, datasource).Bind(2, include_unused ? 1 : 0);
  q.Bind(3, overlapping ? overlapping->start_ms() : INT64_MIN);
  q.Bind(4, overlapping ? overlapping->end_ms() : INT64_MAX);
  q.Bind(5, limit);
  std::vector<v1::SegmentDescriptor> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(v1::SegmentDescriptor s, ReadSegmentRow(q));
    out.push_back(std::move(s));
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<int64_t> SegmentRows::CountSegments(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT count(*) FROM segments WHERE datasource = ? AND used = 1"));
  q.Bind(1, datasource);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  return row ? q.Int64(0) : 0;
}

// ---- handoff ----

namespace {

// Used segments in `state` (or not in it), in `order`, as handoff candidates.
absl::StatusOr<std::vector<HandoffCandidate>> ReadCandidates(SqlConnection* db, const char* state_test,
                                                             const char* order, int limit) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db->Prepare(absl::StrCat(
                  "SELECT id, datasource, path, size_bytes, checksum, handoff_state, "
                  "verified_at_ms, loaded_at_ms, created_at_ms, num_rows, sha256 FROM segments "
                  "WHERE "
                  "used = 1 AND handoff_state ",
                  state_test, " ? ORDER BY ", order, " LIMIT ?")));
  q.Bind(1, static_cast<int64_t>(v1::HANDOFF_STATE_HANDED_OFF)).Bind(2, limit);
  std::vector<HandoffCandidate> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    HandoffCandidate c;
    c.id = q.Text(0);
    c.datasource = q.Text(1);
    c.path = q.Text(2);
    c.size_bytes = q.Int64(3);
    c.checksum = q.Text(4);
    c.state = static_cast<v1::HandoffState>(q.Int64(5));
    c.verified_at_ms = q.Int64(6);
    c.loaded_at_ms = q.Int64(7);
    c.created_at_ms = q.Int64(8);
    c.num_rows = q.Int64(9);
    if (!q.IsNull(10)) c.sha256 = q.Text(10);
    out.push_back(std::move(c));
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace

absl::StatusOr<std::vector<HandoffCandidate>> SegmentRows::HandoffCandidates(int limit) {
  return ReadCandidates(db_, "!=", "created_at_ms, id", limit);
}

absl::StatusOr<std::vector<HandoffCandidate>> SegmentRows::SegmentsToReverify(int limit) {
  return ReadCandidates(db_, "=", "verified_at_ms, id", limit);
}

absl::Status SegmentRows::SetVerifiedAt(const std::string& id, int64_t verified_at_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q,
                          db_->Prepare("UPDATE segments SET verified_at_ms = ? WHERE id = ?"));
  q.Bind(1, verified_at_ms).Bind(2, id);
  return q.Run();
}

absl::StatusOr<int64_t> SegmentRows::CountFailedSegments(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT count(*) FROM segments WHERE datasource = ? "
                                               "AND used = 1 AND handoff_state = ?"));
  q.Bind(1, datasource).Bind(2, static_cast<int64_t>(v1::HANDOFF_STATE_FAILED));
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  return row ? q.Int64(0) : 0;
}

absl::Status SegmentRows::SetHandoff(const std::string& id, v1::HandoffState state,
                                  int64_t verified_at_ms, int64_t handed_off_at_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("UPDATE segments SET handoff_state = ?, "
                                               "verified_at_ms = ?, handed_off_at_ms = ? "
                                               "WHERE id = ?"));
  q.Bind(1, static_cast<int64_t>(state)).Bind(2, verified_at_ms).Bind(3, handed_off_at_ms);
  q.Bind(4, id);
  return q.Run();
}

absl::StatusOr<int> SegmentRows::MarkLoaded(const std::string& datasource,
                                         const std::vector<std::string>& ids,
                                         const std::string& loader, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE segments SET loaded_at_ms = CASE WHEN loaded_at_ms = 0 THEN ?1 "
                           "ELSE loaded_at_ms END, loaded_by = CASE WHEN loaded_by = '' THEN ?2 "
                           "ELSE loaded_by END WHERE id = ?3 AND datasource = ?4 AND used = 1"));
  int marked = 0;
  for (const std::string& id : ids) {
    q.Bind(1, now_ms).Bind(2, loader).Bind(3, id).Bind(4, datasource);
    SLUICE_RETURN_IF_ERROR(q.Run());
    if (q.Changes() != 1) {
      return absl::NotFoundError(
          absl::StrCat("segment ", id, " is not a published segment of datasource ", datasource));
    }
    ++marked;
  }
  return marked;
}

absl::StatusOr<std::map<std::string, v1::HandoffState>> SegmentRows::HandoffStates(
    const std::string& datasource, const std::vector<std::string>& ids) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT handoff_state FROM segments WHERE id = ? "
                                               "AND datasource = ? AND used = 1"));
  std::map<std::string, v1::HandoffState> out;
  for (const std::string& id : ids) {
    q.Bind(1, id).Bind(2, datasource);
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (row) out[id] = static_cast<v1::HandoffState>(q.Int64(0));
    SLUICE_RETURN_IF_ERROR(q.Run());
  }
  return out;
}

}  // namespace sluice::supervisor
