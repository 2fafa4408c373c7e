// SupervisorManager: the map of stream supervisors and the wiring of the
// parts (supervisor_manager.h).
#include "supervisor/supervisor_manager.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "supervisor/naming.h"

namespace sluice::supervisor {
namespace {

absl::Status NoSupervisor(const std::string& datasource) {
  return absl::NotFoundError(absl::StrCat("no supervisor is running for datasource ", datasource));
}

std::unique_ptr<StrandExecutor> Pool(int threads, const char* name, Clock* clock = nullptr) {
  StrandExecutorOptions pool;
  pool.threads = threads;
  if (clock != nullptr) pool.clock = clock;
  pool.name = name;
  return std::make_unique<StrandExecutor>(pool);
}

}  // namespace

SupervisorManager::SupervisorManager(SupervisorManagerOptions options)
    : options_(std::move(options)), instance_id_(RandomHex(16)) {
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
  iceberg_ = std::make_unique<IcebergUpkeep>(
      IcebergUpkeepOptions{.store = options_.store,
                           .deep_storage = options_.deep_storage,
                           .scratch_dir = options_.scratch_dir,
                           .orphan_min_age = options_.iceberg_orphan_min_age,
                           .supervisors = this,
                           .metrics = options_.metrics});
  compaction_ = std::make_unique<CompactionControl>(
      CompactionControlOptions{.store = options_.store,
                               .deep_storage = options_.deep_storage,
                               .clock = options_.clock,
                               .scratch_dir = options_.scratch_dir,
                               .instance_id = instance_id_,
                               .table_locks = iceberg_->locks(),
                               .supervisors = this,
                               .metrics = options_.metrics});
  loops_ = Pool(options_.loop_threads, "supervisor loops", options_.clock);
  queries_ = Pool(options_.stream_query_threads, "stream queries");  // real time, as they are
  task_rpcs_ = Pool(options_.task_rpc_threads, "task rpcs");
  HousekeepingOptions housekeeping;
  housekeeping.store = options_.store;
  housekeeping.deep_storage = options_.deep_storage;
  housekeeping.clock = options_.clock;
  housekeeping.scratch_dir = options_.scratch_dir;
  housekeeping.metrics = options_.metrics;
  housekeeping.heartbeat_interval = options_.heartbeat_interval;
  housekeeping.handoff_period = options_.handoff_period;
  housekeeping.reverify_period = options_.reverify_period;
  housekeeping.reverify_max_segments = options_.reverify_max_segments;
  housekeeping.reverify_max_bytes = options_.reverify_max_bytes;
  housekeeping.pending_segment_retention = options_.pending_segment_retention;
  housekeeping.replaced_segment_retention = options_.replaced_segment_retention;
  housekeeping.registry = registry_.get();
  housekeeping.reports = reports_.get();
  housekeeping.supervisors = this;
  housekeeping.iceberg = iceberg_.get();
  housekeeping_ = std::make_unique<Housekeeping>(std::move(housekeeping));
  protocol_ = std::make_unique<WorkerProtocol>(
      WorkerProtocolOptions{.store = options_.store,
                            .deep_storage = options_.deep_storage,
                            .clock = options_.clock,
                            .scratch_dir = options_.scratch_dir,
                            .loop_timeout = options_.loop_timeout,
                            .metrics = options_.metrics,
                            .supervisors = this,
                            .reports = reports_.get(),
                            .handoff = housekeeping_->handoff_verifier(),
                            .iceberg = iceberg_.get()});
  specs_ = std::make_unique<SpecLifecycle>(SpecLifecycleOptions{.store = options_.store,
                                                                .clock = options_.clock,
                                                                .loop_timeout = options_.loop_timeout,
                                                                .kafka_policy = options_.kafka_policy,
                                                                .supervisors = this});
  reads_ = std::make_unique<AdminReads>(AdminReadsOptions{.store = options_.store,
                                                          .supervisors = this,
                                                          .registry = registry_.get(),
                                                          .reports = reports_.get(),
                                                          .compaction = compaction_.get()});
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
  for (SpecRecord& spec : specs) SLUICE_RETURN_IF_ERROR(Start(std::move(spec)));
  LOG(INFO) << "[supervisor] instance " << instance_id_ << ": " << specs.size()
            << " active supervisors, " << workers.size() << " known workers";
  if (options_.metrics != nullptr) {
    RunningSupervisors* supervisors = this;
    gauges_ = std::make_unique<ScrapeGauges>(options_.metrics, supervisors, registry_.get());
  }
  if (options_.housekeeping) housekeeping_->Start();
  compaction_->Start();
  return absl::OkStatus();
}

SupervisorManager::~SupervisorManager() {
  gauges_.reset();  // waits for a running scrape
  housekeeping_->Stop();
  compaction_.reset();  // a compaction under way finishes first
  std::map<std::string, std::shared_ptr<StreamSupervisor>> supervisors;
  {
    absl::MutexLock lock(&mu_);
    supervisors.swap(supervisors_);
  }
  supervisors.clear();
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

absl::Status SupervisorManager::Start(SpecRecord spec) {
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
  deps.iceberg_activity = iceberg_->activity();
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

}  // namespace sluice::supervisor
