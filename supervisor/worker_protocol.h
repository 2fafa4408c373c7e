// WorkerProtocol: the task workers' side of SupervisorService: checkpoints,
// allocation, publishing, handoff status and loads, offsets out of range, and
// registrations, heartbeats and task statuses. Every call for a task checks
// the claim first (task_claims.h): the task exists, belongs to the named
// datasource, group and sequence, and runs on the caller's worker when the
// caller is bound to one; refusals are PERMISSION_DENIED. Owns the publisher
// and the allocator; routes the rest to the datasource's stream supervisor.
#ifndef SLUICE_SUPERVISOR_WORKER_PROTOCOL_H_
#define SLUICE_SUPERVISOR_WORKER_PROTOCOL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/auth/identity.h"
#include "common/deep_storage.h"
#include "common/metrics/registry.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/allocator.h"
#include "supervisor/clock.h"
#include "supervisor/handoff_verifier.h"
#include "supervisor/iceberg_upkeep.h"
#include "supervisor/publisher.h"
#include "supervisor/running_supervisors.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/worker_reports.h"

namespace sluice::supervisor {

struct WorkerProtocolOptions {
  MetadataStore* store = nullptr;
  // Null: the publisher checks no copy, MarkSegmentsLoaded verifies none.
  DeepStorage* deep_storage = nullptr;
  Clock* clock = Clock::Real();
  std::string scratch_dir = "/tmp";
  // How long an RPC waits for a stream supervisor's loop.
  absl::Duration loop_timeout = absl::Seconds(30);
  metrics::Registry* metrics = nullptr;  // null: none
  RunningSupervisors* supervisors = nullptr;
  WorkerReports* reports = nullptr;
  HandoffVerifier* handoff = nullptr;
  IcebergUpkeep* iceberg = nullptr;
};

class WorkerProtocol {
 public:
  explicit WorkerProtocol(WorkerProtocolOptions options);

  // ---- tasks ----
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> Checkpoint(
      const v1::CheckpointDataSourceMetadataRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::StatusOr<v1::PublishSegmentsResponse> Publish(
      const v1::PublishSegmentsRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::StatusOr<v1::GetPublishedSegmentsResponse> GetPublished(
      const v1::GetPublishedSegmentsRequest& request);
  absl::StatusOr<v1::AllocateSegmentResponse> Allocate(
      const v1::AllocateSegmentRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::StatusOr<v1::GetHandoffStatusResponse> HandoffStatus(
      const v1::GetHandoffStatusRequest& request);
  absl::StatusOr<v1::MarkSegmentsLoadedResponse> MarkLoaded(
      const v1::MarkSegmentsLoadedRequest& request);
  absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> OffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());

  // ---- workers ----
  absl::StatusOr<v1::RegisterWorkerResponse> RegisterWorker(
      const v1::RegisterWorkerRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::StatusOr<v1::WorkerHeartbeatResponse> Heartbeat(
      const v1::WorkerHeartbeatRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::Status ReportTaskStatus(const v1::ReportTaskStatusRequest& request,
                                const auth::Caller& caller = auth::Caller::Anonymous());

 private:
  // Publish after the task claim check (Publish adds the metrics).
  absl::StatusOr<v1::PublishSegmentsResponse> PublishClaimed(
      const v1::PublishSegmentsRequest& request, const auth::Caller& caller);
  // Publisher callback: the metric and an alert in the datasource's status.
  void OnReplicaDivergence(const ReplicaDivergence& divergence);

  const WorkerProtocolOptions options_;
  Publisher publisher_;
  Allocator allocator_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_WORKER_PROTOCOL_H_
