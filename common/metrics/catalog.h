// Every metric sluice exports, declared once. docs/operations.md lists the
// same names (catalog_test checks that), so operators and code agree.
//
//   registry.GetCounter(metrics::kTaskRowsProcessed, {{"datasource", ds}})->Increment();
//
// Label values come from small sets: datasource, partition, task state, gRPC
// method and code. Never label by task id or segment id.
#ifndef SLUICE_COMMON_METRICS_CATALOG_H_
#define SLUICE_COMMON_METRICS_CATALOG_H_

#include "common/metrics/registry.h"

namespace sluice {
namespace metrics {

// ---- task worker (sluice-task) ----

inline constexpr MetricDef kTaskRowsProcessed{
    "sluice_task_rows_processed_total", MetricType::kCounter,
    "Rows parsed and added to the in-memory index.", "datasource"};
inline constexpr MetricDef kTaskRowsUnparseable{
    "sluice_task_rows_unparseable_total", MetricType::kCounter,
    "Records that could not be parsed into a row (counted and sampled, never silently dropped).",
    "datasource"};
inline constexpr MetricDef kTaskRowsThrownAway{
    "sluice_task_rows_thrown_away_total", MetricType::kCounter,
    "Rows dropped on purpose: outside the late/early message rejection windows.", "datasource"};
inline constexpr MetricDef kTaskPersists{
    "sluice_task_persists_total", MetricType::kCounter,
    "Intermediate persists of the in-memory index to the worker's disk.", "datasource"};
inline constexpr MetricDef kTaskPersistSeconds{
    "sluice_task_persist_seconds", MetricType::kHistogram,
    "Time to write one intermediate persist.", "datasource", kLatencySecondsBuckets};
inline constexpr MetricDef kTaskCheckpoints{
    "sluice_task_checkpoints_total", MetricType::kCounter,
    "Checkpoint requests sent to the supervisor (a sequence was full).", "datasource"};
inline constexpr MetricDef kTaskCheckpointSeconds{
    "sluice_task_checkpoint_seconds", MetricType::kHistogram,
    "Time a task stays paused from its checkpoint request until it gets its end offsets.",
    "datasource", kLatencySecondsBuckets};
inline constexpr MetricDef kTaskCheckpointPausedSeconds{
    "sluice_task_checkpoint_paused_seconds", MetricType::kHistogram,
    "Time a task's read loop was paused or parked, per checkpoint (0 for a pauseless one).",
    "datasource", kLatencySecondsBuckets};
inline constexpr MetricDef kTaskSegmentsPushed{
    "sluice_task_segments_pushed_total", MetricType::kCounter,
    "Segment files written to deep storage.", "datasource"};
inline constexpr MetricDef kTaskSegmentsPublished{
    "sluice_task_segments_published_total", MetricType::kCounter,
    "Segments of this worker's sequences committed by PublishSegments.", "datasource"};
inline constexpr MetricDef kTaskPublishSeconds{
    "sluice_task_publish_seconds", MetricType::kHistogram,
    "Time from a sequence closing to its publish committing (persist, merge, push, publish).",
    "datasource", kPublishSecondsBuckets};
inline constexpr MetricDef kTaskHandoffSeconds{
    "sluice_task_handoff_seconds", MetricType::kHistogram,
    "Time from a publish committing to all of its segments being handed off.", "datasource",
    kLatencySecondsBuckets};
inline constexpr MetricDef kTaskHandoffTimeouts{
    "sluice_task_handoff_timeouts_total", MetricType::kCounter,
    "Publishes whose handoff did not complete within handoffConditionTimeout (an alert).",
    "datasource"};
inline constexpr MetricDef kTaskKafkaAuthFailures{
    "sluice_task_kafka_auth_failures_total", MetricType::kCounter,
    "Authentication failures a task's Kafka consumer reported (a refused password or "
    "certificate, a mechanism the listener does not offer), by the spec's mechanism.",
    "datasource,mechanism"};
inline constexpr MetricDef kTaskTasks{
    "sluice_task_tasks", MetricType::kGauge,
    "Tasks on this worker by state (NOT_STARTED, READING, PAUSED, PUBLISHING, ...).", "state"};

// ---- supervisor (sluice-supervisor) ----

inline constexpr MetricDef kSupervisorPartitionLag{
    "sluice_supervisor_partition_lag", MetricType::kGauge,
    "Records between the partition's latest Kafka offset and the furthest offset its tasks read.",
    "datasource,partition"};
inline constexpr MetricDef kSupervisorPartitionTimeLag{
    "sluice_supervisor_partition_time_lag_ms", MetricType::kGauge,
    "Kafka timestamp of the partition's newest record minus that of the last record its furthest "
    "task read (0 when read to the end; absent while unknown).",
    "datasource,partition"};
inline constexpr MetricDef kSupervisorKafkaAuthFailures{
    "sluice_supervisor_kafka_auth_failures_total", MetricType::kCounter,
    "Kafka metadata queries of the supervisor that failed authentication, by the spec's "
    "mechanism.",
    "datasource,mechanism"};
inline constexpr MetricDef kSupervisorTasks{"sluice_supervisor_tasks", MetricType::kGauge,
                                            "Tasks the supervisor tracks, by datasource and state.",
                                            "datasource,state"};
inline constexpr MetricDef kSupervisorWorkers{"sluice_supervisor_workers", MetricType::kGauge,
                                              "Registered task workers by state (alive, lost).",
                                              "state"};
inline constexpr MetricDef kSupervisorCheckpoints{
    "sluice_supervisor_checkpoints_total", MetricType::kCounter,
    "Checkpoints recorded in the metadata store.", "datasource"};
inline constexpr MetricDef kSupervisorCheckpointSeconds{
    "sluice_supervisor_checkpoint_seconds", MetricType::kHistogram,
    "Time from a checkpoint request to SetEndOffsets answered by every replica.", "datasource",
    kLatencySecondsBuckets};
inline constexpr MetricDef kSupervisorPauselessCheckpoints{
    "sluice_supervisor_pauseless_checkpoints_total", MetricType::kCounter,
    "Checkpoint rounds that set end offsets on every replica without pausing any.",
    "datasource"};
inline constexpr MetricDef kSupervisorCheckpointFallbacks{
    "sluice_supervisor_checkpoint_fallbacks_total", MetricType::kCounter,
    "Pauseless checkpoint rounds a replica refused (already read past the end), or that needed "
    "a larger margin than fits maxRowsPerSegment: they fell back to pause-and-max, or replaced "
    "that replica.",
    "datasource"};
inline constexpr MetricDef kSupervisorCheckpointsMovedBack{
    "sluice_supervisor_checkpoints_moved_back_total", MetricType::kCounter,
    "Checkpoints moved back to what the replicas read: a pauseless end past the records that "
    "existed, which did not come (a finalize round, or the checkpoint stalled).",
    "datasource"};
inline constexpr MetricDef kSupervisorEarlyHandoffs{
    "sluice_supervisor_early_handoffs_total", MetricType::kCounter,
    "Task groups checkpointed early on an operator's HandoffTaskGroups (sluicectl handoff): "
    "their sequence closed and published while they read on.",
    "datasource"};
inline constexpr MetricDef kSupervisorScalingActions{
    "sluice_supervisor_scaling_actions_total", MetricType::kCounter,
    "Changes of the number of reading groups applied by the lag-based autoscaler "
    "(ioConfig.autoScalerConfig), by direction (out, in).",
    "datasource,direction"};
inline constexpr MetricDef kSupervisorPublishes{
    "sluice_supervisor_publishes_total", MetricType::kCounter,
    "PublishSegments transactions by result code (OK, ABORTED, UNAVAILABLE, ...).",
    "datasource,code"};
inline constexpr MetricDef kSupervisorSegmentsPublished{
    "sluice_supervisor_segments_published_total", MetricType::kCounter,
    "Segments committed to the metadata store.", "datasource"};
inline constexpr MetricDef kSupervisorHandoffSeconds{
    "sluice_supervisor_handoff_seconds", MetricType::kHistogram,
    "Time from a segment's commit to its handoff.", "datasource", kLatencySecondsBuckets};

inline constexpr MetricDef kSupervisorSegmentVerificationFailures{
    "sluice_supervisor_segment_verification_failures_total", MetricType::kCounter,
    "Used, handed-off segments whose deep-storage copy stopped verifying (missing, resized, "
    "damaged).",
    "datasource"};
inline constexpr MetricDef kSupervisorSegmentsFailingVerification{
    "sluice_supervisor_segments_failing_verification", MetricType::kGauge,
    "Used segments whose deep-storage copy currently fails verification (HANDOFF_FAILED).",
    "datasource"};

inline constexpr MetricDef kSupervisorPublishTransactionSeconds{
    "sluice_supervisor_publish_transaction_seconds", MetricType::kHistogram,
    "Time of one publish transaction (offsets, segments, commit log and, for an Iceberg "
    "datasource, the catalog's compare-and-swap), per attempt, whatever its result.",
    "datasource", kLatencySecondsBuckets};
inline constexpr MetricDef kSupervisorIcebergStageSeconds{
    "sluice_supervisor_iceberg_stage_seconds", MetricType::kHistogram,
    "Time to stage one Iceberg snapshot of a sequence (segments to Parquet, data files, manifest, "
    "manifest list, metadata document, data files read back), per attempt.",
    "datasource", kPublishSecondsBuckets};
inline constexpr MetricDef kSupervisorIcebergOrphansRemoved{
    "sluice_supervisor_iceberg_orphan_files_removed_total", MetricType::kCounter,
    "Files of an Iceberg datasource's table that no snapshot references (staged by publishes that "
    "did not commit), removed by the sweeper after the safety age.",
    "datasource"};
inline constexpr MetricDef kSupervisorCompactions{
    "sluice_supervisor_compactions_total", MetricType::kCounter,
    "Interval compactions by outcome: committed, conflict (an input was replaced meanwhile: "
    "planned again), failed (the status says why).",
    "datasource,outcome"};
inline constexpr MetricDef kSupervisorCompactionSeconds{
    "sluice_supervisor_compaction_seconds", MetricType::kHistogram,
    "Time to compact one interval, committed ones: inputs read and checked, merged, pushed, the "
    "Iceberg replace staged, the commit transaction.",
    "datasource", kPublishSecondsBuckets};
inline constexpr MetricDef kSupervisorCompactedRows{
    "sluice_supervisor_compacted_rows_total", MetricType::kCounter,
    "Rows of the segments committed compactions replaced (before rollup across them).",
    "datasource"};
inline constexpr MetricDef kSupervisorReplicaDivergences{
    "sluice_supervisor_replica_divergences_total", MetricType::kCounter,
    "Segments of a replica's late publish that differ (checksum, rows, bytes) from the committed "
    "segment of the same id: replicas are meant to be byte-identical (an alert).",
    "datasource"};
inline constexpr MetricDef kSupervisorDatasourceHealthy{
    "sluice_supervisor_datasource_healthy", MetricType::kGauge,
    "1 while the datasource's supervisor is healthy (suspended and idle count as healthy), 0 while "
    "it is not: its status's state and recent errors say why.",
    "datasource"};
inline constexpr MetricDef kSupervisorDatasourceState{
    "sluice_supervisor_datasource_state", MetricType::kGauge,
    "1 for the datasource's current supervisor state (RUNNING, SUSPENDED, UNHEALTHY_SUPERVISOR, "
    "UNABLE_TO_CONNECT_TO_STREAM, ...): one sample per datasource.",
    "datasource,state"};
inline constexpr MetricDef kSupervisorLeader{
    "sluice_supervisor_leader", MetricType::kGauge,
    "1 while this supervisor leads (always, without --leader_election), 0 while it is a standby.",
    ""};
inline constexpr MetricDef kSupervisorFencedTransactions{
    "sluice_supervisor_fenced_transactions_total", MetricType::kCounter,
    "Metadata transactions refused because this supervisor no longer holds the leader lease "
    "at its epoch (nothing written; the supervisor exits).",
    ""};

// ---- both binaries: the process (process_metrics.h, at scrape time) ----

inline constexpr MetricDef kProcessResidentMemory{
    "sluice_process_resident_memory_bytes", MetricType::kGauge,
    "Resident memory of the process (/proc/self/statm), by component (supervisor, worker).",
    "component"};

// ---- both binaries: gRPC server (recorded by grpc_server_metrics.h) ----

inline constexpr MetricDef kGrpcServerHandled{
    "sluice_grpc_server_handled_total", MetricType::kCounter,
    "RPCs completed by the server, by service, method and status code.",
    "grpc_service,grpc_method,grpc_code"};
inline constexpr MetricDef kGrpcServerHandlingSeconds{
    "sluice_grpc_server_handling_seconds", MetricType::kHistogram,
    "Time from an RPC's start to its status being sent.", "grpc_service,grpc_method",
    kLatencySecondsBuckets};

// All of the above, for documentation checks and listings.
inline constexpr const MetricDef* kCatalog[] = {
    &kTaskRowsProcessed,
    &kTaskRowsUnparseable,
    &kTaskRowsThrownAway,
    &kTaskPersists,
    &kTaskPersistSeconds,
    &kTaskCheckpoints,
    &kTaskCheckpointSeconds,
    &kTaskCheckpointPausedSeconds,
    &kTaskSegmentsPushed,
    &kTaskSegmentsPublished,
    &kTaskPublishSeconds,
    &kTaskHandoffSeconds,
    &kTaskHandoffTimeouts,
    &kTaskKafkaAuthFailures,
    &kTaskTasks,
    &kSupervisorPartitionLag,
    &kSupervisorPartitionTimeLag,
    &kSupervisorKafkaAuthFailures,
    &kSupervisorTasks,
    &kSupervisorWorkers,
    &kSupervisorCheckpoints,
    &kSupervisorCheckpointSeconds,
    &kSupervisorPauselessCheckpoints,
    &kSupervisorCheckpointFallbacks,
    &kSupervisorCheckpointsMovedBack,
    &kSupervisorEarlyHandoffs,
    &kSupervisorScalingActions,
    &kSupervisorPublishes,
    &kSupervisorPublishTransactionSeconds,
    &kSupervisorIcebergStageSeconds,
    &kSupervisorSegmentsPublished,
    &kSupervisorHandoffSeconds,
    &kSupervisorSegmentVerificationFailures,
    &kSupervisorSegmentsFailingVerification,
    &kSupervisorReplicaDivergences,
    &kSupervisorIcebergOrphansRemoved,
    &kSupervisorCompactions,
    &kSupervisorCompactionSeconds,
    &kSupervisorCompactedRows,
    &kSupervisorDatasourceHealthy,
    &kSupervisorDatasourceState,
    &kSupervisorLeader,
    &kSupervisorFencedTransactions,
    &kProcessResidentMemory,
    &kGrpcServerHandled,
    &kGrpcServerHandlingSeconds,
};

}  // namespace metrics
}  // namespace sluice

#endif  // SLUICE_COMMON_METRICS_CATALOG_H_
