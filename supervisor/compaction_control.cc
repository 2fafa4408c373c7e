// CompactionControl: the compactor, its scheduler, table upkeep and
// CompactDataSource (compaction_control.h).
#include "supervisor/compaction_control.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/spec.h"
#include "common/status_macros.h"
#include "supervisor/compaction/iceberg_replace.h"
#include "supervisor/compaction/table_upkeep.h"
#include "supervisor/iceberg/iceberg_commit.h"
#include "supervisor/supervisor_reads.h"

namespace sluice::supervisor {

CompactionControl::CompactionControl(CompactionControlOptions options)
    : options_(std::move(options)) {}

CompactionControl::~CompactionControl() { scheduler_.reset(); }

absl::Status CompactionControl::UpkeepIcebergTable(const v1::SupervisorSpec& spec) {
  TableUpkeepOptions upkeep;
  upkeep.store = options_.store;
  upkeep.deep_storage = options_.deep_storage;
  upkeep.scratch_dir = options_.scratch_dir;
  upkeep.locks = options_.table_locks;
  SLUICE_ASSIGN_OR_RETURN(TableUpkeepResult done,
                          sluice::supervisor::UpkeepIcebergTable(upkeep, spec,
                                                                 options_.clock->Now()));
  if (!done.expired.empty()) {
    activity_.SnapshotsExpired(spec.datasource(), static_cast<int64_t>(done.expired.size()));
    LOG(INFO) << "[supervisor] expired " << done.expired.size()
              << " snapshot(s) of the Iceberg table of " << spec.datasource();
  }
  if (done.manifests_created > 0) {
    LOG(INFO) << "[supervisor] merged " << done.manifests_replaced << " manifests of the Iceberg "
              << "table of " << spec.datasource() << " into " << done.manifests_created;
  }
  return absl::OkStatus();
}

std::vector<v1::SupervisorSpec> CompactionControl::ActiveSpecs() {
  std::vector<SpecRecord> records;
  absl::Status read = options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(records, txn.ActiveSpecs());
    return absl::OkStatus();
  });
  if (!read.ok()) {
    LOG(WARNING) << "[supervisor] compaction: cannot read the active specs: " << read;
    return {};
  }
  std::vector<v1::SupervisorSpec> specs;
  for (SpecRecord& record : records) specs.push_back(std::move(record.spec));
  return specs;
}

absl::StatusOr<std::optional<IcebergSwap>> CompactionControl::StageIcebergSwap(
    const IntervalCompaction& compaction, const std::optional<std::string>& base,
    IcebergReplaceReuse* reuse) {
  if (!base.has_value()) return std::nullopt;  // no table yet: nothing of it to replace
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, ReadLatestSpec(*options_.store, compaction.datasource));
  const std::optional<IcebergTarget> target = IcebergTargetOf(latest.spec, *options_.deep_storage);
  if (!target.has_value()) return std::nullopt;
  IcebergReplaceOptions replace;
  replace.now_ms = options_.clock->NowMs();
  if (latest.spec.data_schema().granularity_spec().rollup()) {
    for (const v1::MetricSpec& metric : latest.spec.data_schema().metrics_spec()) {
      if (metric.type() == "count") {
        replace.count_column = metric.name();
        break;
      }
    }
  }
  SLUICE_ASSIGN_OR_RETURN(StagedIcebergReplace staged,
                          StageIcebergReplace(options_.deep_storage, options_.scratch_dir, *target,
                                              *base, compaction, replace, reuse));
  if (!staged.metadata_location.has_value()) {
    LOG(INFO) << "[supervisor] compaction of " << compaction.datasource
              << ": the Iceberg table keeps its files (" << staged.skipped << ")";
    return std::nullopt;
  }
  IcebergSwap swap;
  swap.table_namespace = target->table_namespace;
  swap.table_name = target->table_name;
  swap.expected = staged.base;
  swap.next = *staged.metadata_location;
  swap.snapshot_id = staged.snapshot_id;
  return swap;
}

absl::Status CompactionControl::CompactPass(const v1::SupervisorSpec& spec,
                                            const CompactionRequest& request) {
  CompactDatasourceOptions pass;
  pass.interval = request.interval;
  pass.ignore_skip_offset = request.on_demand;
  SLUICE_ASSIGN_OR_RETURN(CompactionPassResult result,
                          compactor_->CompactDatasource(spec, pass, options_.clock->Now()));
  if (!result.committed.empty() || !result.errors.empty()) {
    LOG(INFO) << "[supervisor] compaction of " << spec.datasource() << ": "
              << result.committed.size() << " interval(s) compacted, " << result.conflicts
              << " conflict(s), " << result.errors.size() << " failed"
              << (result.errors.empty() ? "" : ": " + result.errors.front());
  }
  return absl::OkStatus();
}

void CompactionControl::Start() {
  if (options_.deep_storage == nullptr) return;
  CompactorOptions compactor;
  compactor.store = options_.store;
  compactor.deep_storage = options_.deep_storage;
  compactor.scratch_dir = options_.scratch_dir + "/compaction-" + options_.instance_id;
  compactor.activity = &activity_;
  compactor.table_locks = options_.table_locks;
  compactor.metrics = options_.metrics;
  compactor.iceberg_stager = [this](const IntervalCompaction& compaction,
                                    const std::optional<std::string>& base,
                                    IcebergReplaceReuse* reuse) {
    return StageIcebergSwap(compaction, base, reuse);
  };
  compactor_ = std::make_unique<Compactor>(std::move(compactor));
  CompactionSchedulerOptions scheduler;
  scheduler.running_specs = [this] { return ActiveSpecs(); };
  scheduler.compact = [this](const v1::SupervisorSpec& spec, const CompactionRequest& request) {
    return CompactPass(spec, request);
  };
  scheduler.period = [](const v1::SupervisorSpec& spec) -> std::optional<absl::Duration> {
    if (!spec.has_compaction()) return std::nullopt;
    absl::StatusOr<CompactionPolicy> policy = ParseCompactionPolicy(spec);
    if (!policy.ok()) return std::nullopt;
    return policy->period;
  };
  scheduler.upkeep = [this](const v1::SupervisorSpec& spec) { return UpkeepIcebergTable(spec); };
  scheduler_ = std::make_unique<CompactionScheduler>(std::move(scheduler));
  scheduler_->Start();
}

void CompactionControl::FillStatus(const std::string& datasource, v1::SupervisorStatus* status) {
  if (compactor_ == nullptr) return;
  v1::CompactionStatus compaction;
  activity_.Fill(datasource, &compaction);
  absl::StatusOr<SpecRecord> spec = ReadLatestSpec(*options_.store, datasource);
  compaction.set_enabled(spec.ok() && spec->spec.has_compaction());
  // Shown once the spec has a config or anything was compacted.
  if (compaction.enabled() || compaction.ByteSizeLong() > 0) {
    *status->mutable_compaction() = std::move(compaction);
  }
}

absl::StatusOr<v1::CompactDataSourceResponse> CompactionControl::Compact(
    const v1::CompactDataSourceRequest& request) {
  if (request.has_interval() && request.interval().end_ms() <= request.interval().start_ms()) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval: the end must be after the start (got ", request.interval().start_ms(),
                     "/", request.interval().end_ms(), " ms)"));
  }
  SLUICE_RETURN_IF_ERROR(options_.supervisors->Running(request.datasource()).status());
  if (compactor_ == nullptr) {
    return absl::FailedPreconditionError(
        "compaction needs deep storage: this supervisor runs without --deep_storage");
  }
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, ReadLatestSpec(*options_.store, request.datasource()));
  CompactDatasourceOptions options;
  if (request.has_interval()) options.interval = request.interval();
  options.ignore_skip_offset = true;
  SLUICE_ASSIGN_OR_RETURN(CompactionPlan plan,
                          compactor_->Plan(latest.spec, options, options_.clock->Now()));
  v1::CompactDataSourceResponse response;
  for (const CompactionJob& job : plan.jobs) *response.add_queued() = job.interval;
  for (const v1::PendingCompaction& pending : plan.pending) {
    if (pending.reason() != "queued") *response.add_skipped() = pending;
  }
  if (!plan.jobs.empty()) {
    CompactionRequest queued;
    queued.datasource = request.datasource();
    queued.interval = options.interval;
    SLUICE_RETURN_IF_ERROR(scheduler_->Enqueue(std::move(queued)));
  }
  return response;
}

}  // namespace sluice::supervisor
