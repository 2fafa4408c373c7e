// WorkerProtocol: the task workers' calls, claim-checked (worker_protocol.h).
#include "supervisor/worker_protocol.h"

#include <vector>

#include <glog/logging.h>

#include "common/granularity.h"
#include "common/metrics/catalog.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/supervisor_reads.h"
#include "supervisor/task_claims.h"

namespace sluice::supervisor {

WorkerProtocol::WorkerProtocol(WorkerProtocolOptions options)
    : options_(std::move(options)),
      publisher_({.store = options_.store,
                  .deep_storage = options_.deep_storage,
                  .clock = options_.clock,
                  .scratch_dir = options_.scratch_dir,
                  .on_replica_divergence =
                      [this](const ReplicaDivergence& d) { OnReplicaDivergence(d); },
                  .iceberg_activity = options_.iceberg->activity(),
                  .iceberg_table_locks = options_.iceberg->locks(),
                  .metrics = options_.metrics}),
      allocator_({options_.store, options_.clock}) {}

void WorkerProtocol::OnReplicaDivergence(const ReplicaDivergence& divergence) {
  if (options_.metrics != nullptr) {
    options_.metrics
        ->GetCounter(metrics::kSupervisorReplicaDivergences,
                     {{"datasource", divergence.datasource}})
        ->Increment();
  }
  if (auto supervisor = options_.supervisors->Running(divergence.datasource); supervisor.ok()) {
    (*supervisor)->NoteAlert(absl::DataLossError(divergence.Describe()));
  }
}

// ---- tasks ----

absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> WorkerProtocol::Checkpoint(
    const v1::CheckpointDataSourceMetadataRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  SLUICE_RETURN_IF_ERROR(ValidateTaskId(request.task_id()));
  if (request.start_offsets().empty()) {
    return absl::InvalidArgumentError("start_offsets is empty");
  }
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, options_.supervisors->Running(request.datasource()));
  TaskClaim claim{request.datasource(), request.task_id()};
  claim.group_id = request.group_id();
  claim.base_sequence_name = request.base_sequence_name();
  claim.partitions = PartitionsOf(request.start_offsets());
  SLUICE_RETURN_IF_ERROR(CheckTaskClaim(options_.store, caller, claim).status());
  return supervisor->Checkpoint(request);
}

absl::StatusOr<v1::PublishSegmentsResponse> WorkerProtocol::Publish(
    const v1::PublishSegmentsRequest& request, const auth::Caller& caller) {
  absl::StatusOr<v1::PublishSegmentsResponse> response = PublishClaimed(request, caller);
  if (options_.metrics != nullptr) {
    // Only datasources that exist label a series (no cardinality from junk).
    const absl::StatusCode code = response.status().code();
    const bool known =
        code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kNotFound;
    const std::string datasource = known ? request.datasource() : "";
    options_.metrics
        ->GetCounter(metrics::kSupervisorPublishes,
                     {{"datasource", datasource}, {"code", absl::StatusCodeToString(code)}})
        ->Increment();
    if (response.ok()) {
      options_.metrics
          ->GetCounter(metrics::kSupervisorSegmentsPublished, {{"datasource", datasource}})
          ->Increment(response->inserted_segment_ids_size());
    }
  }
  return response;
}

absl::StatusOr<v1::PublishSegmentsResponse> WorkerProtocol::PublishClaimed(
    const v1::PublishSegmentsRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidatePublishRequest(request));
  // NOT_FOUND first.
  SLUICE_RETURN_IF_ERROR(ReadLatestSpec(*options_.store, request.datasource()).status());
  TaskClaim claim{request.datasource(), request.task_id()};
  claim.sequence_name = request.sequence_name();
  claim.partitions = PartitionsOf(request.start_offsets());
  SLUICE_ASSIGN_OR_RETURN(TaskRecord task, CheckTaskClaim(options_.store, caller, claim));
  SLUICE_RETURN_IF_ERROR(CheckSequenceRange(options_.store, task, request.sequence_name(),
                                            FromProto(request.start_offsets()),
                                            FromProto(request.end_offsets())));
  return publisher_.Publish(request, task.base_sequence_name);
}

absl::StatusOr<v1::GetPublishedSegmentsResponse> WorkerProtocol::GetPublished(
    const v1::GetPublishedSegmentsRequest& request) {
  return publisher_.GetPublished(request);
}

absl::StatusOr<v1::AllocateSegmentResponse> WorkerProtocol::Allocate(
    const v1::AllocateSegmentRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  SLUICE_ASSIGN_OR_RETURN(SpecRecord spec, ReadLatestSpec(*options_.store, request.datasource()));
  SLUICE_RETURN_IF_ERROR(ValidateTaskId(request.task_id()));
  TaskClaim claim{request.datasource(), request.task_id()};
  claim.sequence_name = request.sequence_name();
  SLUICE_ASSIGN_OR_RETURN(TaskRecord task, CheckTaskClaim(options_.store, caller, claim));
  SLUICE_RETURN_IF_ERROR(CheckSequenceStarted(options_.store, task, request.sequence_name()));
  SLUICE_ASSIGN_OR_RETURN(
      Granularity granularity,
      Granularity::Parse(spec.spec.data_schema().granularity_spec().segment_granularity()));
  return allocator_.Allocate(request, granularity);
}

absl::StatusOr<v1::GetHandoffStatusResponse> WorkerProtocol::HandoffStatus(
    const v1::GetHandoffStatusRequest& request) {
  return ReadHandoffStatus(*options_.store, request);
}

absl::StatusOr<v1::MarkSegmentsLoadedResponse> WorkerProtocol::MarkLoaded(
    const v1::MarkSegmentsLoadedRequest& request) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  if (request.segment_ids().empty()) return absl::InvalidArgumentError("segment_ids is empty");
  const std::vector<std::string> ids(request.segment_ids().begin(), request.segment_ids().end());
  int marked = 0;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(marked, txn.MarkLoaded(request.datasource(), ids, request.loader(),
                                                   options_.clock->NowMs()));
    return absl::OkStatus();
  }));
  LOG(INFO) << "[supervisor " << request.datasource() << "] loader " << request.loader()
            << " confirmed " << marked << " segments";
  if (options_.deep_storage != nullptr) {
    if (auto pass = options_.handoff->VerifyOnce(); !pass.ok()) {
      LOG(WARNING) << "[supervisor] handoff verification: " << pass.status();
    }
  }
  v1::MarkSegmentsLoadedResponse response;
  response.set_marked(marked);
  return response;
}

absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> WorkerProtocol::OffsetOutOfRange(
    const v1::ReportOffsetOutOfRangeRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  SLUICE_RETURN_IF_ERROR(ValidateTaskId(request.task_id()));
  if (request.offsets().empty()) return absl::InvalidArgumentError("offsets is empty");
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, options_.supervisors->Running(request.datasource()));
  TaskClaim claim{request.datasource(), request.task_id()};
  claim.partitions = PartitionsOf(request.offsets());
  SLUICE_RETURN_IF_ERROR(CheckTaskClaim(options_.store, caller, claim).status());
  return supervisor->OffsetOutOfRange(request, options_.loop_timeout);
}

// ---- workers ----

absl::StatusOr<v1::RegisterWorkerResponse> WorkerProtocol::RegisterWorker(
    const v1::RegisterWorkerRequest& request, const auth::Caller& caller) {
  return options_.reports->RegisterWorker(request, caller);
}

absl::StatusOr<v1::WorkerHeartbeatResponse> WorkerProtocol::Heartbeat(
    const v1::WorkerHeartbeatRequest& request, const auth::Caller& caller) {
  return options_.reports->Heartbeat(request, caller);
}

absl::Status WorkerProtocol::ReportTaskStatus(const v1::ReportTaskStatusRequest& request,
                                              const auth::Caller& caller) {
  return options_.reports->ReportTaskStatus(request, caller);
}

}  // namespace sluice::supervisor
