// The supervisor's metadata store: one SQLite file (WAL) under the data dir,
// or a PostgreSQL database (supervisor/store/postgres.h), holding specs with history, the datasources' commit metadata, segments,
// segment allocations, the commit log, task groups with their checkpoints,
// tasks and workers.
//
// Every read and write goes through InTransaction(), which runs a callback
// against a StoreTxn (typed statements, one class per table group in its own
// *_rows.h file) inside one serializable transaction
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
#include "supervisor/store/iceberg_catalog_rows.h"
#include "supervisor/store/leader_lease_rows.h"
#include "supervisor/store/offset_rows.h"
#include "supervisor/store/pending_segment_rows.h"
#include "supervisor/store/segment_rows.h"
#include "supervisor/store/spec_rows.h"
#include "supervisor/store/sql.h"
#include "supervisor/store/task_group_rows.h"
#include "supervisor/store/worker_rows.h"

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

// Typed statements over one open transaction: every table group's
// statements (each group's class and record structs are in its own *_rows.h
// file, so a reader finds a table's statements in one place), on the
// transaction's connection. Only valid inside the InTransaction callback
// that received it.
class StoreTxn : public SpecRows,
                 public OffsetRows,
                 public PendingSegmentRows,
                 public SegmentRows,
                 public TaskGroupRows,
                 public WorkerRows,
                 public IcebergCatalogRows {
 public:
  explicit StoreTxn(SqlConnection* db)
      : SpecRows(db),
        OffsetRows(db),
        PendingSegmentRows(db),
        SegmentRows(db),
        TaskGroupRows(db),
        WorkerRows(db),
        IcebergCatalogRows(db) {}
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
