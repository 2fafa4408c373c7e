#include "supervisor/store/metadata_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/store/metadata_schema.h"
#include "supervisor/store/postgres.h"
#include "supervisor/store/postgres_url.h"
#include "supervisor/store/sqlite.h"

namespace sluice::supervisor {
namespace {

// Steps `q` through every row, handing each to `read`; the first error
// (from the step or from `read`) stops. The one row loop of this file: the
// typed statements below only say how a row becomes a struct or proto.
template <typename Fn>
absl::Status ForEachRow(SqlStatement& q, Fn&& read) {
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return absl::OkStatus();
    SLUICE_RETURN_IF_ERROR(read(q));
  }
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  return ProtoToJson(message);
}

// Rows written by a newer version may carry fields this one does not know.
absl::Status FromJson(const std::string& json, google::protobuf::Message* message) {
  return ProtoFromJson(json, message, absl::StrCat("stored ", message->GetTypeName()),
                       {.ignore_unknown_fields = true, .error_code = absl::StatusCode::kDataLoss});
}

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

// ---- datasources and specs ----

absl::StatusOr<bool> StoreTxn::DatasourceExists(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT 1 FROM datasources WHERE datasource = ?"));
  q.Bind(1, datasource);
  return q.Step();
}

absl::Status StoreTxn::EnsureDatasource(const std::string& datasource, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("INSERT INTO datasources (datasource, "
                                               "created_at_ms) VALUES (?, ?) "
                                               "ON CONFLICT (datasource) DO NOTHING"));
  q.Bind(1, datasource).Bind(2, now_ms);
  return q.Run();
}

absl::StatusOr<int64_t> StoreTxn::InsertSpec(const std::string& datasource,
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
// Rows of (partition, offset or count), as an offset map.
absl::StatusOr<OffsetMap> ReadOffsetMap(SqlStatement& q) {
  OffsetMap out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    out[static_cast<int32_t>(q.Int64(0))] = q.Int64(1);
    return absl::OkStatus();
  }));
  return out;
}

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

absl::StatusOr<std::optional<SpecRecord>> StoreTxn::LatestSpec(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT datasource, version, created_at_ms, spec_json, terminated "
                           "FROM specs WHERE datasource = ? ORDER BY version DESC LIMIT 1"));
  q.Bind(1, datasource);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<SpecRecord>();
  SLUICE_ASSIGN_OR_RETURN(SpecRecord record, ReadSpecRow(q));
  return std::optional<SpecRecord>(std::move(record));
}

absl::StatusOr<std::vector<SpecRecord>> StoreTxn::SpecHistory(const std::string& datasource) {
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

absl::StatusOr<std::vector<SpecRecord>> StoreTxn::ActiveSpecs() {
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

// ---- the Iceberg SQL catalog ----

namespace {
constexpr char kIcebergCatalog[] = "sluice";
}  // namespace

absl::StatusOr<std::optional<std::string>> StoreTxn::IcebergMetadataLocation(
    const std::string& table_namespace, const std::string& table_name) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? "
                           "AND table_namespace = ? AND table_name = ?"));
  q.Bind(1, kIcebergCatalog).Bind(2, table_namespace).Bind(3, table_name);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<std::string>();
  if (q.IsNull(0)) return std::optional<std::string>(std::string());
  return std::optional<std::string>(q.Text(0));
}

absl::StatusOr<bool> StoreTxn::SwapIcebergMetadataLocation(
    const std::string& table_namespace, const std::string& table_name,
    const std::optional<std::string>& expected, const std::string& next) {
  if (expected.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("UPDATE iceberg_tables SET metadata_location = ?1, "
                             "previous_metadata_location = ?2 WHERE catalog_name = ?3 AND "
                             "table_namespace = ?4 AND table_name = ?5 AND "
                             "metadata_location = ?2"));
    q.Bind(1, next).Bind(2, *expected).Bind(3, kIcebergCatalog).Bind(4, table_namespace).Bind(
        5, table_name);
    SLUICE_RETURN_IF_ERROR(q.Run());
    return q.Changes() == 1;
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> current,
                          IcebergMetadataLocation(table_namespace, table_name));
  if (current.has_value()) return false;
  {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
                             "property_key, property_value) VALUES (?, ?, 'exists', 'true') "
                             "ON CONFLICT (catalog_name, namespace, property_key) DO NOTHING"));
    q.Bind(1, kIcebergCatalog).Bind(2, table_namespace);
    SLUICE_RETURN_IF_ERROR(q.Run());
  }
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO iceberg_tables (catalog_name, table_namespace, "
                           "table_name, metadata_location, previous_metadata_location, "
                           "iceberg_type) VALUES (?, ?, ?, ?, NULL, 'TABLE')"));
  q.Bind(1, kIcebergCatalog).Bind(2, table_namespace).Bind(3, table_name).Bind(4, next);
  SLUICE_RETURN_IF_ERROR(q.Run());
  return true;
}

absl::StatusOr<std::vector<std::string>> StoreTxn::IcebergNamespaces(const std::string& after,
                                                                    int limit) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT n FROM (SELECT namespace AS n FROM iceberg_namespace_properties "
                           "WHERE catalog_name = ?1 UNION SELECT table_namespace AS n FROM "
                           "iceberg_tables WHERE catalog_name = ?1) AS names WHERE n > ?2 "
                           "ORDER BY n LIMIT ?3"));
  q.Bind(1, kIcebergCatalog).Bind(2, after).Bind(3, limit);
  std::vector<std::string> names;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    names.push_back(q.Text(0));
  }
  return names;
}

absl::StatusOr<std::optional<std::map<std::string, std::string>>>
StoreTxn::IcebergNamespaceProperties(const std::string& table_namespace, int limit) {
  std::map<std::string, std::string> properties;
  {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("SELECT property_key, property_value FROM "
                             "iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? "
                             "ORDER BY property_key LIMIT ?"));
    q.Bind(1, kIcebergCatalog).Bind(2, table_namespace).Bind(3, limit);
    for (;;) {
      SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      properties[q.Text(0)] = q.Text(1);
    }
  }
  if (properties.empty()) {
    SLUICE_ASSIGN_OR_RETURN(
        auto q, db_->Prepare("SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND "
                             "table_namespace = ? LIMIT 1"));
    q.Bind(1, kIcebergCatalog).Bind(2, table_namespace);
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return std::optional<std::map<std::string, std::string>>();
  }
  return std::optional<std::map<std::string, std::string>>(std::move(properties));
}

absl::StatusOr<std::vector<std::string>> StoreTxn::IcebergTableNames(
    const std::string& table_namespace, const std::string& after, int limit) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND "
                           "table_namespace = ? AND (iceberg_type IS NULL OR iceberg_type = "
                           "'TABLE') AND table_name > ? ORDER BY table_name LIMIT ?"));
  q.Bind(1, kIcebergCatalog).Bind(2, table_namespace).Bind(3, after).Bind(4, limit);
  std::vector<std::string> names;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    names.push_back(q.Text(0));
  }
  return names;
}

// ---- commit metadata ----

absl::StatusOr<std::optional<std::string>> StoreTxn::CommitTopic(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT commit_topic FROM datasources WHERE datasource = ?"));
  q.Bind(1, datasource);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row || q.IsNull(0)) return std::optional<std::string>();
  return std::optional<std::string>(q.Text(0));
}

absl::StatusOr<OffsetMap> StoreTxn::CommittedOffsets(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT partition, next_offset FROM "
                                               "committed_offsets WHERE datasource = ?"));
  q.Bind(1, datasource);
  return ReadOffsetMap(q);
}

absl::Status StoreTxn::SetCommittedOffsets(const std::string& datasource, const std::string& topic,
                                           const OffsetMap& offsets, int64_t now_ms) {
  SLUICE_RETURN_IF_ERROR(EnsureDatasource(datasource, now_ms));
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

absl::StatusOr<OffsetMap> StoreTxn::RecordInitialOffsets(const std::string& datasource,
                                                         const std::string& topic,
                                                         const OffsetMap& offsets, int64_t now_ms) {
  SLUICE_RETURN_IF_ERROR(EnsureDatasource(datasource, now_ms));
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

absl::StatusOr<OffsetMap> StoreTxn::InitialOffsets(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT partition, start_offset FROM "
                                               "initial_offsets WHERE datasource = ?"));
  q.Bind(1, datasource);
  return ReadOffsetMap(q);
}

absl::Status StoreTxn::DeleteCommittedOffsets(const std::string& datasource,
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

absl::Status StoreTxn::RecordOffsetReset(const std::string& datasource, int32_t partition,
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

absl::StatusOr<std::vector<v1::OffsetReset>> StoreTxn::OffsetResets(
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

absl::StatusOr<OffsetMap> StoreTxn::OffsetResetCounts(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT partition, COUNT(*) FROM offset_resets "
                                               "WHERE datasource = ? GROUP BY partition"));
  q.Bind(1, datasource);
  return ReadOffsetMap(q);
}

// ---- idleness ----

absl::StatusOr<std::optional<IdleState>> StoreTxn::IdleStateOf(const std::string& datasource) {
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

absl::Status StoreTxn::SetIdleState(const std::string& datasource, const IdleState* state,
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

absl::StatusOr<std::optional<int32_t>> StoreTxn::AutoscaledTaskCount(
    const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("SELECT autoscaled_task_count FROM datasources WHERE datasource = ?"));
  q.Bind(1, datasource);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row || q.Int64(0) <= 0) return std::optional<int32_t>();
  return std::optional<int32_t>(static_cast<int32_t>(q.Int64(0)));
}

absl::StatusOr<int64_t> StoreTxn::RecordScaling(const std::string& datasource,
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

absl::StatusOr<std::vector<v1::ScalingDecision>> StoreTxn::ScalingDecisions(
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

absl::Status StoreTxn::ClearAutoscaledTaskCount(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE datasources SET autoscaled_task_count = 0 WHERE datasource = ?"));
  q.Bind(1, datasource);
  return q.Run();
}

// ---- stream partitions ----

absl::StatusOr<std::vector<v1::StreamPartition>> StoreTxn::StreamPartitions(
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

absl::Status StoreTxn::AddStreamPartitions(const std::string& datasource,
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

absl::StatusOr<std::optional<PendingSegment>> StoreTxn::FindPendingSegment(
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

absl::StatusOr<int64_t> StoreTxn::CountPendingSegments(const std::string& datasource,
                                                       const std::string& sequence_name) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT COUNT(*) FROM pending_segments WHERE "
                                               "datasource = ? AND sequence_name = ?"));
  q.Bind(1, datasource).Bind(2, sequence_name);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::InternalError("count query returned no row");
  return q.Int64(0);
}

absl::StatusOr<std::optional<PendingSegment>> StoreTxn::PendingSegmentById(const std::string& id) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare(
                  absl::StrCat("SELECT ", kPendingColumns, " FROM pending_segments WHERE id = ?")));
  q.Bind(1, id);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<PendingSegment>();
  return std::optional<PendingSegment>(ReadPendingRow(q));
}

absl::StatusOr<std::optional<std::string>> StoreTxn::IntervalVersion(const std::string& datasource,
                                                                     int64_t start_ms,
                                                                     int64_t end_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT version FROM interval_versions WHERE "
                                               "datasource = ? AND start_ms = ? AND end_ms = ?"));
  q.Bind(1, datasource).Bind(2, start_ms).Bind(3, end_ms);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(q.Text(0));
}

absl::Status StoreTxn::InsertIntervalVersion(const std::string& datasource, int64_t start_ms,
                                             int64_t end_ms, const std::string& version,
                                             int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO interval_versions (datasource, start_ms, end_ms, "
                           "version, created_at_ms) VALUES (?, ?, ?, ?, ?)"));
  q.Bind(1, datasource).Bind(2, start_ms).Bind(3, end_ms).Bind(4, version).Bind(5, now_ms);
  return q.Run();
}

absl::StatusOr<int32_t> StoreTxn::NextPartitionNum(const std::string& datasource, int64_t start_ms,
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

absl::Status StoreTxn::InsertPendingSegment(const PendingSegment& s, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO pending_segments (id, datasource, sequence_name, "
                           "start_ms, end_ms, version, partition_num, task_id, created_at_ms) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  q.Bind(1, s.id).Bind(2, s.datasource).Bind(3, s.sequence_name).Bind(4, s.start_ms);
  q.Bind(5, s.end_ms).Bind(6, s.version).Bind(7, s.partition_num).Bind(8, s.task_id);
  q.Bind(9, now_ms);
  return q.Run();
}

absl::StatusOr<int64_t> StoreTxn::DeletePendingSegmentsOfEndedGroups(int64_t ended_before_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("DELETE FROM pending_segments WHERE EXISTS (SELECT 1 FROM tasks t "
                           "JOIN task_groups g ON g.base_sequence_name = t.base_sequence_name "
                           "WHERE t.task_id = pending_segments.task_id AND "
                           "g.state IN ('DONE', 'ABANDONED') AND g.finished_at_ms < ?)"));
  q.Bind(1, ended_before_ms);
  SLUICE_RETURN_IF_ERROR(q.Run());
  return static_cast<int64_t>(q.Changes());
}

absl::StatusOr<int64_t> StoreTxn::DeletePendingSegmentsOfCommittedSequences(
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

// ---- commit log and segments ----

absl::StatusOr<std::optional<v1::CommittedSequence>> StoreTxn::CommittedSequence(
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

absl::StatusOr<int64_t> StoreTxn::InsertCommittedSequence(
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

absl::StatusOr<bool> StoreTxn::SegmentExists(const std::string& id) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT 1 FROM segments WHERE id = ?"));
  q.Bind(1, id);
  return q.Step();
}

absl::Status StoreTxn::InsertSegment(const v1::SegmentDescriptor& s, const std::string& sha256,
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

absl::Status StoreTxn::ReplaceSegments(const std::string& datasource,
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
StoreTxn::ReplacedSegmentFilesToRemove(int64_t replaced_before_ms, int limit) {
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

absl::Status StoreTxn::SetSegmentFileRemoved(const std::string& id, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE segments SET file_removed_at_ms = ? WHERE id = ? AND used = 0"));
  q.Bind(1, now_ms).Bind(2, id);
  return q.Run();
}

absl::StatusOr<std::vector<std::string>> StoreTxn::ReplacedBy(const std::string& id) {
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

absl::StatusOr<std::vector<std::string>> StoreTxn::UsedSegmentIds(
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

absl::StatusOr<std::vector<v1::CommittedSequence>> StoreTxn::CommitLog(
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

absl::StatusOr<std::vector<v1::SegmentDescriptor>> StoreTxn::ListSegments(
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

absl::StatusOr<int64_t> StoreTxn::CountSegments(const std::string& datasource) {
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

absl::StatusOr<std::vector<HandoffCandidate>> StoreTxn::HandoffCandidates(int limit) {
  return ReadCandidates(db_, "!=", "created_at_ms, id", limit);
}

absl::StatusOr<std::vector<HandoffCandidate>> StoreTxn::SegmentsToReverify(int limit) {
  return ReadCandidates(db_, "=", "verified_at_ms, id", limit);
}

absl::Status StoreTxn::SetVerifiedAt(const std::string& id, int64_t verified_at_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q,
                          db_->Prepare("UPDATE segments SET verified_at_ms = ? WHERE id = ?"));
  q.Bind(1, verified_at_ms).Bind(2, id);
  return q.Run();
}

absl::StatusOr<int64_t> StoreTxn::CountFailedSegments(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT count(*) FROM segments WHERE datasource = ? "
                                               "AND used = 1 AND handoff_state = ?"));
  q.Bind(1, datasource).Bind(2, static_cast<int64_t>(v1::HANDOFF_STATE_FAILED));
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  return row ? q.Int64(0) : 0;
}

absl::Status StoreTxn::SetHandoff(const std::string& id, v1::HandoffState state,
                                  int64_t verified_at_ms, int64_t handed_off_at_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("UPDATE segments SET handoff_state = ?, "
                                               "verified_at_ms = ?, handed_off_at_ms = ? "
                                               "WHERE id = ?"));
  q.Bind(1, static_cast<int64_t>(state)).Bind(2, verified_at_ms).Bind(3, handed_off_at_ms);
  q.Bind(4, id);
  return q.Run();
}

absl::StatusOr<int> StoreTxn::MarkLoaded(const std::string& datasource,
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

absl::StatusOr<std::map<std::string, v1::HandoffState>> StoreTxn::HandoffStates(
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

// ---- task groups ----

absl::Status StoreTxn::InsertTaskGroup(const TaskGroupRecord& g) {
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

absl::Status StoreTxn::AppendCheckpoint(const std::string& base, int32_t sequence_id,
                                        const OffsetMap& offsets, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO task_group_checkpoints (base_sequence_name, sequence_id, "
                           "offsets_json, created_at_ms) VALUES (?, ?, ?, ?)"));
  q.Bind(1, base).Bind(2, sequence_id).Bind(3, EncodeOffsets(offsets)).Bind(4, now_ms);
  return q.Run();
}

absl::Status StoreTxn::RemoveLatestCheckpoint(const std::string& base, int32_t sequence_id) {
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

absl::Status StoreTxn::SetGroupPublishing(const std::string& base, const OffsetMap& end,
                                          int64_t completion_deadline_ms) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("UPDATE task_groups SET state = 'PUBLISHING', end_offsets_json = ?, "
                           "completion_deadline_ms = ? WHERE base_sequence_name = ?"));
  q.Bind(1, EncodeOffsets(end)).Bind(2, completion_deadline_ms).Bind(3, base);
  SLUICE_RETURN_IF_ERROR(q.Run());
  if (q.Changes() != 1) return absl::NotFoundError(absl::StrCat("no task group ", base));
  return absl::OkStatus();
}

absl::Status StoreTxn::FinishGroup(const std::string& base, GroupState state,
                                   const std::string& reason, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("UPDATE task_groups SET state = ?, reason = ?, "
                                               "finished_at_ms = ? WHERE base_sequence_name = ?"));
  q.Bind(1, GroupStateName(state)).Bind(2, reason).Bind(3, now_ms).Bind(4, base);
  return q.Run();
}

absl::StatusOr<std::map<int32_t, OffsetMap>> StoreTxn::LoadCheckpoints(const std::string& base) {
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

absl::StatusOr<std::vector<TaskGroupRecord>> StoreTxn::LiveTaskGroups(
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

absl::StatusOr<std::optional<TaskGroupRecord>> StoreTxn::GetTaskGroup(const std::string& base) {
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

absl::Status StoreTxn::InsertTask(const TaskRecord& t) {
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

absl::Status StoreTxn::UpdateTask(const std::string& task_id, v1::TaskState state,
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

absl::StatusOr<std::optional<TaskRecord>> StoreTxn::GetTask(const std::string& task_id) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare(absl::StrCat("SELECT ", kTaskColumns, " FROM tasks WHERE task_id = ?")));
  q.Bind(1, task_id);
  SLUICE_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<TaskRecord>();
  SLUICE_ASSIGN_OR_RETURN(TaskRecord t, ReadTaskRow(q));
  return std::optional<TaskRecord>(std::move(t));
}

absl::StatusOr<std::vector<TaskRecord>> StoreTxn::ListTasks(const std::string& datasource,
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

absl::Status StoreTxn::UpsertWorker(const WorkerRecord& w) {
  SLUICE_ASSIGN_OR_RETURN(
      auto q, db_->Prepare("INSERT INTO workers (worker_id, address, capacity, registered_at_ms, "
                           "last_seen_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (worker_id) DO UPDATE "
                           "SET address = excluded.address, capacity = excluded.capacity, "
                           "registered_at_ms = excluded.registered_at_ms, "
                           "last_seen_ms = excluded.last_seen_ms"));
  q.Bind(1, w.worker_id).Bind(2, w.address).Bind(3, w.capacity).Bind(4, w.registered_at_ms);
  q.Bind(5, w.last_seen_ms);
  return q.Run();
}

absl::StatusOr<std::vector<WorkerRecord>> StoreTxn::ListWorkerRecords() {
  SLUICE_ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT worker_id, address, capacity, "
                                               "registered_at_ms, last_seen_ms FROM workers "
                                               "ORDER BY worker_id"));
  std::vector<WorkerRecord> out;
  SLUICE_RETURN_IF_ERROR(ForEachRow(q, [&](SqlStatement& q) -> absl::Status {
    WorkerRecord w;
    w.worker_id = q.Text(0);
    w.address = q.Text(1);
    w.capacity = static_cast<int32_t>(q.Int64(2));
    w.registered_at_ms = q.Int64(3);
    w.last_seen_ms = q.Int64(4);
    out.push_back(std::move(w));
    return absl::OkStatus();
  }));
  return out;
}

// ---- the store ----

namespace {

// SQLite writes its -wal and -shm files beside the database: the directory
// must be writable, not only the file. PERMISSION_DENIED (or
// FAILED_PRECONDITION on a read-only file system) naming the directory.
absl::Status CheckWritableDirectory(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (access(dir.c_str(), W_OK | X_OK) == 0) return absl::OkStatus();
  const int error = errno;
  const std::string message = absl::StrCat("the metadata store's directory ", dir,
                                           " is not writable by this process (uid ", getuid(),
                                           "): ", std::strerror(error));
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  return absl::FailedPreconditionError(message);
}

}  // namespace

namespace {

absl::StatusOr<std::unique_ptr<SqlConnection>> OpenSqlite(const MetadataStoreOptions& options,
                                                          int target) {
  SLUICE_RETURN_IF_ERROR(CheckWritableDirectory(options.path));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(options.path));
  SLUICE_RETURN_IF_ERROR(db->SetBusyTimeout(options.busy_timeout_ms));

  // Read before writing anything: a file that is not ours is refused untouched.
  SLUICE_ASSIGN_OR_RETURN(const int found, ReadSchemaVersion(db.get()));
  if (found > target) {
    return absl::FailedPreconditionError(absl::StrCat(
        options.path, " has schema version ", found, ", newer than the ", target,
        " this sluice-supervisor supports; refusing to open it (upgrade the supervisor)"));
  }
  if (options.quick_check && found > 0) {
    SLUICE_ASSIGN_OR_RETURN(std::string check, db->QueryText("PRAGMA quick_check"));
    if (check != "ok") {
      return absl::DataLossError(absl::StrCat(options.path, " fails PRAGMA quick_check (", check,
                                              "); refusing to open it"));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::string mode, db->QueryText("PRAGMA journal_mode = WAL"));
  if (mode != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(options.path, ": cannot switch to WAL journaling (got ", mode, ")"));
  }
  SLUICE_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = FULL"));
  SLUICE_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys = ON"));
  return std::unique_ptr<SqlConnection>(std::move(db));
}

absl::StatusOr<std::unique_ptr<SqlConnection>> OpenPostgres(const MetadataStoreOptions& options,
                                                            int target) {
  SLUICE_ASSIGN_OR_RETURN(PostgresConnectOptions connect,
                          ParsePostgresUrl(options.postgres_url));
  connect.lock_timeout_ms = options.busy_timeout_ms;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<PostgresDb> db, PostgresDb::Connect(connect));
  // Read before writing anything: a database that is not ours is refused untouched.
  SLUICE_ASSIGN_OR_RETURN(const int found, ReadSchemaVersion(db.get()));
  if (found > target) {
    return absl::FailedPreconditionError(absl::StrCat(
        db->description(), " has schema version ", found, ", newer than the ", target,
        " this sluice-supervisor supports; refusing to open it (upgrade the supervisor)"));
  }
  return std::unique_ptr<SqlConnection>(std::move(db));
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetadataStore>> MetadataStore::Open(MetadataStoreOptions options) {
  const bool postgres = !options.postgres_url.empty();
  if (postgres && !options.path.empty()) {
    return absl::InvalidArgumentError("metadata store: set a file path or a PostgreSQL URL, not both");
  }
  if (!postgres && options.path.empty()) {
    return absl::InvalidArgumentError("metadata store path is empty");
  }
  const int target =
      options.target_schema_version == 0 ? LatestSchemaVersion() : options.target_schema_version;
  if (target < 1 || target > LatestSchemaVersion()) {
    return absl::InvalidArgumentError(absl::StrCat("no schema version ", target));
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<SqlConnection> db,
                          postgres ? OpenPostgres(options, target) : OpenSqlite(options, target));
  SLUICE_RETURN_IF_ERROR(MigrateSchema(db.get(), target, NowMillis()));
  return std::unique_ptr<MetadataStore>(new MetadataStore(std::move(options), std::move(db)));
}

absl::Status MetadataStore::InTransaction(absl::FunctionRef<absl::Status(StoreTxn&)> body) {
  absl::MutexLock lock(&mu_);
  SLUICE_ASSIGN_OR_RETURN(auto txn, SqlTransaction::Begin(db_.get()));
  if (fence_.has_value()) {
    // Inside the transaction: under SERIALIZABLE (SQLite: the one writer) a
    // lease taken over concurrently either precedes this read (refused here)
    // or follows this whole transaction in the serial order.
    absl::Status fenced = CheckLeaderFence(db_.get(), *fence_);
    if (!fenced.ok()) {
      if (IsFenced(fenced)) {
        ++fenced_transactions_;
        if (on_fenced_) on_fenced_();
      }
      return fenced;
    }
  }
  StoreTxn store_txn(db_.get());
  SLUICE_RETURN_IF_ERROR(body(store_txn));
  return txn->Commit();
}

void MetadataStore::SetLeaderFence(std::optional<LeaderFence> fence,
                                   std::function<void()> on_fenced) {
  absl::MutexLock lock(&mu_);
  fence_ = std::move(fence);
  on_fenced_ = std::move(on_fenced);
}

int64_t MetadataStore::fenced_transactions() const {
  absl::MutexLock lock(&mu_);
  return fenced_transactions_;
}

absl::Status MetadataStore::InLeaseTransaction(
    absl::FunctionRef<absl::Status(SqlConnection*)> body) {
  absl::MutexLock lock(&mu_);
  SLUICE_ASSIGN_OR_RETURN(auto txn, SqlTransaction::Begin(db_.get()));
  SLUICE_RETURN_IF_ERROR(body(db_.get()));
  return txn->Commit();
}

absl::Status MetadataStore::InRetriedTransaction(
    absl::FunctionRef<absl::Status(StoreTxn&)> body) {
  constexpr int kAttempts = 5;
  absl::Status status;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    status = InTransaction(body);
    if (!IsSerializationFailure(status) && !IsUniqueViolation(status)) return status;
    // The winner has committed or is about to: a short, growing pause.
    absl::SleepFor(absl::Milliseconds(2 * attempt));
  }
  return status;
}

absl::StatusOr<std::string> MetadataStore::Pragma(const std::string& name) {
  if (dialect_ != SqlDialect::kSqlite) {
    return absl::UnimplementedError(
        absl::StrCat("PRAGMA ", name, ": the PostgreSQL metadata store has no pragmas"));
  }
  absl::MutexLock lock(&mu_);
  return db_->QueryText(absl::StrCat("PRAGMA ", name));
}

absl::StatusOr<int> MetadataStore::SchemaVersion() {
  absl::MutexLock lock(&mu_);
  return ReadSchemaVersion(db_.get());
}

}  // namespace sluice::supervisor
