// The SQLite implementation of SqlConnection (supervisor/store/sql.h): a
// connection with a cache of prepared statements, statements that reset
// themselves when they go out of scope, and BEGIN IMMEDIATE transactions.
//
// Not thread-safe: one connection is used by one thread at a time (the
// metadata store serializes access with its own mutex).
#ifndef SLUICE_SUPERVISOR_STORE_SQLITE_H_
#define SLUICE_SUPERVISOR_STORE_SQLITE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "supervisor/store/sql.h"

struct sqlite3;
struct sqlite3_stmt;

namespace sluice::supervisor {

// Maps an SQLite result code to a status code by what the caller should do:
// BUSY/LOCKED/IOERR/FULL -> UNAVAILABLE, CORRUPT/NOTADB -> DATA_LOSS,
// CONSTRAINT -> ALREADY_EXISTS, CANTOPEN/PERM/READONLY -> FAILED_PRECONDITION,
// anything else -> INTERNAL. `context` starts the message.
absl::Status SqliteStatus(int rc, absl::string_view context, absl::string_view detail);

class SqliteDb : public SqlConnection {
 public:
  // Opens (creating if needed) the database file. Does not read it: the
  // first statement does, and reports a corrupt file.
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb() override;

  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  SqlDialect dialect() const override { return SqlDialect::kSqlite; }
  const std::string& description() const override { return path_; }

  // Prepares `sql` once and returns it from the cache afterwards. The
  // statement resets itself and clears its bindings when destroyed.
  absl::StatusOr<SqlStatement> Prepare(const std::string& sql) override;
  // Runs one or more statements that return no rows (DDL, PRAGMA ... = x).
  absl::Status Exec(const std::string& sql) override;
  absl::StatusOr<std::string> QueryText(const std::string& sql) override;

  // BEGIN IMMEDIATE for every mode: takes the write lock at once, so a
  // transaction never fails half-way on a lock upgrade, and writers run one
  // at a time (serializable).
  absl::Status Begin(TxnMode mode) override;
  absl::Status Commit() override;
  void Rollback() override;

  absl::Status SetBusyTimeout(int milliseconds);

  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  absl::Status RunCached(const std::string& sql);

  sqlite3* db_;
  std::string path_;
  std::map<std::string, sqlite3_stmt*> cache_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_SQLITE_H_
