#include "supervisor/store/metadata_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "supervisor/store/metadata_schema.h"
#include "supervisor/store/postgres.h"
#include "supervisor/store/postgres_url.h"
#include "supervisor/store/sqlite.h"

namespace sluice::supervisor {

// ---- the store ----

namespace {

// SQLite writes its -wal and -shm files beside the database: the directory
// must be writable, not only the file. PERMISSION_DENIED (or
// FAILED_PRECONDITION on a read-only file system) naming the directory.
absl::Status CheckWritableDirectory(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (access(dir.c_str(), W_OK | X_OK) == 0) return absl::OkStatus();
  const int error = errno;
  const std::string message = absl::StrCat("the metadata store's directory ", dir,
                                           " is not writable by this process (uid ", getuid(),
                                           "): ", std::strerror(error));
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  return absl::FailedPreconditionError(message);
}

}  // namespace

namespace {

absl::StatusOr<std::unique_ptr<SqlConnection>> OpenSqlite(const MetadataStoreOptions& options,
                                                          int target) {
  SLUICE_RETURN_IF_ERROR(CheckWritableDirectory(options.path));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(options.path));
  SLUICE_RETURN_IF_ERROR(db->SetBusyTimeout(options.busy_timeout_ms));

  // Read before writing anything: a file that is not ours is refused untouched.
  SLUICE_ASSIGN_OR_RETURN(const int found, ReadSchemaVersion(db.get()));
  if (found > target) {
    return absl::FailedPreconditionError(absl::StrCat(
        options.path, " has schema version ", found, ", newer than the ", target,
        " this sluice-supervisor supports; refusing to open it (upgrade the supervisor)"));
  }
  if (options.quick_check && found > 0) {
    SLUICE_ASSIGN_OR_RETURN(std::string check, db->QueryText("PRAGMA quick_check"));
    if (check != "ok") {
      return absl::DataLossError(absl::StrCat(options.path, " fails PRAGMA quick_check (", check,
                                              "); refusing to open it"));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::string mode, db->QueryText("PRAGMA journal_mode = WAL"));
  if (mode != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(options.path, ": cannot switch to WAL journaling (got ", mode, ")"));
  }
  SLUICE_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = FULL"));
  SLUICE_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys = ON"));
  return std::unique_ptr<SqlConnection>(std::move(db));
}

absl::StatusOr<std::unique_ptr<SqlConnection>> OpenPostgres(const MetadataStoreOptions& options,
                                                            int target) {
  SLUICE_ASSIGN_OR_RETURN(PostgresConnectOptions connect,
                          ParsePostgresUrl(options.postgres_url));
  connect.lock_timeout_ms = options.busy_timeout_ms;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<PostgresDb> db, PostgresDb::Connect(connect));
  // Read before writing anything: a database that is not ours is refused untouched.
  SLUICE_ASSIGN_OR_RETURN(const int found, ReadSchemaVersion(db.get()));
  if (found > target) {
    return absl::FailedPreconditionError(absl::StrCat(
        db->description(), " has schema version ", found, ", newer than the ", target,
        " this sluice-supervisor supports; refusing to open it (upgrade the supervisor)"));
  }
  return std::unique_ptr<SqlConnection>(std::move(db));
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetadataStore>> MetadataStore::Open(MetadataStoreOptions options) {
  const bool postgres = !options.postgres_url.empty();
  if (postgres && !options.path.empty()) {
    return absl::InvalidArgumentError("metadata store: set a file path or a PostgreSQL URL, not both");
  }
  if (!postgres && options.path.empty()) {
    return absl::InvalidArgumentError("metadata store path is empty");
  }
  const int target =
      options.target_schema_version == 0 ? LatestSchemaVersion() : options.target_schema_version;
  if (target < 1 || target > LatestSchemaVersion()) {
    return absl::InvalidArgumentError(absl::StrCat("no schema version ", target));
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<SqlConnection> db,
                          postgres ? OpenPostgres(options, target) : OpenSqlite(options, target));
  SLUICE_RETURN_IF_ERROR(MigrateSchema(db.get(), target, NowMillis()));
  return std::unique_ptr<MetadataStore>(new MetadataStore(std::move(options), std::move(db)));
}

absl::Status MetadataStore::InTransaction(absl::FunctionRef<absl::Status(StoreTxn&)> body) {
  absl::MutexLock lock(&mu_);
  SLUICE_ASSIGN_OR_RETURN(auto txn, SqlTransaction::Begin(db_.get()));
  if (fence_.has_value()) {
    // Inside the transaction: under SERIALIZABLE (SQLite: the one writer) a
    // lease taken over concurrently either precedes this read (refused here)
    // or follows this whole transaction in the serial order.
    absl::Status fenced = CheckLeaderFence(db_.get(), *fence_);
    if (!fenced.ok()) {
      if (IsFenced(fenced)) {
        ++fenced_transactions_;
        if (on_fenced_) on_fenced_();
      }
      return fenced;
    }
  }
  StoreTxn store_txn(db_.get());
  SLUICE_RETURN_IF_ERROR(body(store_txn));
  return txn->Commit();
}

void MetadataStore::SetLeaderFence(std::optional<LeaderFence> fence,
                                   std::function<void()> on_fenced) {
  absl::MutexLock lock(&mu_);
  fence_ = std::move(fence);
  on_fenced_ = std::move(on_fenced);
}

int64_t MetadataStore::fenced_transactions() const {
  absl::MutexLock lock(&mu_);
  return fenced_transactions_;
}

absl::Status MetadataStore::InLeaseTransaction(
    absl::FunctionRef<absl::Status(SqlConnection*)> body) {
  absl::MutexLock lock(&mu_);
  SLUICE_ASSIGN_OR_RETURN(auto txn, SqlTransaction::Begin(db_.get()));
  SLUICE_RETURN_IF_ERROR(body(db_.get()));
  return txn->Commit();
}

absl::Status MetadataStore::InRetriedTransaction(
    absl::FunctionRef<absl::Status(StoreTxn&)> body) {
  constexpr int kAttempts = 5;
  absl::Status status;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    status = InTransaction(body);
    if (!IsSerializationFailure(status) && !IsUniqueViolation(status)) return status;
    // The winner has committed or is about to: a short, growing pause.
    absl::SleepFor(absl::Milliseconds(2 * attempt));
  }
  return status;
}

absl::StatusOr<std::string> MetadataStore::Pragma(const std::string& name) {
  if (dialect_ != SqlDialect::kSqlite) {
    return absl::UnimplementedError(
        absl::StrCat("PRAGMA ", name, ": the PostgreSQL metadata store has no pragmas"));
  }
  absl::MutexLock lock(&mu_);
  return db_->QueryText(absl::StrCat("PRAGMA ", name));
}

absl::StatusOr<int> MetadataStore::SchemaVersion() {
  absl::MutexLock lock(&mu_);
  return ReadSchemaVersion(db_.get());
}

}  // namespace sluice::supervisor

