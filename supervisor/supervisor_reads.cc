#include "supervisor/supervisor_reads.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/names.h"
#include "common/spec_secrets.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"

namespace sluice::supervisor {

absl::StatusOr<SpecRecord> ReadLatestSpec(MetadataStore& store, const std::string& datasource) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(datasource));
  std::optional<SpecRecord> latest;
  SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(latest, txn.LatestSpec(datasource));
    return absl::OkStatus();
  }));
  if (!latest) return absl::NotFoundError(absl::StrCat("unknown datasource ", datasource));
  return *std::move(latest);
}

absl::StatusOr<v1::GetSupervisorHistoryResponse> ReadSpecHistory(MetadataStore& store,
                                                                 const std::string& datasource) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(datasource));
  std::vector<SpecRecord> history;
  SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(history, txn.SpecHistory(datasource));
    return absl::OkStatus();
  }));
  if (history.empty()) return absl::NotFoundError(absl::StrCat("unknown datasource ", datasource));
  v1::GetSupervisorHistoryResponse response;
  for (SpecRecord& record : history) {
    v1::SpecVersion* version = response.add_versions();
    version->set_version(record.version);
    version->set_created_at_ms(record.created_at_ms);
    *version->mutable_spec() = RedactedSpec(std::move(record.spec));
    version->set_terminated(record.terminated);
  }
  return response;
}

absl::StatusOr<v1::ListSegmentsResponse> ReadSegments(MetadataStore& store,
                                                     const v1::ListSegmentsRequest& request) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  if (request.limit() < 0) return absl::InvalidArgumentError("limit must be >= 0");
  if (request.has_interval() && request.interval().end_ms() <= request.interval().start_ms()) {
    return absl::InvalidArgumentError("interval is empty");
  }
  v1::ListSegmentsResponse response;
  SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(bool exists, txn.DatasourceExists(request.datasource()));
    if (!exists) {
      return absl::NotFoundError(absl::StrCat("unknown datasource ", request.datasource()));
    }
    SLUICE_ASSIGN_OR_RETURN(
        auto segments,
        txn.ListSegments(request.datasource(),
                         request.has_interval() ? &request.interval() : nullptr,
                         request.include_unused(), request.limit() == 0 ? 10000 : request.limit()));
    for (auto& s : segments) *response.add_segments() = std::move(s);
    return absl::OkStatus();
  }));
  return response;
}

absl::StatusOr<std::vector<TaskRecord>> ReadTaskRecords(
    MetadataStore& store, const v1::SupervisorServiceListTasksRequest& request) {
  if (!request.datasource().empty())
    SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  bool want_finished = request.include_finished();
  for (int state : request.states()) want_finished |= IsTerminal(static_cast<v1::TaskState>(state));
  std::vector<TaskRecord> tasks;
  SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) -> absl::Status {
    if (!request.datasource().empty()) {
      SLUICE_ASSIGN_OR_RETURN(bool exists, txn.DatasourceExists(request.datasource()));
      if (!exists) {
        return absl::NotFoundError(absl::StrCat("unknown datasource ", request.datasource()));
      }
    }
    SLUICE_ASSIGN_OR_RETURN(tasks, txn.ListTasks(request.datasource(), want_finished));
    return absl::OkStatus();
  }));
  return tasks;
}

v1::SupervisorServiceListTasksResponse TaskListResponse(
    const std::vector<TaskRecord>& tasks, const v1::SupervisorServiceListTasksRequest& request,
    const std::map<std::string, v1::TaskStatus>& reported) {
  std::set<int> states(request.states().begin(), request.states().end());
  v1::SupervisorServiceListTasksResponse response;
  for (const TaskRecord& task : tasks) {
    if (!states.empty() && !states.count(task.state)) continue;
    v1::SupervisorTaskRecord* out = response.add_tasks();
    out->set_task_id(task.task_id);
    out->set_datasource(task.datasource);
    out->set_group_id(task.group_id);
    out->set_worker_id(task.worker_id);
    out->set_state(task.state);
    out->set_base_sequence_name(task.base_sequence_name);
    out->set_created_at_ms(task.created_at_ms);
    out->set_updated_at_ms(task.updated_at_ms);
    out->set_error(task.error);
    ToProto(task.current_offsets, out->mutable_current_offsets());
    auto it = reported.find(task.task_id);
    if (it != reported.end()) {
      *out->mutable_current_offsets() = it->second.current_offsets();
      *out->mutable_row_stats() = it->second.row_stats();
      if (out->error().empty()) out->set_error(it->second.error());
    }
  }
  return response;
}

absl::StatusOr<v1::GetCommitLogResponse> ReadCommitLog(MetadataStore& store,
                                                       const std::string& datasource) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(datasource));
  v1::GetCommitLogResponse response;
  SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(bool exists, txn.DatasourceExists(datasource));
    if (!exists) return absl::NotFoundError(absl::StrCat("unknown datasource ", datasource));
    response.set_datasource(datasource);
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> topic, txn.CommitTopic(datasource));
    if (!topic) {
      SLUICE_ASSIGN_OR_RETURN(auto spec, txn.LatestSpec(datasource));
      if (spec) topic = StreamNameOf(spec->spec.io_config());
    }
    if (std::optional<std::string> pattern = TopicPatternOf(topic.value_or(""))) {
      response.set_topic_pattern(*pattern);
    } else {
      response.set_topic(topic.value_or(""));
    }
    SLUICE_ASSIGN_OR_RETURN(auto stream_partitions, txn.StreamPartitions(datasource));
    for (auto& p : stream_partitions) *response.add_stream_partitions() = std::move(p);
    SLUICE_ASSIGN_OR_RETURN(OffsetMap initial, txn.InitialOffsets(datasource));
    ToProto(initial, response.mutable_initial_offsets());
    SLUICE_ASSIGN_OR_RETURN(OffsetMap committed, txn.CommittedOffsets(datasource));
    ToProto(committed, response.mutable_committed_offsets());
    SLUICE_ASSIGN_OR_RETURN(auto sequences, txn.CommitLog(datasource));
    for (auto& s : sequences) *response.add_sequences() = std::move(s);
    SLUICE_ASSIGN_OR_RETURN(auto resets, txn.OffsetResets(datasource));
    for (auto& r : resets) *response.add_resets() = std::move(r);
    SLUICE_ASSIGN_OR_RETURN(auto scalings, txn.ScalingDecisions(datasource));
    for (auto& d : scalings) *response.add_scaling_decisions() = std::move(d);
    return absl::OkStatus();
  }));
  return response;
}

absl::StatusOr<v1::GetHandoffStatusResponse> ReadHandoffStatus(
    MetadataStore& store, const v1::GetHandoffStatusRequest& request) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  const std::vector<std::string> ids(request.segment_ids().begin(), request.segment_ids().end());
  std::map<std::string, v1::HandoffState> states;
  SLUICE_RETURN_IF_ERROR(store.InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(bool exists, txn.DatasourceExists(request.datasource()));
    if (!exists) {
      return absl::NotFoundError(absl::StrCat("unknown datasource ", request.datasource()));
    }
    SLUICE_ASSIGN_OR_RETURN(states, txn.HandoffStates(request.datasource(), ids));
    return absl::OkStatus();
  }));
  v1::GetHandoffStatusResponse response;
  for (const std::string& id : ids) {
    auto it = states.find(id);
    if (it == states.end()) continue;
    if (it->second == v1::HANDOFF_STATE_HANDED_OFF) response.add_handed_off_segment_ids(id);
    if (it->second == v1::HANDOFF_STATE_FAILED) response.add_failed_segment_ids(id);
  }
  return response;
}

}  // namespace sluice::supervisor
