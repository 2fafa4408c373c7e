#include "supervisor/supervisor_manager.h"

#include "supervisor/compaction/iceberg_replace.h"
#include "supervisor/compaction/replaced_segment_files.h"
#include "supervisor/compaction/table_upkeep.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/spec_secrets.h"
#include "common/granularity.h"
#include "common/metrics/catalog.h"
#include "common/names.h"
#include "common/request_limits.h"
#include "common/spec.h"
#include "common/status_macros.h"
#include "common/stream_partitions.h"
#include "supervisor/naming.h"
#include "supervisor/spec_admission.h"
#include "supervisor/spec_changes.h"
#include "supervisor/supervisor_gauges.h"
#include "supervisor/supervisor_reads.h"
#include "supervisor/task_claims.h"

namespace sluice::supervisor {
namespace {

absl::Status NoSupervisor(const std::string& datasource) {
  return absl::NotFoundError(absl::StrCat("no supervisor is running for datasource ", datasource));
}

HandoffVerifierOptions HandoffOptions(const SupervisorManagerOptions& options) {
  HandoffVerifierOptions handoff;
  handoff.store = options.store;
  handoff.deep_storage = options.deep_storage;
  handoff.clock = options.clock;
  handoff.scratch_dir = options.scratch_dir;
  handoff.metrics = options.metrics;
  return handoff;
}

UsedSegmentVerifierOptions ReverifyOptions(const SupervisorManagerOptions& options) {
  UsedSegmentVerifierOptions reverify;
  reverify.store = options.store;
  reverify.deep_storage = options.deep_storage;
  reverify.clock = options.clock;
  reverify.scratch_dir = options.scratch_dir;
  reverify.max_segments_per_pass = options.reverify_max_segments;
  reverify.max_bytes_per_pass = options.reverify_max_bytes;
  reverify.metrics = options.metrics;
  return reverify;
}

}  // namespace

// The datasource's admin slot, held for one operation (created on first use,
// dropped when no operation holds or waits for it). Not annotated for the
// thread-safety analysis: the mutex is found at run time.
class SupervisorManager::DatasourceAdminLock {
 public:
  DatasourceAdminLock(SupervisorManager* manager, const std::string& datasource)
      ABSL_NO_THREAD_SAFETY_ANALYSIS : manager_(manager), datasource_(datasource) {
    {
      absl::MutexLock lock(&manager_->admin_mu_);
      std::unique_ptr<AdminSlot>& slot = manager_->admin_slots_[datasource_];
      if (slot == nullptr) slot = std::make_unique<AdminSlot>();
      slot->users++;
      slot_ = slot.get();
    }
    slot_->mu.Lock();
  }
  ~DatasourceAdminLock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    slot_->mu.Unlock();
    absl::MutexLock lock(&manager_->admin_mu_);
    if (--slot_->users == 0) manager_->admin_slots_.erase(datasource_);
  }
  DatasourceAdminLock(const DatasourceAdminLock&) = delete;
  DatasourceAdminLock& operator=(const DatasourceAdminLock&) = delete;

 private:
  SupervisorManager* const manager_;
  const std::string datasource_;
  AdminSlot* slot_ = nullptr;
};

SupervisorManager::SupervisorManager(SupervisorManagerOptions options)
    : options_(std::move(options)),
      instance_id_(RandomHex(16)),
      publisher_({.store = options_.store,
                  .deep_storage = options_.deep_storage,
                  .clock = options_.clock,
                  .scratch_dir = options_.scratch_dir,
                  .on_replica_divergence =
                      [this](const ReplicaDivergence& d) { OnReplicaDivergence(d); },
                  .iceberg_activity = &iceberg_activity_,
                  .iceberg_table_locks = &iceberg_table_locks_,
                  .metrics = options_.metrics}),
      allocator_({options_.store, options_.clock}),
      handoff_(HandoffOptions(options_)),
      reverify_(ReverifyOptions(options_)) {
  if (options_.deep_storage != nullptr && options_.iceberg_orphan_min_age > absl::ZeroDuration()) {
    orphan_sweeper_ = std::make_unique<IcebergOrphanSweeper>(
        options_.deep_storage,
        IcebergOrphanSweepOptions{.min_age = options_.iceberg_orphan_min_age,
                                  .scratch_dir = options_.scratch_dir,
                                  .locks = &iceberg_table_locks_});
  }
  WorkerRegistryOptions registry;
  registry.clock = options_.clock;
  registry.heartbeat_interval = options_.heartbeat_interval;
  registry.min_lost_timeout = options_.min_worker_lost_timeout;
  registry_ = std::make_unique<WorkerRegistry>(registry);
  WorkerReportsOptions reports;
  reports.store = options_.store;
  reports.clock = options_.clock;
  reports.registry = registry_.get();
  reports.instance_id = instance_id_;
  reports.heartbeat_interval = options_.heartbeat_interval;
  reports.forward = [this](const std::string& datasource, const v1::TaskStatus& status) {
    if (auto supervisor = Running(datasource); supervisor.ok()) (*supervisor)->OnTaskStatus(status);
  };
  reports.run_all = [this] {
    for (auto& supervisor : All()) supervisor->RequestRun();
  };
  reports_ = std::make_unique<WorkerReports>(std::move(reports));
  StrandExecutorOptions loops;
  loops.threads = options_.loop_threads;
  loops.clock = options_.clock;
  loops.name = "supervisor loops";
  loops_ = std::make_unique<StrandExecutor>(loops);
  StrandExecutorOptions queries;
  queries.threads = options_.stream_query_threads;
  queries.name = "stream queries";  // real time, as the queries are
  queries_ = std::make_unique<StrandExecutor>(queries);
  StrandExecutorOptions task_rpcs;
  task_rpcs.threads = options_.task_rpc_threads;
  task_rpcs.name = "task rpcs";
  task_rpcs_ = std::make_unique<StrandExecutor>(task_rpcs);
}

absl::StatusOr<std::unique_ptr<SupervisorManager>> SupervisorManager::Create(
    SupervisorManagerOptions options) {
  if (options.store == nullptr || !options.task_client_factory ||
      !options.stream_metadata_factory) {
    return absl::InvalidArgumentError("SupervisorManager needs a store and client factories");
  }
  std::unique_ptr<SupervisorManager> manager(new SupervisorManager(std::move(options)));
  SLUICE_RETURN_IF_ERROR(manager->Init());
  return manager;
}

absl::Status SupervisorManager::Init() {
  std::vector<WorkerRecord> workers;
  std::vector<SpecRecord> specs;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(workers, txn.ListWorkerRecords());
    SLUICE_ASSIGN_OR_RETURN(specs, txn.ActiveSpecs());
    return absl::OkStatus();
  }));
  for (const WorkerRecord& worker : workers) registry_->Seed(worker);
  for (SpecRecord& spec : specs) SLUICE_RETURN_IF_ERROR(StartSupervisor(std::move(spec)));
  LOG(INFO) << "[supervisor] instance " << instance_id_ << ": " << specs.size()
            << " active supervisors, " << workers.size() << " known workers";
  if (options_.metrics != nullptr) RegisterGauges();
  if (options_.housekeeping) housekeeping_ = std::thread([this] { Housekeeping(); });
  StartCompaction();
  return absl::OkStatus();
}

absl::Status SupervisorManager::UpkeepIcebergTable(const v1::SupervisorSpec& spec) {
  TableUpkeepOptions upkeep;
  upkeep.store = options_.store;
  upkeep.deep_storage = options_.deep_storage;
  upkeep.scratch_dir = options_.scratch_dir;
  upkeep.locks = &iceberg_table_locks_;
  SLUICE_ASSIGN_OR_RETURN(TableUpkeepResult done,
                          sluice::supervisor::UpkeepIcebergTable(upkeep, spec,
                                                                 options_.clock->Now()));
  if (!done.expired.empty()) {
    compaction_activity_.SnapshotsExpired(spec.datasource(),
                                          static_cast<int64_t>(done.expired.size()));
    LOG(INFO) << "[supervisor] expired " << done.expired.size()
              << " snapshot(s) of the Iceberg table of " << spec.datasource();
  }
  if (done.manifests_created > 0) {
    LOG(INFO) << "[supervisor] merged " << done.manifests_replaced << " manifests of the Iceberg "
              << "table of " << spec.datasource() << " into " << done.manifests_created;
  }
  return absl::OkStatus();
}

std::vector<v1::SupervisorSpec> SupervisorManager::ActiveSpecs() {
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

void SupervisorManager::StartCompaction() {
  if (options_.deep_storage == nullptr) return;
  CompactorOptions compactor;
  compactor.store = options_.store;
  compactor.deep_storage = options_.deep_storage;
  compactor.scratch_dir = options_.scratch_dir + "/compaction-" + instance_id_;
  compactor.activity = &compaction_activity_;
  compactor.table_locks = &iceberg_table_locks_;
  compactor.metrics = options_.metrics;
  compactor.iceberg_stager =
      [this](const IntervalCompaction& compaction,
             const std::optional<std::string>& base,
             IcebergReplaceReuse* reuse) -> absl::StatusOr<std::optional<IcebergSwap>> {
    if (!base.has_value()) return std::nullopt;  // no table yet: nothing of it to replace
    SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, LatestSpec(compaction.datasource));
    const std::optional<IcebergTarget> target =
        IcebergTargetOf(latest.spec, *options_.deep_storage);
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
                            StageIcebergReplace(options_.deep_storage, options_.scratch_dir,
                                                *target, *base, compaction, replace, reuse));
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
  };
  compactor_ = std::make_unique<Compactor>(std::move(compactor));
  CompactionSchedulerOptions scheduler;
  scheduler.running_specs = [this] { return ActiveSpecs(); };
  scheduler.compact = [this](const v1::SupervisorSpec& spec,
                             const CompactionRequest& request) -> absl::Status {
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
  };
  scheduler.period = [](const v1::SupervisorSpec& spec) -> std::optional<absl::Duration> {
    if (!spec.has_compaction()) return std::nullopt;
    absl::StatusOr<CompactionPolicy> policy = ParseCompactionPolicy(spec);
    if (!policy.ok()) return std::nullopt;
    return policy->period;
  };
  scheduler.upkeep = [this](const v1::SupervisorSpec& spec) -> absl::Status {
    return UpkeepIcebergTable(spec);
  };
  compaction_scheduler_ = std::make_unique<CompactionScheduler>(std::move(scheduler));
  compaction_scheduler_->Start();
}

void SupervisorManager::RegisterGauges() {
  metrics::Registry* registry = options_.metrics;
  // Computed at scrape time, from the status each supervisor shows.
  auto statuses = [this] {
    std::vector<v1::SupervisorStatus> out;
    for (auto& supervisor : All()) out.push_back(supervisor->Status());
    return out;
  };
  gauges_.push_back(registry->AddGaugeCallback(
      metrics::kSupervisorPartitionLag, [statuses] { return PartitionLagSamples(statuses()); }));
  gauges_.push_back(registry->AddGaugeCallback(
      metrics::kSupervisorPartitionTimeLag,
      [statuses] { return PartitionTimeLagSamples(statuses()); }));
  gauges_.push_back(registry->AddGaugeCallback(
      metrics::kSupervisorTasks, [statuses] { return TaskStateSamples(statuses()); }));
  gauges_.push_back(registry->AddGaugeCallback(
      metrics::kSupervisorDatasourceHealthy,
      [statuses] { return DatasourceHealthSamples(statuses()); }));
  gauges_.push_back(registry->AddGaugeCallback(
      metrics::kSupervisorDatasourceState,
      [statuses] { return DatasourceStateSamples(statuses()); }));
  gauges_.push_back(registry->AddGaugeCallback(
      metrics::kSupervisorWorkers, [this] { return WorkerStateSamples(registry_->List()); }));
}

SupervisorManager::~SupervisorManager() {
  gauges_.clear();  // waits for a running scrape
  {
    absl::MutexLock lock(&housekeeping_mu_);
    stop_ = true;
  }
  if (housekeeping_.joinable()) housekeeping_.join();
  compaction_scheduler_.reset();  // a compaction under way finishes first
  std::map<std::string, std::shared_ptr<StreamSupervisor>> supervisors;
  {
    absl::MutexLock lock(&mu_);
    supervisors.swap(supervisors_);
  }
  supervisors.clear();
}

void SupervisorManager::Housekeeping() {
  absl::Time next_liveness = options_.clock->Now() + options_.heartbeat_interval;
  absl::Time next_handoff = options_.clock->Now() + options_.handoff_period;
  absl::Time next_cleanup = options_.clock->Now() + absl::Minutes(10);
  const bool reverify = options_.reverify_period > absl::ZeroDuration();
  absl::Time next_reverify = options_.clock->Now() + options_.reverify_period;
  while (true) {
    {
      absl::MutexLock lock(&housekeeping_mu_);
      auto stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(housekeeping_mu_) { return stop_; };
      if (options_.clock->AwaitWithDeadline(&housekeeping_mu_, absl::Condition(&stopped),
                                            std::min(next_liveness, next_handoff))) {
        return;
      }
    }
    const absl::Time now = options_.clock->Now();
    if (now >= next_liveness) {
      CheckWorkers();
      next_liveness = now + options_.heartbeat_interval;
    }
    if (now >= next_handoff) reports_->ForgetOld();
    if (now >= next_cleanup) {
      if (auto deleted = CleanUpPendingSegments(); !deleted.ok()) {
        LOG(WARNING) << "[supervisor] pending segment clean-up: " << deleted.status();
      } else if (*deleted > 0) {
        LOG(INFO) << "[supervisor] deleted " << *deleted << " pending segment allocation(s) of "
                  << "sequences committed, or of groups ended, more than "
                  << absl::FormatDuration(options_.pending_segment_retention) << " ago";
      }
      SweepIcebergOrphans(now);
      RemoveReplacedSegmentFilesOnce(now);
      next_cleanup = now + absl::Minutes(10);
    }
    if (now >= next_handoff && options_.deep_storage != nullptr) {
      if (auto pass = handoff_.VerifyOnce(); !pass.ok()) {
        LOG(WARNING) << "[supervisor] handoff verification: " << pass.status();
      }
      next_handoff = now + options_.handoff_period;
    }
    if (reverify && now >= next_reverify && options_.deep_storage != nullptr) {
      if (auto pass = reverify_.VerifyOnce(); !pass.ok()) {
        LOG(WARNING) << "[supervisor] used-segment verification: " << pass.status();
      }
      next_reverify = now + options_.reverify_period;
    }
  }
}

absl::StatusOr<int64_t> SupervisorManager::CleanUpPendingSegments() {
  const int64_t cutoff =
      options_.clock->NowMs() - absl::ToInt64Milliseconds(options_.pending_segment_retention);
  int64_t deleted = 0;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(deleted, txn.DeletePendingSegmentsOfCommittedSequences(cutoff));
    SLUICE_ASSIGN_OR_RETURN(int64_t ended, txn.DeletePendingSegmentsOfEndedGroups(cutoff));
    deleted += ended;
    return absl::OkStatus();
  }));
  return deleted;
}

int64_t SupervisorManager::RemoveReplacedSegmentFilesOnce(absl::Time now) {
  if (options_.deep_storage == nullptr ||
      options_.replaced_segment_retention <= absl::ZeroDuration()) {
    return 0;
  }
  absl::StatusOr<int64_t> removed = RemoveReplacedSegmentFiles(
      *options_.store, *options_.deep_storage, options_.replaced_segment_retention, now);
  if (!removed.ok()) {
    LOG(WARNING) << "[supervisor] removal of replaced segments' files: " << removed.status();
    return 0;
  }
  if (*removed > 0) {
    LOG(INFO) << "[supervisor] removed the files of " << *removed
              << " segment(s) a compaction replaced more than "
              << absl::FormatDuration(options_.replaced_segment_retention) << " ago";
  }
  return *removed;
}

int64_t SupervisorManager::SweepIcebergOrphans(absl::Time now) {
  if (orphan_sweeper_ == nullptr) return 0;
  int64_t total = 0;
  for (auto& supervisor : All()) {
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
        orphan_sweeper_->Sweep(key, table.metadata_location(), now, current_location);
    if (!removed.ok()) {
      LOG(WARNING) << "[supervisor] Iceberg orphan sweep of " << status.datasource() << ": "
                   << removed.status();
      continue;
    }
    if (*removed == 0) continue;
    LOG(INFO) << "[supervisor] removed " << *removed << " orphan file(s) of Iceberg table "
              << table.table_namespace() << "." << table.table_name() << " ("
              << status.datasource() << ")";
    iceberg_activity_.NoteOrphansRemoved(status.datasource(), *removed);
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

void SupervisorManager::CheckWorkers() {
  if (registry_->CheckLiveness().empty()) return;
  for (auto& supervisor : All()) supervisor->RequestRun();
}

void SupervisorManager::OnReplicaDivergence(const ReplicaDivergence& divergence) {
  if (options_.metrics != nullptr) {
    options_.metrics
        ->GetCounter(metrics::kSupervisorReplicaDivergences,
                     {{"datasource", divergence.datasource}})
        ->Increment();
  }
  std::shared_ptr<StreamSupervisor> supervisor;
  {
    absl::MutexLock lock(&mu_);
    auto it = supervisors_.find(divergence.datasource);
    if (it != supervisors_.end()) supervisor = it->second;
  }
  if (supervisor != nullptr) supervisor->NoteAlert(absl::DataLossError(divergence.Describe()));
}

StreamSupervisor* SupervisorManager::stream_supervisor(const std::string& datasource) {
  absl::MutexLock lock(&mu_);
  auto it = supervisors_.find(datasource);
  return it == supervisors_.end() ? nullptr : it->second.get();
}

std::vector<std::shared_ptr<StreamSupervisor>> SupervisorManager::All() {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<StreamSupervisor>> out;
  for (auto& [ds, supervisor] : supervisors_) out.push_back(supervisor);
  return out;
}

std::shared_ptr<StreamSupervisor> SupervisorManager::Take(const std::string& datasource) {
  absl::MutexLock lock(&mu_);
  auto it = supervisors_.find(datasource);
  if (it == supervisors_.end()) return nullptr;
  std::shared_ptr<StreamSupervisor> out = std::move(it->second);
  supervisors_.erase(it);
  return out;
}

absl::Status SupervisorManager::StartSupervisor(SpecRecord spec) {
  StreamSupervisorOptions deps;
  deps.store = options_.store;
  deps.registry = registry_.get();
  deps.clock = options_.clock;
  // Task clients learn which worker is at an address from the registry (the
  // per-worker credential).
  deps.task_client_factory = [factory = options_.task_client_factory,
                              registry = registry_.get()](ChatOptions chat) {
    chat.worker_at = [registry](const std::string& address) { return registry->WorkerAt(address); };
    return factory(chat);
  };
  deps.stream_metadata_factory = options_.stream_metadata_factory;
  deps.kafka_timeout = options_.kafka_timeout;
  deps.run_on_events = options_.run_on_events;
  deps.background_stream_queries = options_.background_stream_queries;
  deps.pauseless_checkpoints = options_.pauseless_checkpoints;
  deps.pauseless_margin = options_.pauseless_margin;
  // The publisher checks every pushed copy in full when it has deep storage.
  deps.publisher_decodes_segments = options_.deep_storage != nullptr;
  deps.iceberg_activity = &iceberg_activity_;
  deps.metrics = options_.metrics;
  deps.loops = loops_.get();
  deps.queries = queries_.get();
  deps.task_rpcs = task_rpcs_.get();
  const std::string datasource = spec.datasource;
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, StreamSupervisor::Start(deps, std::move(spec)));
  absl::MutexLock lock(&mu_);
  supervisors_[datasource] = std::move(supervisor);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<StreamSupervisor>> SupervisorManager::Running(
    const std::string& datasource) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(datasource));
  absl::MutexLock lock(&mu_);
  auto it = supervisors_.find(datasource);
  if (it == supervisors_.end()) return NoSupervisor(datasource);
  return it->second;
}

absl::StatusOr<SpecRecord> SupervisorManager::LatestSpec(const std::string& datasource) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(datasource));
  std::optional<SpecRecord> latest;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(latest, txn.LatestSpec(datasource));
    return absl::OkStatus();
  }));
  if (!latest) return absl::NotFoundError(absl::StrCat("unknown datasource ", datasource));
  return *std::move(latest);
}

// ---- admin ----

absl::StatusOr<v1::SubmitSupervisorResponse> SupervisorManager::Submit(
    const v1::SupervisorSpec& submitted) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(submitted.datasource()));
  DatasourceAdminLock admin(this, submitted.datasource());
  absl::StatusOr<SpecRecord> stored = LatestSpec(submitted.datasource());
  if (!stored.ok() && !absl::IsNotFound(stored.status())) return stored.status();
  SLUICE_ASSIGN_OR_RETURN(
      v1::SupervisorSpec spec,
      AdmitSpec(submitted, stored.ok() && !stored->terminated ? &stored->spec : nullptr,
                options_.kafka_policy));
  const std::string& ds = spec.datasource();
  std::shared_ptr<StreamSupervisor> running = Running(ds).value_or(nullptr);
  std::optional<SpecRecord> latest;
  std::optional<std::string> commit_topic;
  OffsetMap committed;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(latest, txn.LatestSpec(ds));
    SLUICE_ASSIGN_OR_RETURN(commit_topic, txn.CommitTopic(ds));
    SLUICE_ASSIGN_OR_RETURN(committed, txn.CommittedOffsets(ds));
    return absl::OkStatus();
  }));
  v1::SubmitSupervisorResponse response;
  const bool live = latest && !latest->terminated;
  const std::vector<std::string> changed =
      live ? ChangedSpecFields(latest->spec, spec) : std::vector<std::string>();
  for (const std::string& field : changed) response.add_changed_fields(field);
  if (live && changed.empty() && running) {
    *response.mutable_spec() = RedactedSpec(spec);
    response.set_version(latest->version);
    response.set_unchanged(true);
    response.set_update(v1::SPEC_UPDATE_UNCHANGED);
    return response;
  }
  SLUICE_RETURN_IF_ERROR(CheckTopicSwitch(ds, commit_topic, committed, StreamNameOf(spec.io_config())));
  int64_t version = 0;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(version, txn.InsertSpec(ds, spec, false, options_.clock->NowMs()));
    return absl::OkStatus();
  }));
  SpecRecord record;
  record.datasource = ds;
  record.version = version;
  record.created_at_ms = options_.clock->NowMs();
  record.spec = spec;
  v1::SpecUpdate update = v1::SPEC_UPDATE_CREATED;
  if (running && live && AppliesLive(changed)) {
    running->UpdateSpec(record);
    update = v1::SPEC_UPDATE_APPLIED_LIVE;
  } else {
    if (running) {
      LOG(INFO) << "[supervisor " << ds << "] spec version " << version
                << " replaces the running one (" << absl::StrJoin(changed, ", ")
                << " changed): finishing its groups first";
      Take(ds)->StopGracefully();
      running.reset();
      update = v1::SPEC_UPDATE_RESTARTED;
    }
    SLUICE_RETURN_IF_ERROR(StartSupervisor(record));
  }
  LOG(INFO) << "[supervisor " << ds << "] spec version " << version << " submitted ("
            << StreamNameOf(spec.io_config()) << (spec.suspended() ? ", suspended" : "")
            << (update == v1::SPEC_UPDATE_APPLIED_LIVE
                    ? absl::StrCat(", applied live: ", absl::StrJoin(changed, ", "))
                    : "")
            << ")";
  *response.mutable_spec() = RedactedSpec(spec);
  response.set_version(version);
  response.set_replaced(update == v1::SPEC_UPDATE_RESTARTED);
  response.set_update(update);
  return response;
}

absl::StatusOr<v1::SubmitSupervisorResponse> SupervisorManager::Submit(
    const v1::SubmitSupervisorRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(SubmittedSpec submitted, SpecOfSubmitRequest(request));
  SLUICE_ASSIGN_OR_RETURN(v1::SubmitSupervisorResponse response, Submit(submitted.spec));
  if (!submitted.warnings.empty()) {
    LOG(INFO) << "[supervisor " << submitted.spec.datasource() << "] Druid spec taken with "
              << submitted.warnings.size() << " warning(s): " << submitted.warnings.front()
              << (submitted.warnings.size() > 1 ? ", ..." : "");
  }
  for (std::string& warning : submitted.warnings) response.add_warnings(std::move(warning));
  return response;
}

absl::StatusOr<v1::GetSupervisorResponse> SupervisorManager::Get(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, LatestSpec(datasource));
  if (latest.terminated) {
    return absl::NotFoundError(
        absl::StrCat("the supervisor of ", datasource, " was terminated (see its history)"));
  }
  v1::GetSupervisorResponse response;
  *response.mutable_spec() = RedactedSpec(latest.spec);
  response.set_version(latest.version);
  return response;
}

absl::StatusOr<v1::ListSupervisorsResponse> SupervisorManager::List() {
  v1::ListSupervisorsResponse response;
  for (auto& supervisor : All()) *response.add_supervisors() = supervisor->Summary();
  return response;
}

absl::StatusOr<v1::GetSupervisorHistoryResponse> SupervisorManager::History(
    const std::string& datasource) {
  return ReadSpecHistory(*options_.store, datasource);
}

absl::StatusOr<v1::SupervisorStatus> SupervisorManager::Status(const std::string& datasource) {
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, Running(datasource));
  v1::SupervisorStatus status = supervisor->Status();
  if (compactor_ != nullptr) {
    v1::CompactionStatus compaction;
    compaction_activity_.Fill(datasource, &compaction);
    absl::StatusOr<SpecRecord> spec = LatestSpec(datasource);
    compaction.set_enabled(spec.ok() && spec->spec.has_compaction());
    // Shown once the spec has a config or anything was compacted.
    if (compaction.enabled() || compaction.ByteSizeLong() > 0) {
      *status.mutable_compaction() = std::move(compaction);
    }
  }
  return status;
}

absl::StatusOr<v1::SupervisorSummary> SupervisorManager::SetSuspended(const std::string& datasource,
                                                                      bool suspended) {
  DatasourceAdminLock admin(this, datasource);
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, Running(datasource));
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, LatestSpec(datasource));
  if (latest.spec.suspended() != suspended) {
    latest.spec.set_suspended(suspended);
    SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
      SLUICE_ASSIGN_OR_RETURN(
          latest.version, txn.InsertSpec(datasource, latest.spec, false, options_.clock->NowMs()));
      return absl::OkStatus();
    }));
    latest.created_at_ms = options_.clock->NowMs();
    supervisor->UpdateSpec(latest);
  }
  SLUICE_RETURN_IF_ERROR(supervisor->Sync(options_.loop_timeout));
  return supervisor->Summary();
}

absl::StatusOr<v1::SupervisorSummary> SupervisorManager::Suspend(const std::string& datasource) {
  return SetSuspended(datasource, true);
}

absl::StatusOr<v1::SupervisorSummary> SupervisorManager::Resume(const std::string& datasource) {
  return SetSuspended(datasource, false);
}

absl::StatusOr<v1::SupervisorSummary> SupervisorManager::Reset(const std::string& datasource) {
  DatasourceAdminLock admin(this, datasource);
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, Running(datasource));
  supervisor->Reset();
  SLUICE_RETURN_IF_ERROR(supervisor->Sync(options_.loop_timeout));
  return supervisor->Summary();
}

absl::StatusOr<v1::SupervisorSummary> SupervisorManager::ResetOffsets(
    const v1::ResetOffsetsRequest& request) {
  // Negative partitions and offsets are beyond the request's bounds (checked
  // here too: the core does not rely on the gRPC layer for it).
  SLUICE_RETURN_IF_ERROR(CheckMessageLimits(request));
  if (request.offsets().empty()) return absl::InvalidArgumentError("offsets is empty");
  DatasourceAdminLock admin(this, request.datasource());
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, Running(request.datasource()));
  const v1::SupervisorStatus status = supervisor->Status();
  SLUICE_RETURN_IF_ERROR(CheckNoEndMarker(status, request.offsets()));
  SLUICE_RETURN_IF_ERROR(CheckPartitionsExist(status, request.offsets()));
  supervisor->ResetOffsets(FromProto(request.offsets()));
  SLUICE_RETURN_IF_ERROR(supervisor->Sync(options_.loop_timeout));
  return supervisor->Summary();
}

absl::StatusOr<v1::HandoffTaskGroupsResponse> SupervisorManager::Handoff(
    const v1::HandoffTaskGroupsRequest& request) {
  SLUICE_RETURN_IF_ERROR(CheckMessageLimits(request));
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, Running(request.datasource()));
  const std::vector<int32_t> groups(request.group_ids().begin(), request.group_ids().end());
  return supervisor->Handoff(groups, options_.loop_timeout);
}

absl::StatusOr<v1::SupervisorSummary> SupervisorManager::Terminate(const std::string& datasource) {
  DatasourceAdminLock admin(this, datasource);
  SLUICE_ASSIGN_OR_RETURN(auto running, Running(datasource));
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, LatestSpec(datasource));
  int64_t version = 0;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(version,
                            txn.InsertSpec(datasource, latest.spec, true, options_.clock->NowMs()));
    return absl::OkStatus();
  }));
  v1::SupervisorSummary summary = running->Summary();
  running.reset();
  Take(datasource)->StopGracefully();
  LOG(INFO) << "[supervisor " << datasource << "] terminated (tombstone version " << version
            << "); its groups finish publishing on their own";
  summary.set_state(v1::SUPERVISOR_STATE_STOPPING);
  summary.set_spec_version(version);
  summary.set_message("terminated: reading groups finalized, they publish what they read");
  return summary;
}

absl::StatusOr<v1::ListSegmentsResponse> SupervisorManager::ListSegments(
    const v1::ListSegmentsRequest& request) {
  return ReadSegments(*options_.store, request);
}

absl::StatusOr<v1::SupervisorServiceListTasksResponse> SupervisorManager::ListTasks(
    const v1::SupervisorServiceListTasksRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<TaskRecord> tasks, ReadTaskRecords(*options_.store, request));
  return reports_->TaskList(tasks, request);
}

v1::ListWorkersResponse SupervisorManager::ListWorkers() {
  v1::ListWorkersResponse response;
  for (v1::WorkerInfo& info : registry_->List()) *response.add_workers() = std::move(info);
  return response;
}

absl::StatusOr<v1::GetCommitLogResponse> SupervisorManager::CommitLog(
    const std::string& datasource) {
  return ReadCommitLog(*options_.store, datasource);
}

// ---- tasks ----

absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> SupervisorManager::Checkpoint(
    const v1::CheckpointDataSourceMetadataRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  SLUICE_RETURN_IF_ERROR(ValidateTaskId(request.task_id()));
  if (request.start_offsets().empty()) {
    return absl::InvalidArgumentError("start_offsets is empty");
  }
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, Running(request.datasource()));
  TaskClaim claim{request.datasource(), request.task_id()};
  claim.group_id = request.group_id();
  claim.base_sequence_name = request.base_sequence_name();
  claim.partitions = PartitionsOf(request.start_offsets());
  SLUICE_RETURN_IF_ERROR(CheckTaskClaim(options_.store, caller, claim).status());
  return supervisor->Checkpoint(request);
}

absl::StatusOr<v1::PublishSegmentsResponse> SupervisorManager::Publish(
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

absl::StatusOr<v1::PublishSegmentsResponse> SupervisorManager::PublishClaimed(
    const v1::PublishSegmentsRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidatePublishRequest(request));
  SLUICE_RETURN_IF_ERROR(LatestSpec(request.datasource()).status());  // NOT_FOUND first
  TaskClaim claim{request.datasource(), request.task_id()};
  claim.sequence_name = request.sequence_name();
  claim.partitions = PartitionsOf(request.start_offsets());
  SLUICE_ASSIGN_OR_RETURN(TaskRecord task, CheckTaskClaim(options_.store, caller, claim));
  SLUICE_RETURN_IF_ERROR(CheckSequenceRange(options_.store, task, request.sequence_name(),
                                            FromProto(request.start_offsets()),
                                            FromProto(request.end_offsets())));
  return publisher_.Publish(request, task.base_sequence_name);
}

absl::StatusOr<v1::GetPublishedSegmentsResponse> SupervisorManager::GetPublished(
    const v1::GetPublishedSegmentsRequest& request) {
  return publisher_.GetPublished(request);
}

absl::StatusOr<v1::AllocateSegmentResponse> SupervisorManager::Allocate(
    const v1::AllocateSegmentRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  SLUICE_ASSIGN_OR_RETURN(SpecRecord spec, LatestSpec(request.datasource()));
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

absl::StatusOr<v1::GetHandoffStatusResponse> SupervisorManager::HandoffStatus(
    const v1::GetHandoffStatusRequest& request) {
  return ReadHandoffStatus(*options_.store, request);
}

absl::StatusOr<v1::MarkSegmentsLoadedResponse> SupervisorManager::MarkLoaded(
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
    if (auto pass = handoff_.VerifyOnce(); !pass.ok()) {
      LOG(WARNING) << "[supervisor] handoff verification: " << pass.status();
    }
  }
  v1::MarkSegmentsLoadedResponse response;
  response.set_marked(marked);
  return response;
}

absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> SupervisorManager::OffsetOutOfRange(
    const v1::ReportOffsetOutOfRangeRequest& request, const auth::Caller& caller) {
  SLUICE_RETURN_IF_ERROR(ValidateDatasource(request.datasource()));
  SLUICE_RETURN_IF_ERROR(ValidateTaskId(request.task_id()));
  if (request.offsets().empty()) return absl::InvalidArgumentError("offsets is empty");
  SLUICE_ASSIGN_OR_RETURN(auto supervisor, Running(request.datasource()));
  TaskClaim claim{request.datasource(), request.task_id()};
  claim.partitions = PartitionsOf(request.offsets());
  SLUICE_RETURN_IF_ERROR(CheckTaskClaim(options_.store, caller, claim).status());
  return supervisor->OffsetOutOfRange(request, options_.loop_timeout);
}

// ---- workers ----

absl::StatusOr<v1::RegisterWorkerResponse> SupervisorManager::RegisterWorker(
    const v1::RegisterWorkerRequest& request, const auth::Caller& caller) {
  return reports_->RegisterWorker(request, caller);
}

absl::StatusOr<v1::WorkerHeartbeatResponse> SupervisorManager::Heartbeat(
    const v1::WorkerHeartbeatRequest& request, const auth::Caller& caller) {
  return reports_->Heartbeat(request, caller);
}

absl::Status SupervisorManager::ReportTaskStatus(const v1::ReportTaskStatusRequest& request,
                                                 const auth::Caller& caller) {
  return reports_->ReportTaskStatus(request, caller);
}

absl::StatusOr<v1::CompactDataSourceResponse> SupervisorManager::Compact(
    const v1::CompactDataSourceRequest& request) {
  if (request.has_interval() && request.interval().end_ms() <= request.interval().start_ms()) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval: the end must be after the start (got ", request.interval().start_ms(),
                     "/", request.interval().end_ms(), " ms)"));
  }
  SLUICE_RETURN_IF_ERROR(Running(request.datasource()).status());
  if (compactor_ == nullptr) {
    return absl::FailedPreconditionError(
        "compaction needs deep storage: this supervisor runs without --deep_storage");
  }
  SLUICE_ASSIGN_OR_RETURN(SpecRecord latest, LatestSpec(request.datasource()));
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
    SLUICE_RETURN_IF_ERROR(compaction_scheduler_->Enqueue(std::move(queued)));
  }
  return response;
}

}  // namespace sluice::supervisor
