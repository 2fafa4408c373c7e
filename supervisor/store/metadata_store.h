// The supervisor's metadata store: one SQLite file (WAL) under the data dir,
// or a PostgreSQL database (supervisor/store/postgres.h), holding specs with history, the datasources' commit metadata, segments,
// segment allocations, the commit log, task groups with their checkpoints,
// tasks and workers.
//
// Every read and write goes through InTransaction(), which runs a callback
// against a StoreTxn (typed statements) inside one serializable transaction
// (SQLite: BEGIN IMMEDIATE ... COMMIT; PostgreSQL: ISOLATION LEVEL
// SERIALIZABLE, see postgres.h for why) under the store's mutex. The publisher and the allocator build their
// compare-and-swap logic from StoreTxn operations.
//
// Durability: WAL with synchronous=FULL, so a commit acknowledged to a task
// (PublishSegments) survives a power loss, not only a process crash;
// NORMAL would keep the file consistent but could lose the last commits, and
// a task told "published" would then drop data the store no longer has.
#ifndef SLUICE_SUPERVISOR_STORE_METADATA_STORE_H_
#define SLUICE_SUPERVISOR_STORE_METADATA_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/spec.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "sluice/v1/task.pb.h"
#include "common/offsets.h"
#include "supervisor/idle_tracker.h"
#include "supervisor/store/leader_lease_rows.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

struct MetadataStoreOptions {
  // The SQLite file; its directory must exist. Empty when postgres_url is set.
  std::string path;
  // A PostgreSQL URL (supervisor/store/postgres_url.h); empty: SQLite at `path`.
  std::string postgres_url;
  // How long a statement waits for another connection's write lock
  // (SQLite; PostgreSQL: lock_timeout).
  int busy_timeout_ms = 5000;
  // Run PRAGMA quick_check at open (refuses a damaged file early; SQLite only).
  bool quick_check = true;
  // Migrate up to this version (tests create older files with it); 0 = latest.
  int target_schema_version = 0;
};

struct SpecRecord {
  std::string datasource;
  int64_t version = 0;
  int64_t created_at_ms = 0;
  v1::SupervisorSpec spec;
  bool terminated = false;
};

struct PendingSegment {
  std::string id;
  std::string datasource;
  std::string sequence_name;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::string version;
  int32_t partition_num = 0;
  std::string task_id;
};

enum class GroupState { kReading, kPublishing, kDone, kAbandoned };
const char* GroupStateName(GroupState state);

struct TaskGroupRecord {
  std::string base_sequence_name;
  std::string datasource;
  int32_t group_id = 0;
  GroupState state = GroupState::kReading;
  int64_t spec_version = 0;
  OffsetMap start_offsets;
  // Sequence id -> start offsets, ascending.
  std::map<int32_t, OffsetMap> checkpoints;
  OffsetMap end_offsets;
  int64_t min_message_time_ms = 0;
  int64_t max_message_time_ms = 0;
  int64_t created_at_ms = 0;
  int64_t completion_deadline_ms = 0;
};

struct TaskRecord {
  std::string task_id;
  std::string datasource;
  int32_t group_id = 0;
  std::string base_sequence_name;
  std::string worker_id;
  v1::TaskState state = v1::TASK_STATE_UNSPECIFIED;
  v1::TaskSpec spec;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  std::string error;
  OffsetMap current_offsets;
};

struct WorkerRecord {
  std::string worker_id;
  std::string address;
  int32_t capacity = 0;
  int64_t registered_at_ms = 0;
  int64_t last_seen_ms = 0;
};

// A used segment whose handoff is not complete.
struct HandoffCandidate {
  std::string id;
  std::string datasource;
  std::string path;
  int64_t size_bytes = 0;
  int64_t num_rows = 0;
  std::string checksum;
  // "sha256:<64 hex>" of the file the publisher checked before the commit;
  // empty when none was recorded (schema_version < 7, no deep storage).
  std::string sha256;
  v1::HandoffState state = v1::HANDOFF_STATE_PENDING;
  int64_t verified_at_ms = 0;
  int64_t loaded_at_ms = 0;
  int64_t created_at_ms = 0;  // when it was committed
};

bool IsTerminal(v1::TaskState state);

// Typed statements over one open transaction. Only valid inside the
// InTransaction callback that received it.
class StoreTxn {
 public:
  explicit StoreTxn(SqlConnection* db) : db_(db) {}

  // ---- datasources and specs ----
  absl::StatusOr<bool> DatasourceExists(const std::string& datasource);
  absl::Status EnsureDatasource(const std::string& datasource, int64_t now_ms);
  // Appends a spec version (1 for the first); returns it.
  absl::StatusOr<int64_t> InsertSpec(const std::string& datasource, const v1::SupervisorSpec& spec,
                                     bool terminated, int64_t now_ms);
  absl::StatusOr<std::optional<SpecRecord>> LatestSpec(const std::string& datasource);
  // Newest first.
  absl::StatusOr<std::vector<SpecRecord>> SpecHistory(const std::string& datasource);
  // The latest spec of every datasource whose latest version is not a tombstone.
  absl::StatusOr<std::vector<SpecRecord>> ActiveSpecs();

  // ---- commit metadata ----
  absl::StatusOr<std::optional<std::string>> CommitTopic(const std::string& datasource);
  absl::StatusOr<OffsetMap> CommittedOffsets(const std::string& datasource);
  // Upserts the given partitions (others keep theirs) and sets the topic.
  absl::Status SetCommittedOffsets(const std::string& datasource, const std::string& topic,
                                   const OffsetMap& offsets, int64_t now_ms);
  // Records `offsets` as committed (and initial) for every partition that has
  // no committed offset yet; returns the partitions recorded. The first
  // publish of a partition is then compared with them. FAILED_PRECONDITION if
  // the stored offsets belong to another topic.
  absl::StatusOr<OffsetMap> RecordInitialOffsets(const std::string& datasource,
                                                 const std::string& topic, const OffsetMap& offsets,
                                                 int64_t now_ms);
  absl::StatusOr<OffsetMap> InitialOffsets(const std::string& datasource);
  // Deletes the committed offsets of `partitions` (all when empty); the
  // topic is forgotten once no partition is left.
  absl::Status DeleteCommittedOffsets(const std::string& datasource,
                                      const std::vector<int32_t>& partitions);
  absl::Status RecordOffsetReset(const std::string& datasource, int32_t partition,
                                 std::optional<int64_t> old_offset,
                                 std::optional<int64_t> new_offset, const std::string& reason,
                                 int64_t now_ms);
  // Every offset reset of the datasource, oldest first.
  absl::StatusOr<std::vector<v1::OffsetReset>> OffsetResets(const std::string& datasource);
  // Partition -> number of offset resets recorded (partitions never reset
  // are absent).
  absl::StatusOr<OffsetMap> OffsetResetCounts(const std::string& datasource);

  // ---- idleness (ioConfig.idleConfig) ----
  // The stored idle state; nullopt: awake (or never seen).
  absl::StatusOr<std::optional<IdleState>> IdleStateOf(const std::string& datasource);
  // Stores `state` (null: awake).
  absl::Status SetIdleState(const std::string& datasource, const IdleState* state, int64_t now_ms);

  // ---- autoscaling (ioConfig.autoScalerConfig) ----
  // The number of reading groups the autoscaler last applied; nullopt:
  // none yet (or never seen).
  absl::StatusOr<std::optional<int32_t>> AutoscaledTaskCount(const std::string& datasource);
  // Records an applied decision (its decision_id is assigned, returned) and
  // makes its to_task_count the stored count.
  absl::StatusOr<int64_t> RecordScaling(const std::string& datasource,
                                        const v1::ScalingDecision& decision);
  // Every applied decision of the datasource, oldest first.
  absl::StatusOr<std::vector<v1::ScalingDecision>> ScalingDecisions(const std::string& datasource);
  // Forgets the stored count (the autoscaler was turned off): the next one
  // starts from taskCountStart again. The decisions stay in the log.
  absl::Status ClearAutoscaledTaskCount(const std::string& datasource);

  // ---- stream partitions (ioConfig.topicPattern) ----
  // Every stream partition id given for the datasource, by id.
  absl::StatusOr<std::vector<v1::StreamPartition>> StreamPartitions(const std::string& datasource);
  // Stores newly given ids. ALREADY_EXISTS when an id or a (topic,
  // partition) is stored already (the caller is out of date: ids are only
  // ever added).
  absl::Status AddStreamPartitions(const std::string& datasource,
                                   const std::vector<v1::StreamPartition>& added, int64_t now_ms);

  // ---- allocation ----
  absl::StatusOr<std::optional<PendingSegment>> FindPendingSegment(const std::string& datasource,
                                                                   const std::string& sequence_name,
                                                                   int64_t start_ms,
                                                                   int64_t end_ms);
  absl::StatusOr<std::optional<PendingSegment>> PendingSegmentById(const std::string& id);
  // How many allocations the sequence holds (one per interval).
  absl::StatusOr<int64_t> CountPendingSegments(const std::string& datasource,
                                               const std::string& sequence_name);
  absl::StatusOr<std::optional<std::string>> IntervalVersion(const std::string& datasource,
                                                             int64_t start_ms, int64_t end_ms);
  absl::Status InsertIntervalVersion(const std::string& datasource, int64_t start_ms,
                                     int64_t end_ms, const std::string& version, int64_t now_ms);
  // 1 + the largest partition number allocated or published in the interval
  // with that version (0 for the first).
  absl::StatusOr<int32_t> NextPartitionNum(const std::string& datasource, int64_t start_ms,
                                           int64_t end_ms, const std::string& version);
  absl::Status InsertPendingSegment(const PendingSegment& segment, int64_t now_ms);
  // Deletes the allocations of sequences committed before
  // `committed_before_ms` (their segments are in the segments table; no live
  // replica asks for them any more). Returns how many rows went.
  absl::StatusOr<int64_t> DeletePendingSegmentsOfCommittedSequences(int64_t committed_before_ms);
  // Deletes the allocations, committed or not, made by tasks of groups that
  // ended (DONE or ABANDONED) before `ended_before_ms`: no replica of the
  // group asks for them any more, and a sequence that never published must
  // not keep its allocations forever. A group started again under the same
  // base sequence name is live again and keeps them. Returns how many rows
  // went.
  absl::StatusOr<int64_t> DeletePendingSegmentsOfEndedGroups(int64_t ended_before_ms);

  // ---- commit log and segments ----
  absl::StatusOr<std::optional<v1::CommittedSequence>> CommittedSequence(
      const std::string& datasource, const std::string& sequence_name);
  // Returns the commit id.
  absl::StatusOr<int64_t> InsertCommittedSequence(const std::string& datasource,
                                                  const std::string& sequence_name,
                                                  const std::string& task_id,
                                                  const OffsetMap& start, const OffsetMap& end,
                                                  const std::vector<v1::PartitionRange>& stats,
                                                  int64_t now_ms);
  absl::StatusOr<bool> SegmentExists(const std::string& id);
  // `sha256`: the digest the supervisor computed of the file ("sha256:..."),
  // empty to record none (NULL).
  absl::Status InsertSegment(const v1::SegmentDescriptor& segment, const std::string& sha256,
                             int64_t commit_id, const std::string& task_id, int64_t now_ms);
  // Replaces used segments of `datasource` by `segments` (e.g. the
  // compaction of them), in this transaction: every replaced segment must
  // still be used, else ABORTED naming the first that is not (replaced or
  // dropped since it was read) and nothing changes; NOT_FOUND for an id
  // that is no segment of the datasource; INVALID_ARGUMENT unless the
  // replaced and new segments all cover one interval of the datasource (or
  // for empty or repeated ids); ALREADY_EXISTS for a new id already stored.
  // The replaced ones become unused (segment_replacements records which
  // replaced which); the new ones are inserted used, handoff pending, with
  // no sequence name (they hold several sequences' records) and filed under
  // the latest commit among the replaced ones' (a commit record still lists
  // the segments its sequence published). Segments of the interval not
  // named stay used.
  absl::Status ReplaceSegments(const std::string& datasource,
                               const std::vector<std::string>& replaced_ids,
                               const std::vector<v1::SegmentDescriptor>& segments,
                               const std::string& task_id, int64_t now_ms);
  // Segments a compaction replaced at or before `replaced_before_ms`, no
  // longer used, whose deep-storage file was not removed yet: (id, path),
  // the longest replaced first, at most `limit`.
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReplacedSegmentFilesToRemove(
      int64_t replaced_before_ms, int limit);
  // Records that the file of the replaced segment `id` is gone.
  absl::Status SetSegmentFileRemoved(const std::string& id, int64_t now_ms);
  // Ids of the segments that replaced `id` (empty: not replaced).
  absl::StatusOr<std::vector<std::string>> ReplacedBy(const std::string& id);
  // The subset of `ids` that are published and used.
  absl::StatusOr<std::vector<std::string>> UsedSegmentIds(const std::string& datasource,
                                                          const std::vector<std::string>& ids);
  // Oldest first, with segment ids.
  absl::StatusOr<std::vector<v1::CommittedSequence>> CommitLog(const std::string& datasource);
  absl::StatusOr<std::vector<v1::SegmentDescriptor>> ListSegments(const std::string& datasource,
                                                                  const v1::Interval* overlapping,
                                                                  bool include_unused, int limit);
  absl::StatusOr<int64_t> CountSegments(const std::string& datasource);

  // ---- handoff ----
  // Used segments not handed off yet (pending or failed), oldest first.
  absl::StatusOr<std::vector<HandoffCandidate>> HandoffCandidates(int limit);
  absl::Status SetHandoff(const std::string& id, v1::HandoffState state, int64_t verified_at_ms,
                          int64_t handed_off_at_ms);
  // Used, handed-off segments, the longest unverified first: what the
  // periodic re-verification of deep storage checks next.
  absl::StatusOr<std::vector<HandoffCandidate>> SegmentsToReverify(int limit);
  // Records a successful re-verification (the handoff state stays).
  absl::Status SetVerifiedAt(const std::string& id, int64_t verified_at_ms);
  // Used segments of `datasource` whose deep-storage copy failed verification.
  absl::StatusOr<int64_t> CountFailedSegments(const std::string& datasource);
  // Marks published segments as loaded; NOT_FOUND names the first unknown id.
  absl::StatusOr<int> MarkLoaded(const std::string& datasource, const std::vector<std::string>& ids,
                                 const std::string& loader, int64_t now_ms);
  // Handoff state of each of `ids` that is a published segment.
  absl::StatusOr<std::map<std::string, v1::HandoffState>> HandoffStates(
      const std::string& datasource, const std::vector<std::string>& ids);

  // ---- the Iceberg SQL catalog (catalog_name 'sluice', docs/iceberg.md) ----
  // The table's metadata_location; nullopt when the catalog has no such table.
  absl::StatusOr<std::optional<std::string>> IcebergMetadataLocation(
      const std::string& table_namespace, const std::string& table_name);
  // The catalog's compare-and-swap: points the table at `next` (and
  // previous_metadata_location at `expected`) when it still points at
  // `expected`; with `expected` nullopt, inserts the table (iceberg_type
  // 'TABLE') when the catalog has none and records the namespace (property
  // "exists" = "true", as pyiceberg does) when missing. False: another
  // writer moved (or created) the table first; nothing was changed.
  absl::StatusOr<bool> SwapIcebergMetadataLocation(const std::string& table_namespace,
                                                   const std::string& table_name,
                                                   const std::optional<std::string>& expected,
                                                   const std::string& next);

  // Reads for the Iceberg REST catalog (supervisor/iceberg_rest_catalog.h),
  // of catalog 'sluice' only. Names sort as the database compares them;
  // `after` (exclusive; "" = from the first) and `limit` page through them.
  // The namespaces: those with a property row or a table.
  absl::StatusOr<std::vector<std::string>> IcebergNamespaces(const std::string& after, int limit);
  // The namespace's properties (at most `limit`, by key); nullopt when the
  // catalog has neither a property row nor a table in that namespace.
  absl::StatusOr<std::optional<std::map<std::string, std::string>>> IcebergNamespaceProperties(
      const std::string& table_namespace, int limit);
  // The names of the namespace's tables (iceberg_type 'TABLE' or NULL, as
  // rows of older catalogs have; views are not tables).
  absl::StatusOr<std::vector<std::string>> IcebergTableNames(const std::string& table_namespace,
                                                             const std::string& after, int limit);

  // ---- task groups ----
  // Inserts the group with its first checkpoint (sequence 0 = start
  // offsets). A finished (DONE/ABANDONED) group of the same name is replaced;
  // a live one is ALREADY_EXISTS.
  absl::Status InsertTaskGroup(const TaskGroupRecord& group);
  absl::Status AppendCheckpoint(const std::string& base_sequence_name, int32_t sequence_id,
                                const OffsetMap& offsets, int64_t now_ms);
  // Removes checkpoint `sequence_id` of the group, which must be its latest
  // (a pauseless round's end that no replica accepted). NOT_FOUND if absent,
  // FAILED_PRECONDITION if a later one exists.
  absl::Status RemoveLatestCheckpoint(const std::string& base_sequence_name, int32_t sequence_id);
  absl::Status SetGroupPublishing(const std::string& base_sequence_name, const OffsetMap& end,
                                  int64_t completion_deadline_ms);
  absl::Status FinishGroup(const std::string& base_sequence_name, GroupState state,
                           const std::string& reason, int64_t now_ms);
  // READING and PUBLISHING groups of the datasource, with their checkpoints.
  absl::StatusOr<std::vector<TaskGroupRecord>> LiveTaskGroups(const std::string& datasource);
  absl::StatusOr<std::optional<TaskGroupRecord>> GetTaskGroup(
      const std::string& base_sequence_name);

  // ---- tasks and workers ----
  absl::Status InsertTask(const TaskRecord& task);
  // Updates state, error (when non-empty) and current offsets (when non-empty).
  absl::Status UpdateTask(const std::string& task_id, v1::TaskState state, const std::string& error,
                          const OffsetMap& current_offsets, int64_t now_ms);
  absl::StatusOr<std::optional<TaskRecord>> GetTask(const std::string& task_id);
  // Empty datasource: all. Non-terminal tasks only unless include_finished.
  absl::StatusOr<std::vector<TaskRecord>> ListTasks(const std::string& datasource,
                                                    bool include_finished);
  absl::Status UpsertWorker(const WorkerRecord& worker);
  absl::StatusOr<std::vector<WorkerRecord>> ListWorkerRecords();

 private:
  absl::StatusOr<std::map<int32_t, OffsetMap>> LoadCheckpoints(const std::string& base);

  SqlConnection* db_;
};

class MetadataStore {
 public:
  // Opens or creates the store and migrates it to the latest schema. Refuses
  // (never overwrites) a corrupt file or a database with a newer schema.
  static absl::StatusOr<std::unique_ptr<MetadataStore>> Open(MetadataStoreOptions options);

  MetadataStore(const MetadataStore&) = delete;
  MetadataStore& operator=(const MetadataStore&) = delete;

  // Runs `body` in one write transaction; commits when it returns OK, rolls
  // back otherwise (its status is returned). On PostgreSQL a serialization
  // failure (another supervisor's transaction touched the same rows first) is
  // ABORTED: retry the operation, which then sees the other's result.
  absl::Status InTransaction(absl::FunctionRef<absl::Status(StoreTxn&)> body)
      ABSL_LOCKS_EXCLUDED(mu_);
  // InTransaction, run again (up to 5 attempts, a few milliseconds apart)
  // while PostgreSQL refuses it as a serialization failure or a unique
  // violation (a concurrent insert of the same key: sql.h). For bodies that
  // may run more than once and check for their rows before inserting them:
  // they only assign their outputs (the allocator). SQLite serializes writers
  // and never refuses this way.
  absl::Status InRetriedTransaction(absl::FunctionRef<absl::Status(StoreTxn&)> body)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Fencing (supervisors electing a leader, supervisor/leader_elector.h):
  // once set, every InTransaction first checks, inside the transaction, that
  // the leader lease is still held by fence.holder_id at fence.epoch and not
  // expired; otherwise the transaction writes nothing and returns
  // UNAVAILABLE with the fenced payload (IsFenced). So a deposed leader that
  // wakes up (a long pause, SIGSTOP) commits nothing, whatever its threads
  // were doing. Unset (nullopt, the default): no check, one supervisor.
  // `on_fenced` (may be null) runs, under the store's lock, for every
  // transaction the fence refuses (a metric).
  void SetLeaderFence(std::optional<LeaderFence> fence, std::function<void()> on_fenced = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Transactions the fence refused so far.
  int64_t fenced_transactions() const ABSL_LOCKS_EXCLUDED(mu_);
  // A serializable transaction the fence does not check: the election's own,
  // which reads and writes the lease row (supervisor/store/leader_lease_rows.h).
  absl::Status InLeaseTransaction(absl::FunctionRef<absl::Status(SqlConnection*)> body)
      ABSL_LOCKS_EXCLUDED(mu_);

  // PRAGMA values, for tests and the startup log. UNIMPLEMENTED on
  // PostgreSQL (it has no PRAGMA; its settings are the server's).
  absl::StatusOr<std::string> Pragma(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<int> SchemaVersion() ABSL_LOCKS_EXCLUDED(mu_);

  // The SQLite file or the PostgreSQL URL (never with a password), for logs.
  const std::string& description() const { return description_; }
  SqlDialect dialect() const { return dialect_; }

 private:
  MetadataStore(MetadataStoreOptions options, std::unique_ptr<SqlConnection> db)
      : options_(std::move(options)),
        description_(db->description()),
        dialect_(db->dialect()),
        db_(std::move(db)) {}

  const MetadataStoreOptions options_;
  const std::string description_;
  const SqlDialect dialect_;
  mutable absl::Mutex mu_;
  std::unique_ptr<SqlConnection> db_ ABSL_GUARDED_BY(mu_);
  std::optional<LeaderFence> fence_ ABSL_GUARDED_BY(mu_);
  int64_t fenced_transactions_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void()> on_fenced_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_METADATA_STORE_H_
