// The supervisor's core: one StreamSupervisor per active datasource (the map
// it keeps), the worker registry and reports, the shared pools, and the parts
// it wires, each owning one job: SpecLifecycle (admin operations on specs),
// WorkerProtocol (the task workers' calls), AdminReads (read APIs),
// CompactionControl, IcebergUpkeep, Housekeeping (the periodic chores) and
// ScrapeGauges. Plain C++ returning absl::Status; the gRPC service is a thin
// layer over the parts, reached through the accessors.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_MANAGER_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_MANAGER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "common/kafka/property_policy.h"
#include "common/metrics/registry.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/admin_reads.h"
#include "supervisor/clock.h"
#include "supervisor/compaction_control.h"
#include "supervisor/housekeeping.h"
#include "supervisor/iceberg_upkeep.h"
#include "supervisor/running_supervisors.h"
#include "supervisor/scrape_gauges.h"
#include "supervisor/spec_lifecycle.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/strand_executor.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/stream_supervisor.h"
#include "supervisor/worker_protocol.h"
#include "supervisor/worker_registry.h"
#include "supervisor/worker_reports.h"

namespace sluice::supervisor {

struct SupervisorManagerOptions {
  MetadataStore* store = nullptr;
  DeepStorage* deep_storage = nullptr;
  Clock* clock = Clock::Real();
  TaskClientFactory task_client_factory;
  StreamMetadataFactory stream_metadata_factory;
  // What workers are told, and liveness (lost after 3 silent intervals, at
  // least min_worker_lost_timeout).
  absl::Duration heartbeat_interval = absl::Seconds(2);
  absl::Duration min_worker_lost_timeout = absl::Seconds(10);
  // Period of the handoff verifier, and where it downloads remote segment
  // copies to read them.
  absl::Duration handoff_period = absl::Seconds(2);
  std::string scratch_dir = "/tmp";
  // Re-verification of used, handed-off segments in deep storage
  // (used_segment_verifier.h): a pass every period, within its budget.
  // Zero: off.
  absl::Duration reverify_period = absl::Seconds(60);
  int reverify_max_segments = 200;
  int64_t reverify_max_bytes = int64_t{512} << 20;
  // Run the housekeeping thread (liveness, handoff); tests may drive both by
  // hand instead.
  bool housekeeping = true;
  absl::Duration kafka_timeout = absl::Seconds(10);
  // See StreamSupervisorOptions::run_on_events and background_stream_queries.
  bool run_on_events = true;
  bool background_stream_queries = true;
  // See StreamSupervisorOptions::pauseless_checkpoints and pauseless_margin.
  bool pauseless_checkpoints = true;
  PauselessMarginOptions pauseless_margin;
  // Where the supervisor's metrics go (common/metrics/catalog.h); null: none.
  // Not owned; must outlive the manager.
  metrics::Registry* metrics = nullptr;
  // Allocations (pending segments) of sequences committed, or of groups that
  // ended (DONE or ABANDONED), longer ago than this are deleted by
  // housekeeping (every 10 minutes); far beyond any completionTimeout, so no
  // replica of theirs is still running.
  absl::Duration pending_segment_retention = absl::Hours(24);
  // Files of an Iceberg datasource's table that no metadata document
  // references are removed by housekeeping (every 10 minutes) once seen so
  // for this long (iceberg_orphan_sweeper.h); it must exceed the longest
  // publish, from staging a snapshot to committing it. Zero: no sweeping.
  absl::Duration iceberg_orphan_min_age = absl::Hours(1);
  // The deep-storage files of segments a compaction replaced are removed by
  // housekeeping (every 10 minutes) this long after the replacement
  // (compaction/replaced_segment_files.h). Zero: never.
  absl::Duration replaced_segment_retention = absl::Hours(24);
  // How long an RPC waits for a stream supervisor's loop.
  absl::Duration loop_timeout = absl::Seconds(30);
  // Threads shared by every datasource's loop, and by their background
  // Kafka queries (strand_executor.h): the supervisor's threads do not grow
  // with its datasources. A loop step waits for the task RPCs of a
  // checkpoint round, a query for Kafka (kafka_timeout when unreachable).
  int loop_threads = 4;
  int stream_query_threads = 4;
  // Threads where RunTask calls wait for their workers (one attempt, a
  // short deadline), so a frozen worker never holds up a loop.
  int task_rpc_threads = 4;
  // What a spec's consumerProperties may say (common/kafka/property_policy.h),
  // checked at submit.
  kafka::PropertyPolicyOptions kafka_policy;
};

class SupervisorManager : private RunningSupervisors {
 public:
  // Seeds the worker registry from the store and starts a stream supervisor
  // for every active spec.
  static absl::StatusOr<std::unique_ptr<SupervisorManager>> Create(
      SupervisorManagerOptions options);
  // Stops the stream supervisors without touching their tasks.
  ~SupervisorManager() override;

  const std::string& instance_id() const { return instance_id_; }
  WorkerRegistry* registry() { return registry_.get(); }
  // The running stream supervisor of a datasource (null if none). Tests only.
  StreamSupervisor* stream_supervisor(const std::string& datasource) ABSL_LOCKS_EXCLUDED(mu_);

  // The parts, for the gRPC service (supervisor_service.cc) and tests.
  SpecLifecycle* specs() { return specs_.get(); }
  WorkerProtocol* protocol() { return protocol_.get(); }
  AdminReads* reads() { return reads_.get(); }
  CompactionControl* compaction() { return compaction_.get(); }
  IcebergUpkeep* iceberg() { return iceberg_.get(); }
  Housekeeping* housekeeping() { return housekeeping_.get(); }

 private:
  explicit SupervisorManager(SupervisorManagerOptions options);
  absl::Status Init();

  // RunningSupervisors, over supervisors_.
  absl::StatusOr<std::shared_ptr<StreamSupervisor>> Running(const std::string& datasource) override
      ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::shared_ptr<StreamSupervisor>> All() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Start(SpecRecord spec) override ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<StreamSupervisor> Take(const std::string& datasource) override
      ABSL_LOCKS_EXCLUDED(mu_);

  const SupervisorManagerOptions options_;
  const std::string instance_id_;
  std::unique_ptr<WorkerRegistry> registry_;
  // Registrations, heartbeats and task statuses (worker_reports.h).
  std::unique_ptr<WorkerReports> reports_;
  // Declared before the parts and the stream supervisors, which use it.
  std::unique_ptr<IcebergUpkeep> iceberg_;
  std::unique_ptr<CompactionControl> compaction_;

  // The pools of the stream supervisors (declared before them: they outlive
  // them).
  std::unique_ptr<StrandExecutor> loops_;
  std::unique_ptr<StrandExecutor> queries_;
  std::unique_ptr<StrandExecutor> task_rpcs_;

  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<StreamSupervisor>> supervisors_ ABSL_GUARDED_BY(mu_);

  // The parts that reach the map (declared after it: they go first).
  std::unique_ptr<Housekeeping> housekeeping_;
  std::unique_ptr<WorkerProtocol> protocol_;
  std::unique_ptr<SpecLifecycle> specs_;
  std::unique_ptr<AdminReads> reads_;
  std::unique_ptr<ScrapeGauges> gauges_;  // null without metrics
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_MANAGER_H_
