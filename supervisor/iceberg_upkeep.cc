// IcebergUpkeep: the Iceberg tables' activity, locks and orphan sweeping
// (iceberg_upkeep.h).
#include "supervisor/iceberg_upkeep.h"

#include <optional>

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/metrics/catalog.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

IcebergUpkeep::IcebergUpkeep(IcebergUpkeepOptions options) : options_(std::move(options)) {
  if (options_.deep_storage != nullptr && options_.orphan_min_age > absl::ZeroDuration()) {
    sweeper_ = std::make_unique<IcebergOrphanSweeper>(
        options_.deep_storage, IcebergOrphanSweepOptions{.min_age = options_.orphan_min_age,
                                                         .scratch_dir = options_.scratch_dir,
                                                         .locks = &locks_});
  }
}

int64_t IcebergUpkeep::SweepOrphans(absl::Time now) {
  if (sweeper_ == nullptr) return 0;
  int64_t total = 0;
  for (auto& supervisor : options_.supervisors->All()) {
    const v1::SupervisorStatus status = supervisor->Status();
    if (!status.has_iceberg_table() || status.iceberg_table().metadata_location().empty()) continue;
    const v1::IcebergTableStatus& table = status.iceberg_table();
    const std::string key =
        absl::StrCat("iceberg/", table.table_namespace(), "/", table.table_name());
    const std::string table_namespace = table.table_namespace();
    const std::string table_name = table.table_name();
    auto current_location = [&]() -> absl::StatusOr<std::string> {
      std::optional<std::string> location;
      SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(location, txn.IcebergMetadataLocation(table_namespace, table_name));
        return absl::OkStatus();
      }));
      return location.value_or("");
    };
    absl::StatusOr<int64_t> removed =
        sweeper_->Sweep(key, table.metadata_location(), now, current_location);
    if (!removed.ok()) {
      LOG(WARNING) << "[supervisor] Iceberg orphan sweep of " << status.datasource() << ": "
                   << removed.status();
      continue;
    }
    if (*removed == 0) continue;
    LOG(INFO) << "[supervisor] removed " << *removed << " orphan file(s) of Iceberg table "
              << table.table_namespace() << "." << table.table_name() << " ("
              << status.datasource() << ")";
    activity_.NoteOrphansRemoved(status.datasource(), *removed);
    if (options_.metrics != nullptr) {
      options_.metrics
          ->GetCounter(metrics::kSupervisorIcebergOrphansRemoved,
                       {{"datasource", status.datasource()}})
          ->Increment(*removed);
    }
    total += *removed;
  }
  return total;
}

}  // namespace sluice::supervisor
