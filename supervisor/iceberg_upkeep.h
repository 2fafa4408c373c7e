// IcebergUpkeep: what the supervisor keeps for the Iceberg tables of its
// datasources: their activity (for the status), the locks that keep
// publishes, compaction commits and the orphan sweep of one table apart, and
// the orphan sweeper run by housekeeping (every 10 minutes).
#ifndef SLUICE_SUPERVISOR_ICEBERG_UPKEEP_H_
#define SLUICE_SUPERVISOR_ICEBERG_UPKEEP_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/metrics/registry.h"
#include "supervisor/iceberg/iceberg_orphan_sweeper.h"
#include "supervisor/iceberg/iceberg_table_activity.h"
#include "supervisor/iceberg/iceberg_table_locks.h"
#include "supervisor/running_supervisors.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct IcebergUpkeepOptions {
  MetadataStore* store = nullptr;
  // Null: no sweeping.
  DeepStorage* deep_storage = nullptr;
  std::string scratch_dir = "/tmp";
  // SupervisorManagerOptions::iceberg_orphan_min_age; zero: no sweeping.
  absl::Duration orphan_min_age = absl::Hours(1);
  RunningSupervisors* supervisors = nullptr;
  metrics::Registry* metrics = nullptr;  // null: none
};

class IcebergUpkeep {
 public:
  explicit IcebergUpkeep(IcebergUpkeepOptions options);

  IcebergTableActivity* activity() { return &activity_; }
  IcebergTableLocks* locks() { return &locks_; }

  // One pass of the orphan sweeper over the table of every running Iceberg
  // datasource: the files removed. A table that cannot be swept is logged
  // and skipped.
  int64_t SweepOrphans(absl::Time now);

 private:
  const IcebergUpkeepOptions options_;
  IcebergTableActivity activity_;
  IcebergTableLocks locks_;
  // Null without deep storage or with orphan_min_age zero.
  std::unique_ptr<IcebergOrphanSweeper> sweeper_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ICEBERG_UPKEEP_H_
