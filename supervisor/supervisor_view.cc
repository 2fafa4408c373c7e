// What RPC threads read of a stream supervisor (supervisor_view.h).
#include "supervisor/supervisor_view.h"

#include <optional>
#include <utility>

#include "common/status_macros.h"
#include "supervisor/stream_status.h"

namespace sluice::supervisor {

SupervisorView::SupervisorView(SupervisorViewOptions options) : options_(std::move(options)) {}

void SupervisorView::Publish(Snapshot snapshot) {
  absl::MutexLock lock(&mu_);
  snapshot_ = std::move(snapshot);
}

v1::SupervisorStatus SupervisorView::Status() {
  v1::SupervisorStatus status;
  {
    absl::MutexLock lock(&mu_);
    status = snapshot_.status;
  }
  const std::string& datasource = options_.datasource;
  OffsetMap committed;
  int64_t segments = 0;
  int64_t failing = 0;
  std::optional<std::string> metadata_location;
  options_.store
      ->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(datasource));
        SLUICE_ASSIGN_OR_RETURN(segments, txn.CountSegments(datasource));
        SLUICE_ASSIGN_OR_RETURN(failing, txn.CountFailedSegments(datasource));
        if (status.has_iceberg_table()) {
          SLUICE_ASSIGN_OR_RETURN(metadata_location, txn.IcebergMetadataLocation(
                                                         status.iceberg_table().table_namespace(),
                                                         status.iceberg_table().table_name()));
        }
        return absl::OkStatus();
      })
      .IgnoreError();
  if (status.has_iceberg_table()) {
    v1::IcebergTableStatus* table = status.mutable_iceberg_table();
    table->set_metadata_location(metadata_location.value_or(""));
    if (options_.iceberg_activity != nullptr) options_.iceberg_activity->Fill(datasource, table);
  }
  return WithStoredFacts(std::move(status), committed, segments, failing);
}

v1::SupervisorSummary SupervisorView::Summary() {
  absl::MutexLock lock(&mu_);
  return SummaryOf(options_.datasource, snapshot_.status);
}

absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> SupervisorView::AnswerCheckpoint(
    const v1::CheckpointDataSourceMetadataRequest& request,
    const std::function<void(bool ok)>& queue) {
  absl::MutexLock lock(&mu_);
  CheckpointRequestAnswer answer =
      AnswerCheckpointRequest(options_.datasource, snapshot_.recovered, snapshot_.reading,
                              snapshot_.publishing, request);
  if (answer.queue) queue(answer.response.ok());
  return std::move(answer.response);
}

}  // namespace sluice::supervisor
