// The PostgreSQL implementation of SqlConnection (supervisor/store/sql.h), over
// libpq.
//
// Isolation: the store's transactions run at SERIALIZABLE. The publish
// compare-and-swap reads the committed offsets, compares them with the
// publish's start offsets and writes the new ones (and the commit log, and
// the segments) in one transaction; the allocator reads the largest partition
// number and inserts the next. Both are read-then-write: at READ COMMITTED
// two supervisors could each read the old offsets and both commit, the
// second overwriting the first (a lost publish, data duplicated). At
// SERIALIZABLE PostgreSQL guarantees that the committed transactions have
// the effect of some serial order, which is what SQLite's one-writer BEGIN
// IMMEDIATE gives: one of two conflicting transactions fails with SQLSTATE
// 40001 (or 40P01 on a deadlock), reported as ABORTED, and its caller
// retries the whole operation, which then sees the winner's offsets and is
// refused or made idempotent by the usual checks. SERIALIZABLE rather than
// REPEATABLE READ with SELECT ... FOR UPDATE: the checks also read rows that
// do not exist yet (a sequence never committed, a partition with no offset),
// which row locks cannot lock and predicate locks do.
//
// Statement atomicity: in PostgreSQL a failed statement aborts the whole
// transaction, in SQLite only that statement. Callers (and tests) may look at
// a statement's error (ALREADY_EXISTS) and go on, so each statement inside a
// transaction runs under a savepoint and a failure rolls back to it: the
// SQLite behavior, at one extra round trip per statement.
//
// Errors map to status codes by SQLSTATE: connection failures (class 08, a
// lost connection, 57P01-03 shutdown) UNAVAILABLE, 40001/40P01 ABORTED,
// integrity violations (class 23) ALREADY_EXISTS as in SQLite, lock timeouts
// (55P03) UNAVAILABLE, 28/42501 PERMISSION_DENIED, data corruption (XX001,
// XX002) DATA_LOSS, anything else INTERNAL. A lost connection is re-opened
// at the next transaction.
#ifndef SLUICE_SUPERVISOR_STORE_POSTGRES_H_
#define SLUICE_SUPERVISOR_STORE_POSTGRES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "supervisor/store/postgres_url.h"
#include "supervisor/store/sql.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace sluice::supervisor {

// `?` and `?N` placeholders outside quotes become `$N` (`?` counts up).
std::string PostgresPlaceholders(absl::string_view sql);

// The status for a failed result (or connection, when `result` is null).
absl::Status PostgresStatus(const PGresult* result, PGconn* conn, absl::string_view context);

class PostgresDb : public SqlConnection {
 public:
  static absl::StatusOr<std::unique_ptr<PostgresDb>> Connect(const PostgresConnectOptions& options);
  ~PostgresDb() override;
  PostgresDb(const PostgresDb&) = delete;
  PostgresDb& operator=(const PostgresDb&) = delete;

  SqlDialect dialect() const override { return SqlDialect::kPostgres; }
  const std::string& description() const override { return description_; }

  absl::StatusOr<SqlStatement> Prepare(const std::string& sql) override;
  absl::Status Exec(const std::string& sql) override;
  absl::StatusOr<std::string> QueryText(const std::string& sql) override;

  // kSerializable: BEGIN ISOLATION LEVEL SERIALIZABLE. kMigration: READ
  // COMMITTED under a transaction-scoped advisory lock.
  absl::Status Begin(TxnMode mode) override;
  absl::Status Commit() override;
  void Rollback() override;

  // Runs one parameterized statement (placeholders already $N); values are
  // text, null for NULL; types are OIDs (0: let the server infer). The result
  // is OK (rows or a command); the caller frees it with PQclear.
  absl::StatusOr<PGresult*> Execute(const std::string& sql, const std::vector<unsigned>& types,
                                    const std::vector<const char*>& values);
  int64_t changes() const { return changes_; }

 private:
  PostgresDb(PGconn* conn, std::string description, int lock_timeout_ms)
      : conn_(conn), description_(std::move(description)), lock_timeout_ms_(lock_timeout_ms) {}
  absl::Status SetUpSession();
  absl::Status EnsureConnected();
  // PQexec of `sql` (no parameters), OK or the mapped error.
  absl::Status Simple(const std::string& sql);

  PGconn* conn_;
  const std::string description_;
  const int lock_timeout_ms_;
  bool in_transaction_ = false;
  int64_t changes_ = 0;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_POSTGRES_H_
