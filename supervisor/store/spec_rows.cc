#include "supervisor/store/spec_rows.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/store/row_helpers.h"

namespace sluice::supervisor {

using store_rows::ForEachRow;
using store_rows::FromJson;
using store_rows::ToJson;

// ---- datasources and specs ----

absl::StatusOr<bool> SpecRows::DatasourceExists(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT 1 FROM datasources WHERE datasource = ?"));
  q.Bind(1, datasource);
  return q.Step();
}

absl::Status SpecRows::EnsureDatasource(const std::string& datasource, int64_t now_ms) {
  return store_rows::EnsureDatasourceRow(db_, datasource, now_ms);
}

absl::StatusOr<int64_t> SpecRows::InsertSpec(const std::string& datasource,
                                             const v1::SupervisorSpec& spec, bool terminated,
                                             int64_t now_ms) {
  SLUICE_RETURN_IF_ERROR(EnsureDatasource(datasource, now_ms));
  SLUICE_ASSIGN_OR_RETURN(std::string json, ToJson(spec));
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO specs (datasource, version, created_at_ms, spec_json, "
                           "terminated) SELECT ?1, coalesce(max(version), 0) + 1, ?2, ?3, ?4 "
                           "FROM specs WHERE datasource = ?1 RETURNING version"));
  q.Bind(1, datasource).Bind(2, now_ms).Bind(3, json).Bind(4, terminated ? 1 : 0);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::InternalError("spec insert returned no version");
  const int64_t version = q.Int64(0);
  SLUICE_RETURN_IF_ERROR(q.Run());
  return version;
}

namespace {
absl::StatusOr<SpecRecord> ReadSpecRow(SqlStatement& q) {
  SpecRecord record;
  record.datasource = q.Text(0);
  record.version = q.Int64(1);
  record.created_at_ms = q.Int64(2);
  SLUICE_RETURN_IF_ERROR(FromJson(q.Text(3), &record.spec));
  record.terminated = q.Int64(4) != 0;
  return record;
}
}  // namespace

absl::StatusOr<std::optional<SpecRecord>> SpecRows::LatestSpec(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT datasource, version, created_at_ms, spec_json, terminated "
                           "FROM specs WHERE datasource = ? ORDER BY version DESC LIMIT 1"));
  q.Bind(1, datasource);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<SpecRecord>();
  SLUICE_ASSIGN_OR_RETURN(SpecRecord record, ReadSpecRow(q));
  return std::optional<SpecRecord>(std::move(record));
}

absl::StatusOr<std::vector<SpecRecord>> SpecRows::SpecHistory(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT datasource, version, created_at_ms, spec_json, terminated "
                           "FROM specs WHERE datasource = ? ORDER BY version DESC"));
  q.Bind(1, datasource);
  std::vector<SpecRecord> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(SpecRecord record, ReadSpecRow(q));
    out.push_back(std::move(record));
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::vector<SpecRecord>> SpecRows::ActiveSpecs() {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT s.datasource, s.version, s.created_at_ms, s.spec_json, "
                           "s.terminated FROM specs s WHERE s.version = (SELECT max(version) "
                           "FROM specs WHERE datasource = s.datasource) AND s.terminated = 0 "
                           "ORDER BY s.datasource"));
  std::vector<SpecRecord> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(SpecRecord record, ReadSpecRow(q));
    out.push_back(std::move(record));
    return absl::OkStatus();
  }));
  return out;
}

// ---- idleness ----

absl::StatusOr<std::optional<IdleState>> SpecRows::IdleStateOf(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT idle_latest_offsets_json, idle_since_ms "
                                               "FROM datasources WHERE datasource = ?"));
  q.Bind(1, datasource);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row || q.IsNull(0)) return std::optional<IdleState>();
  IdleState state;
  SLUICE_ASSIGN_OR_RETURN(state.latest, DecodeOffsets(q.Text(0)));
  state.since_ms = q.Int64(1);
  return std::optional<IdleState>(std::move(state));
}

absl::Status SpecRows::SetIdleState(const std::string& datasource, const IdleState* state,
                                    int64_t now_ms) {
  SLUICE_RETURN_IF_ERROR(EnsureDatasource(datasource, now_ms));
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("UPDATE datasources SET idle_latest_offsets_json = "
                                               "?, idle_since_ms = ? WHERE datasource = ?"));
  if (state != nullptr) {
    q.Bind(1, EncodeOffsets(state->latest)).Bind(2, state->since_ms);
  } else {
    q.BindNull(1).Bind(2, int64_t{0});
  }
  q.Bind(3, datasource);
  return q.Run();
}

// ---- autoscaling ----

absl::StatusOr<std::optional<int32_t>> SpecRows::AutoscaledTaskCount(
    const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT autoscaled_task_count FROM datasources WHERE datasource = ?"));
  q.Bind(1, datasource);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row || q.Int64(0) <= 0) return std::optional<int32_t>();
  return std::optional<int32_t>(static_cast<int32_t>(q.Int64(0)));
}

absl::StatusOr<int64_t> SpecRows::RecordScaling(const std::string& datasource,
                                                const v1::ScalingDecision& decision) {
  SLUICE_RETURN_IF_ERROR(EnsureDatasource(datasource, decision.applied_at_ms()));
  SLUICE_ASSIGN_OR_RETURN(
      auto insert,
      db_->Prepare("INSERT INTO scaling_decisions (datasource, from_task_count, to_task_count, "
                   "reason, decided_at_ms, applied_at_ms) VALUES (?, ?, ?, ?, ?, ?) "
                   "RETURNING decision_id"));
  insert.Bind(1, datasource)
      .Bind(2, int64_t{decision.from_task_count()})
      .Bind(3, int64_t{decision.to_task_count()})
      .Bind(4, decision.reason())
      .Bind(5, decision.decided_at_ms())
      .Bind(6, decision.applied_at_ms());
  SLUICE_ASSIGN_OR_RETURN(bool row, insert.Step());
  if (!row) return absl::InternalError("INSERT INTO scaling_decisions returned no id");
  const int64_t id = insert.Int64(0);
  SLUICE_RETURN_IF_ERROR(insert.Run());
  SLUICE_ASSIGN_OR_RETURN(
      auto update,
      db_->Prepare("UPDATE datasources SET autoscaled_task_count = ? WHERE datasource = ?"));
  update.Bind(1, int64_t{decision.to_task_count()}).Bind(2, datasource);
  SLUICE_RETURN_IF_ERROR(update.Run());
  return id;
}

absl::StatusOr<std::vector<v1::ScalingDecision>> SpecRows::ScalingDecisions(
    const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT decision_id, from_task_count, to_task_count, reason, "
                           "decided_at_ms, applied_at_ms FROM scaling_decisions "
                           "WHERE datasource = ? ORDER BY decision_id"));
  q.Bind(1, datasource);
  std::vector<v1::ScalingDecision> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    v1::ScalingDecision& d = out.emplace_back();
    d.set_decision_id(q.Int64(0));
    d.set_from_task_count(static_cast<int32_t>(q.Int64(1)));
    d.set_to_task_count(static_cast<int32_t>(q.Int64(2)));
    d.set_reason(q.Text(3));
    d.set_decided_at_ms(q.Int64(4));
    d.set_applied_at_ms(q.Int64(5));
    return absl::OkStatus();
  }));
  return out;
}

absl::Status SpecRows::ClearAutoscaledTaskCount(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE datasources SET autoscaled_task_count = 0 WHERE datasource = ?"));
  q.Bind(1, datasource);
  return q.Run();
}

// ---- stream partitions ----

absl::StatusOr<std::vector<v1::StreamPartition>> SpecRows::StreamPartitions(
    const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT stream_partition, topic, kafka_partition FROM stream_partitions "
                           "WHERE datasource = ? ORDER BY stream_partition"));
  q.Bind(1, datasource);
  std::vector<v1::StreamPartition> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    v1::StreamPartition& p = out.emplace_back();
    p.set_id(static_cast<int32_t>(q.Int64(0)));
    p.set_topic(q.Text(1));
    p.set_partition(static_cast<int32_t>(q.Int64(2)));
    return absl::OkStatus();
  }));
  return out;
}

absl::Status SpecRows::AddStreamPartitions(const std::string& datasource,
                                           const std::vector<v1::StreamPartition>& added,
                                           int64_t now_ms) {
  if (added.empty()) return absl::OkStatus();
  SLUICE_RETURN_IF_ERROR(EnsureDatasource(datasource, now_ms));
  for (const v1::StreamPartition& p : added) {
    SLUICE_ASSIGN_OR_RETURN(
        auto exists,
        db_->Prepare("SELECT stream_partition, topic, kafka_partition FROM stream_partitions "
                     "WHERE datasource = ? AND (stream_partition = ? OR "
                     "(topic = ? AND kafka_partition = ?))"));
    exists.Bind(1, datasource)
        .Bind(2, int64_t{p.id()})
        .Bind(3, p.topic())
        .Bind(4, int64_t{p.partition()});
    SLUICE_ASSIGN_OR_RETURN(bool row, exists.Step());
    if (row) {
      return absl::AlreadyExistsError(absl::StrCat(
          "stream partition ", exists.Int64(0), " of ", datasource, " is stored as ",
          exists.Text(1), "[", exists.Int64(2), "]; cannot add ", p.id(), " = ", p.topic(), "[",
          p.partition(), "]"));
    }
    SLUICE_ASSIGN_OR_RETURN(
        auto insert,
        db_->Prepare("INSERT INTO stream_partitions (datasource, stream_partition, topic, "
                     "kafka_partition, first_seen_ms) VALUES (?, ?, ?, ?, ?)"));
    insert.Bind(1, datasource)
        .Bind(2, int64_t{p.id()})
        .Bind(3, p.topic())
        .Bind(4, int64_t{p.partition()})
        .Bind(5, now_ms);
    SLUICE_RETURN_IF_ERROR(insert.Run());
  }
  return absl::OkStatus();
}

}  // namespace sluice::supervisor
