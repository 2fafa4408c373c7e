// The supervisor's core: specs (submit / replace / suspend / resume /
// terminate / reset / reset offsets, surviving restarts), one StreamSupervisor
// per datasource, the worker registry, the task-facing protocol (checkpoints,
// allocation, publishing, handoff) and the read APIs. Plain C++ returning
// absl::Status; the gRPC service is a thin layer over it.
#ifndef SLUICE_SUPERVISOR_SUPERVISOR_MANAGER_H_
#define SLUICE_SUPERVISOR_SUPERVISOR_MANAGER_H_

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/auth/identity.h"
#include "common/deep_storage.h"
#include "common/kafka/property_policy.h"
#include "common/metrics/registry.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/allocator.h"
#include "supervisor/clock.h"
#include "supervisor/handoff_verifier.h"
#include "supervisor/used_segment_verifier.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/publisher.h"
#include "supervisor/strand_executor.h"
#include "supervisor/compaction/compaction_activity.h"
#include "supervisor/compaction/compaction_scheduler.h"
#include "supervisor/compaction/compactor.h"
#include "supervisor/iceberg_orphan_sweeper.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/stream_supervisor.h"
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

class SupervisorManager {
 public:
  // Seeds the worker registry from the store and starts a stream supervisor
  // for every active spec.
  static absl::StatusOr<std::unique_ptr<SupervisorManager>> Create(
      SupervisorManagerOptions options);
  // Stops the stream supervisors without touching their tasks.
  ~SupervisorManager();

  const std::string& instance_id() const { return instance_id_; }
  WorkerRegistry* registry() { return registry_.get(); }
  HandoffVerifier* handoff_verifier() { return &handoff_; }
  UsedSegmentVerifier* used_segment_verifier() { return &reverify_; }
  // The running stream supervisor of a datasource (null if none). Tests only.
  StreamSupervisor* stream_supervisor(const std::string& datasource) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- admin ----
  absl::StatusOr<v1::SubmitSupervisorResponse> Submit(const v1::SupervisorSpec& spec)
      ABSL_LOCKS_EXCLUDED(mu_);
  // SubmitSupervisor: the request's spec in either form (SpecOfSubmitRequest),
  // then Submit; a Druid spec's warnings are added to the answer.
  absl::StatusOr<v1::SubmitSupervisorResponse> Submit(const v1::SubmitSupervisorRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::GetSupervisorResponse> Get(const std::string& datasource);
  absl::StatusOr<v1::ListSupervisorsResponse> List() ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::GetSupervisorHistoryResponse> History(const std::string& datasource);
  absl::StatusOr<v1::SupervisorStatus> Status(const std::string& datasource)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::SupervisorSummary> Suspend(const std::string& datasource)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::SupervisorSummary> Resume(const std::string& datasource)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::SupervisorSummary> Reset(const std::string& datasource)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::SupervisorSummary> ResetOffsets(const v1::ResetOffsetsRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Early handoff of reading groups (StreamSupervisor::Handoff).
  absl::StatusOr<v1::HandoffTaskGroupsResponse> Handoff(
      const v1::HandoffTaskGroupsRequest& request) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::SupervisorSummary> Terminate(const std::string& datasource)
      ABSL_LOCKS_EXCLUDED(mu_);
  // CompactDataSource: plans the datasource's compaction now and queues
  // what needs it (docs/compaction.md).
  absl::StatusOr<v1::CompactDataSourceResponse> Compact(
      const v1::CompactDataSourceRequest& request) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::ListSegmentsResponse> ListSegments(const v1::ListSegmentsRequest& request);
  absl::StatusOr<v1::SupervisorServiceListTasksResponse> ListTasks(
      const v1::SupervisorServiceListTasksRequest& request);
  v1::ListWorkersResponse ListWorkers();
  absl::StatusOr<v1::GetCommitLogResponse> CommitLog(const std::string& datasource);

  // ---- tasks ----
  // Each of these acts for one task and checks the claim first
  // (supervisor/task_claims.h): the task exists, belongs to the named
  // datasource, group and sequence, and runs on the caller's worker when the
  // caller is bound to one. Refusals are PERMISSION_DENIED.
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> Checkpoint(
      const v1::CheckpointDataSourceMetadataRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous()) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::PublishSegmentsResponse> Publish(const v1::PublishSegmentsRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::StatusOr<v1::GetPublishedSegmentsResponse> GetPublished(
      const v1::GetPublishedSegmentsRequest& request);
  absl::StatusOr<v1::AllocateSegmentResponse> Allocate(const v1::AllocateSegmentRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::StatusOr<v1::GetHandoffStatusResponse> HandoffStatus(
      const v1::GetHandoffStatusRequest& request);
  absl::StatusOr<v1::MarkSegmentsLoadedResponse> MarkLoaded(
      const v1::MarkSegmentsLoadedRequest& request);
  absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> OffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous()) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- workers ----
  absl::StatusOr<v1::RegisterWorkerResponse> RegisterWorker(
      const v1::RegisterWorkerRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::StatusOr<v1::WorkerHeartbeatResponse> Heartbeat(const v1::WorkerHeartbeatRequest& request,
      const auth::Caller& caller = auth::Caller::Anonymous());
  absl::Status ReportTaskStatus(const v1::ReportTaskStatusRequest& request,
                                const auth::Caller& caller = auth::Caller::Anonymous());

  // One liveness check (lost workers make their supervisors run).
  void CheckWorkers() ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes the allocations of sequences committed, and of groups ended
  // (published or not), longer ago than pending_segment_retention
  // (housekeeping, every 10 minutes); how many.
  absl::StatusOr<int64_t> CleanUpPendingSegments();
  // One pass of the Iceberg orphan sweeper over the table of every running
  // Iceberg datasource (housekeeping, every 10 minutes): the files removed.
  // A table that cannot be swept is logged and skipped.
  int64_t SweepIcebergOrphans(absl::Time now);
  // Removes the files of segments a compaction replaced longer than
  // replaced_segment_retention ago (housekeeping, every 10 minutes): how many.
  int64_t RemoveReplacedSegmentFilesOnce(absl::Time now);

 private:
  // Publisher callback: the metric and an alert in the datasource's status.
  void OnReplicaDivergence(const ReplicaDivergence& divergence) ABSL_LOCKS_EXCLUDED(mu_);
  explicit SupervisorManager(SupervisorManagerOptions options);
  absl::Status Init();
  // Publish after the task claim check (Publish adds the metrics).
  absl::StatusOr<v1::PublishSegmentsResponse> PublishClaimed(
      const v1::PublishSegmentsRequest& request, const auth::Caller& caller);
  // Gauges computed at scrape time: lag, tasks by state, workers.
  void RegisterGauges();
  void Housekeeping();
  // Creates the compactor and its scheduler (with deep storage only).
  void StartCompaction();
  // Table upkeep after an automatic compaction pass: the Iceberg table's
  // snapshots past compaction.snapshotRetention expired, its piled-up
  // manifests merged (table_upkeep.h).
  absl::Status UpkeepIcebergTable(const v1::SupervisorSpec& spec);
  // The active specs, from the store (the scheduler reads them each tick).
  std::vector<v1::SupervisorSpec> ActiveSpecs();

  // Starts the stream supervisor of `spec` and adds it to the map.
  absl::Status StartSupervisor(SpecRecord spec) ABSL_LOCKS_EXCLUDED(mu_);
  // NOT_FOUND unless a supervisor runs for the datasource. The reference
  // keeps it alive while the caller uses it without holding mu_.
  absl::StatusOr<std::shared_ptr<StreamSupervisor>> Running(const std::string& datasource)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Removes the running supervisor of the datasource from the map.
  std::shared_ptr<StreamSupervisor> Take(const std::string& datasource) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::shared_ptr<StreamSupervisor>> All() ABSL_LOCKS_EXCLUDED(mu_);
  // The latest spec version (tombstones included); NOT_FOUND if none.
  absl::StatusOr<SpecRecord> LatestSpec(const std::string& datasource);
  // Appends a spec version with `suspended` set and hands it to the running
  // supervisor.
  absl::StatusOr<v1::SupervisorSummary> SetSuspended(const std::string& datasource, bool suspended)
      ABSL_LOCKS_EXCLUDED(mu_);

  const SupervisorManagerOptions options_;
  const std::string instance_id_;
  std::unique_ptr<WorkerRegistry> registry_;
  // Registrations, heartbeats and task statuses (worker_reports.h).
  std::unique_ptr<WorkerReports> reports_;
  // Declared before the publisher, which records into them.
  IcebergTableActivity iceberg_activity_;
  IcebergTableLocks iceberg_table_locks_;
  // Null without deep storage or with iceberg_orphan_min_age zero.
  std::unique_ptr<IcebergOrphanSweeper> orphan_sweeper_;
  Publisher publisher_;
  // Compaction (docs/compaction.md); the compactor and its scheduler are
  // null without deep storage. The scheduler is declared last of the three:
  // its thread stops first.
  CompactionActivity compaction_activity_;
  std::unique_ptr<Compactor> compactor_;
  std::unique_ptr<CompactionScheduler> compaction_scheduler_;
  Allocator allocator_;
  HandoffVerifier handoff_;
  UsedSegmentVerifier reverify_;

  // The pools of the stream supervisors (declared before them: they outlive
  // them).
  std::unique_ptr<StrandExecutor> loops_;
  std::unique_ptr<StrandExecutor> queries_;
  std::unique_ptr<StrandExecutor> task_rpcs_;

  // Admin operations that change a datasource's spec or supervisor run one
  // at a time per datasource (each sees the spec and supervisor the one
  // before it left), and those of different datasources at once: starting a
  // stream supervisor creates its Kafka client and reads the store, and N
  // datasources onboarded together must not wait for each other's.
  // DatasourceAdminLock holds the datasource's slot for an operation.
  class DatasourceAdminLock;
  struct AdminSlot {
    absl::Mutex mu;
    int users = 0;  // operations holding or waiting for `mu`
  };
  absl::Mutex admin_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Slots of the datasources with an admin operation under way or waiting.
  std::map<std::string, std::unique_ptr<AdminSlot>> admin_slots_ ABSL_GUARDED_BY(admin_mu_);
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<StreamSupervisor>> supervisors_ ABSL_GUARDED_BY(mu_);

  std::vector<std::unique_ptr<metrics::Registry::CallbackHandle>> gauges_;

  absl::Mutex housekeeping_mu_;
  bool stop_ ABSL_GUARDED_BY(housekeeping_mu_) = false;
  std::thread housekeeping_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SUPERVISOR_MANAGER_H_
