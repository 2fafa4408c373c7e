// CompactionControl: the supervisor's side of compaction (docs/compaction.md):
// the compactor and its scheduler thread (with deep storage only), the
// Iceberg table upkeep after each automatic pass, CompactDataSource, and the
// compaction part of a datasource's status.
#ifndef SLUICE_SUPERVISOR_COMPACTION_CONTROL_H_
#define SLUICE_SUPERVISOR_COMPACTION_CONTROL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/deep_storage.h"
#include "common/metrics/registry.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "supervisor/compaction/compaction_activity.h"
#include "supervisor/compaction/compaction_scheduler.h"
#include "supervisor/compaction/compactor.h"
#include "supervisor/iceberg/iceberg_table_locks.h"
#include "supervisor/running_supervisors.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct CompactionControlOptions {
  MetadataStore* store = nullptr;
  // Null: no compaction (CompactDataSource is FAILED_PRECONDITION).
  DeepStorage* deep_storage = nullptr;
  Clock* clock = Clock::Real();
  // The compactor works under <scratch_dir>/compaction-<instance_id>.
  std::string scratch_dir = "/tmp";
  std::string instance_id;
  IcebergTableLocks* table_locks = nullptr;
  RunningSupervisors* supervisors = nullptr;
  metrics::Registry* metrics = nullptr;  // null: none
};

class CompactionControl {
 public:
  explicit CompactionControl(CompactionControlOptions options);
  // Stops the scheduler (a compaction under way finishes first).
  ~CompactionControl();

  // Creates the compactor and starts its scheduler (with deep storage only).
  void Start();

  // CompactDataSource: plans the datasource's compaction now and queues what
  // needs it.
  absl::StatusOr<v1::CompactDataSourceResponse> Compact(
      const v1::CompactDataSourceRequest& request);

  // Adds the compaction part to a datasource's status (once its spec has a
  // config or anything was compacted; never without deep storage).
  void FillStatus(const std::string& datasource, v1::SupervisorStatus* status);

 private:
  // Table upkeep after an automatic compaction pass: the Iceberg table's
  // snapshots past compaction.snapshotRetention expired, its piled-up
  // manifests merged (table_upkeep.h).
  absl::Status UpkeepIcebergTable(const v1::SupervisorSpec& spec);
  // The active specs, from the store (the scheduler reads them each tick).
  std::vector<v1::SupervisorSpec> ActiveSpecs();
  // The Iceberg half of a compaction commit (compactor.h's iceberg_stager).
  absl::StatusOr<std::optional<IcebergSwap>> StageIcebergSwap(
      const IntervalCompaction& compaction, const std::optional<std::string>& base,
      IcebergReplaceReuse* reuse);
  // One automatic pass over a datasource (the scheduler's compact).
  absl::Status CompactPass(const v1::SupervisorSpec& spec, const CompactionRequest& request);

  const CompactionControlOptions options_;
  CompactionActivity activity_;
  // Null without deep storage. The scheduler is declared last: its thread
  // stops first.
  std::unique_ptr<Compactor> compactor_;
  std::unique_ptr<CompactionScheduler> scheduler_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_CONTROL_H_
