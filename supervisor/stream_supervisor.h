// The supervisor of one datasource: a serial loop that runs notices
// (checkpoint requests, resets, spec updates, stops) and periodic runs
// (partition discovery, task status, roll-over, completion timeouts,
// replacement of failed tasks, creation of groups and tasks, lag), in the
// spirit of Druid's SeekableStreamSupervisor (docs/protocol.md).
//
// The loop is a strand of a pool shared by every datasource
// (strand_executor.h): one notice or run per step, never two steps at once,
// so all group and task state is confined to the loop as if it had its own
// thread. RPC threads see a snapshot (SupervisorView) that the loop
// republishes after every notice, and talk to the loop by posting notices.
//
// The pieces it is built from, each owning one thing:
//   loop_state.h           the state the loop shares with its parts (spec,
//                          groups, detailed state, health)
//   loop_run.h             one run: its steps in order, recovery first
//   start_offset_policy.h  where a new group starts (pure)
//   task_actions.h         create / stop / kill tasks, end groups (one
//                          "a replica succeeded" path)
//   stream_status.h        the status and summary views (pure)
//   stream_queries.h       the background Kafka queries, with their own lock
//   stream_tracker.h       what is known of the stream (partitions,
//                          watermarks, reachability)
//   checkpoint_coordinator.h  checkpoint requests, handoffs and rounds
//   task_count_controller.h   the number of groups, autoscaling applied
//   roll_over.h            groups finishing, publishing, ending
//   group_creation.h       new groups and tasks, RunTask answers
//   offset_resets.h        reset, reset offsets, OffsetOutOfRange
//   group_recovery.h       groups and tasks after a restart
//   idle_handling.h        idleness observed, stored, acted on
//   supervisor_loop.h      the loop's strand and queue (notice_queue.h):
//                          posting, waiting, leaving
//   supervisor_pools.h     the loop's, queries' and RunTask pools
//   task_reports.h         the workers' task reports, applied each run
//   supervisor_view.h      what RPC threads read (status, checkpoints)
//   task_clients.h         the chat and RunTask clients
// Its methods are in stream_supervisor.cc.
#ifndef SLUICE_SUPERVISOR_STREAM_SUPERVISOR_H_
#define SLUICE_SUPERVISOR_STREAM_SUPERVISOR_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics/registry.h"
#include "common/spec.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/checkpoint_coordinator.h"
#include "supervisor/clock.h"
#include "supervisor/group_creation.h"
#include "supervisor/iceberg/iceberg_table_activity.h"
#include "supervisor/idle_handling.h"
#include "supervisor/loop_run.h"
#include "supervisor/loop_state.h"
#include "supervisor/offset_resets.h"
#include "supervisor/pauseless_margin.h"
#include "supervisor/roll_over.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/strand_executor.h"
#include "supervisor/stream_health.h"
#include "supervisor/stream_metadata.h"
#include "supervisor/stream_queries.h"
#include "supervisor/stream_status.h"
#include "supervisor/stream_tracker.h"
#include "supervisor/supervisor_loop.h"
#include "supervisor/supervisor_pools.h"
#include "supervisor/supervisor_view.h"
#include "supervisor/task_actions.h"
#include "supervisor/task_client.h"
#include "supervisor/task_clients.h"
#include "supervisor/task_count_controller.h"
#include "supervisor/task_group.h"
#include "supervisor/task_reports.h"
#include "supervisor/worker_registry.h"

namespace sluice::supervisor {

struct StreamSupervisorOptions {
  MetadataStore* store = nullptr;
  WorkerRegistry* registry = nullptr;
  Clock* clock = Clock::Real();
  TaskClientFactory task_client_factory;
  StreamMetadataFactory stream_metadata_factory;
  // Timeout of one Kafka metadata query.
  absl::Duration kafka_timeout = absl::Seconds(10);
  // Run when a task changes state (and periodically); tests turn event runs
  // off and drive runs with RunNow() for determinism.
  bool run_on_events = true;
  // Kafka metadata (partitions, watermarks for lag) is queried every period
  // by a background thread and handed to the loop, so a slow query (tens of
  // ms, seconds while Kafka is down) never holds up a checkpoint round
  // queued behind a periodic run. Off: the loop queries during its runs
  // (deterministic, for tests driven by RunNow()).
  bool background_stream_queries = true;
  // Checkpoint counts and latencies (common/metrics/catalog.h); null: none.
  metrics::Registry* metrics = nullptr;
  // Incremental checkpoints without pausing the replicas (docs/protocol.md
  // "Checkpoint round"); off: every round pauses them.
  bool pauseless_checkpoints = true;
  PauselessMarginOptions pauseless_margin;
  // See TaskActionsOptions::publisher_decodes_segments.
  bool publisher_decodes_segments = false;
  // The publisher's record of commits to Iceberg tables, shown in the
  // status of a datasource that names a table; null: not shown.
  const IcebergTableActivity* iceberg_activity = nullptr;
  // The pools the loop and the background Kafka queries run on, shared by
  // every datasource (not owned; they must outlive the supervisor). Null:
  // the supervisor makes a one-thread pool of its own (on `clock` for the
  // loop, the real clock for the queries).
  StrandExecutor* loops = nullptr;
  StrandExecutor* queries = nullptr;
  // Where RunTask calls wait for their worker, off the loop (a frozen
  // worker must not hold up the datasource); null: a pool of its own.
  StrandExecutor* task_rpcs = nullptr;
};

class StreamSupervisor {
 public:
  // Starts the loop; the first thing it does is recover groups and tasks
  // from the metadata store and the workers.
  static absl::StatusOr<std::unique_ptr<StreamSupervisor>> Start(StreamSupervisorOptions deps,
                                                                 SpecRecord spec);
  // Stops the loop without touching the tasks (they are adopted by the next
  // supervisor).
  ~StreamSupervisor();

  StreamSupervisor(const StreamSupervisor&) = delete;
  StreamSupervisor& operator=(const StreamSupervisor&) = delete;

  const std::string& datasource() const { return state_.datasource; }

  // ---- called from RPC threads ----

  // Validates against the current groups and queues the checkpoint
  // (docs/protocol.md "Checkpoint round"). accepted=false for a request about
  // an earlier sequence (the loop sends that task the agreed end offsets).
  // FAILED_PRECONDITION: the group is not reading, or the offsets match no
  // checkpoint (the task is replaced).
  absl::StatusOr<v1::CheckpointDataSourceMetadataResponse> Checkpoint(
      const v1::CheckpointDataSourceMetadataRequest& request);

  // Early handoff (HandoffTaskGroups): each given reading group (empty: all)
  // runs a checkpoint round now, as if its sequence were full, so the closed
  // sequence publishes while the group reads on. INVALID_ARGUMENT for an id
  // that is not a reading group (nothing is done then); UNAVAILABLE while
  // recovering or when the loop does not answer within `timeout`.
  absl::StatusOr<v1::HandoffTaskGroupsResponse> Handoff(const std::vector<int32_t>& group_ids,
                                                        absl::Duration timeout);

  // A worker reported a task of this datasource. Requests a run when its
  // state changed.
  void OnTaskStatus(const v1::TaskStatus& status);

  // A task hit OffsetOutOfRange; waits for the loop's decision.
  absl::StatusOr<v1::ReportOffsetOutOfRangeResponse> OffsetOutOfRange(
      const v1::ReportOffsetOutOfRangeRequest& request, absl::Duration timeout);

  // Full reset: stored offsets cleared, reading groups killed.
  void Reset();
  // Sets the stored offsets of some partitions and restarts their groups.
  void ResetOffsets(const OffsetMap& offsets);
  // A new spec version that differs only in `suspended`.
  void UpdateSpec(SpecRecord spec);
  void RequestRun();
  // An alert from outside the loop (e.g. a replica divergence found by a
  // publish): logged and shown in status recentErrors.
  void NoteAlert(const absl::Status& alert);

  // Runs once now and waits for it, and for the RunTask calls it started
  // to be answered and handled (tests, admin).
  absl::Status RunNow(absl::Duration timeout);
  // Waits until every notice posted before it has been handled.
  absl::Status Sync(absl::Duration timeout);
  // Finalizes every reading group (finish=true: they publish what they read)
  // and stops the loop. Blocks until the loop has stopped.
  void StopGracefully();

  v1::SupervisorStatus Status();
  v1::SupervisorSummary Summary();

 private:
  StreamSupervisor(StreamSupervisorOptions deps, SpecRecord spec);
  absl::Status Init();

  // ---- the loop's steps ----
  // Sets when the next periodic run is due and runs once (run_).
  void RunOnce();
  void PublishView();

  const StreamSupervisorOptions options_;
  // The loop's state, shared with the parts that act on it (GroupCreation,
  // OffsetResets): spec, groups, detailed state, health. Only loop steps
  // touch it.
  LoopState state_;
  // The loop's, the queries' and the RunTask calls' pools (shared or of its
  // own; declared before everything that runs on them).
  SupervisorPools pools_;
  // The chat and the RunTask clients (task_clients.h).
  TaskClients clients_;
  // What is known of the stream: partitions, watermarks, reachability.
  std::unique_ptr<StreamTracker> stream_;

  // The background queries (options_.background_stream_queries; else null),
  // on options_.queries: they ask stream_ once the loop created it.
  std::unique_ptr<StreamQueries> stream_queries_;
  // Created by Start() once the pools exist (uses clients_ and the RunTask
  // pool); the loop's only way to act on tasks.
  std::unique_ptr<TaskActions> actions_;
  // Checkpoint requests, handoffs and rounds (created with actions_).
  std::unique_ptr<CheckpointCoordinator> checkpoints_;
  // Roll-over and the end of groups (created with checkpoints_).
  std::unique_ptr<RollOver> roll_over_;
  // Creation of groups and tasks (created with actions_).
  std::unique_ptr<GroupCreation> creation_;
  // Resets of stored offsets (created with actions_).
  std::unique_ptr<OffsetResets> resets_;

  // ioConfig.idleConfig: observed each run, stored at every change.
  std::unique_ptr<IdleHandling> idle_;
  // The number of reading groups in force and the autoscaler's decisions.
  std::unique_ptr<TaskCountController> task_count_;

  // One run's steps in order, and recovery (created last by Start(): it
  // uses the parts above).
  std::unique_ptr<LoopRun> run_;

  // The workers' reports of its tasks (their own mutex; created with
  // actions_).
  std::unique_ptr<TaskReports> reports_;

  // What RPC threads may read, republished by the loop after every notice
  // (its own mutex).
  SupervisorView view_;
  // The queue and the strand (thread-safe posting); declared last, so it
  // is built once what its steps use exists.
  SupervisorLoop loop_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STREAM_SUPERVISOR_H_
