// What RPC threads may read of a stream supervisor: the snapshot its loop
// republishes after every notice (the status, and what a checkpoint request
// is judged against), under its own mutex. Status adds what the metadata
// store knows now (committed offsets, segments, an Iceberg table's
// metadata location and activity).
//
// Thread-safe. The store and the Iceberg activity must outlive it.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_VIEW_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_VIEW_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/checkpoint_coordinator.h"
#include "supervisor/iceberg/iceberg_table_activity.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct SupervisorViewOptions {
  std::string datasource;
  MetadataStore* store = nullptr;
  // The publisher's record of commits to Iceberg tables; null: not shown.
  const IcebergTableActivity* iceberg_activity = nullptr;
};

class SupervisorView {
 public:
  // One publication by the loop.
  struct Snapshot {
    // group id -> base name and checkpoints of each reading group.
    ReadingCheckpoints reading;
    std::set<std::string> publishing;
    v1::SupervisorStatus status;
    // False until the groups are recovered from the metadata store (a new
    // leader adopting tasks): until then no group is known to be reading.
    bool recovered = false;
  };

  explicit SupervisorView(SupervisorViewOptions options);
  SupervisorView(const SupervisorView&) = delete;
  SupervisorView& operator=(const SupervisorView&) = delete;

  void Publish(Snapshot snapshot) ABSL_LOCKS_EXCLUDED(mu_);

  // The published status with the store's facts of now.
  v1::SupervisorStatus Status() ABSL_LOCKS_EXCLUDED(mu_);
  v1::SupervisorSummary Summary() ABSL_LOCKS_EXCLUDED(mu_);

  // A checkpoint request judged against the published snapshot
  // (AnswerCheckpointRequest); when the loop must handle it, `queue` is
  // called (with whether the answer is a success) before another snapshot
  // can be published.
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> AnswerCheckpoint(
      const v1::CheckpointDataSourceMetadataRequest& request,
      const std::function<void(bool ok)>& queue) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const SupervisorViewOptions options_;
  absl::Mutex mu_;
  Snapshot snapshot_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_VIEW_H_
