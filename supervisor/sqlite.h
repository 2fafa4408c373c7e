// A small RAII layer over the SQLite C API: a connection with a cache of
// prepared statements, statements that reset themselves when they go out of
// scope, and transactions that roll back unless committed.
//
// Not thread-safe: one connection is used by one thread at a time (the
// metadata store serializes access with its own mutex).
#ifndef SLUICE_SUPERVISOR_SQLITE_H_
#define SLUICE_SUPERVISOR_SQLITE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace sluice::supervisor {

// Maps an SQLite result code to a status code by what the caller should do:
// BUSY/LOCKED/IOERR/FULL -> UNAVAILABLE, CORRUPT/NOTADB -> DATA_LOSS,
// CONSTRAINT -> ALREADY_EXISTS, CANTOPEN/PERM/READONLY -> FAILED_PRECONDITION,
// anything else -> INTERNAL. `context` starts the message.
absl::Status SqliteStatus(int rc, absl::string_view context, absl::string_view detail);

class SqliteDb;

// A prepared statement borrowed from the connection's cache. Bind values
// (1-based), Step() through the rows, read columns (0-based). Resets and
// clears its bindings on destruction so the cached statement can be reused.
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  SqliteStatement(const SqliteStatement&) = delete;
  ~SqliteStatement();

  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  SqliteStatement& Bind(int index, absl::string_view text);
  SqliteStatement& Bind(int index, const char* text) {
    return Bind(index, absl::string_view(text));
  }
  SqliteStatement& Bind(int index, const std::string& text) {
    return Bind(index, absl::string_view(text));
  }
  SqliteStatement& BindNull(int index);

  // True when a row is available, false when done (the statement is then
  // reset and may be bound and run again).
  absl::StatusOr<bool> Step();
  // Steps to completion (for statements that return no rows).
  absl::Status Run();

  int64_t Int64(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

  // Rows changed by the last Run() (sqlite3_changes).
  int Changes() const;

 private:
  friend class SqliteDb;
  SqliteStatement(SqliteDb* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  SqliteDb* db_;
  sqlite3_stmt* stmt_;
  // First binding error, reported by Step().
  absl::Status bind_status_;
};

class SqliteDb {
 public:
  // Opens (creating if needed) the database file. Does not read it: the
  // first statement does, and reports a corrupt file.
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();

  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Prepares `sql` once and returns it from the cache afterwards.
  absl::StatusOr<SqliteStatement> Prepare(const std::string& sql);

  // Runs one or more statements that return no rows (DDL, PRAGMA ... = x).
  absl::Status Exec(const std::string& sql);

  // The first column of the first row of `sql`, as text ("" when no row).
  absl::StatusOr<std::string> QueryText(const std::string& sql);

  absl::Status SetBusyTimeout(int milliseconds);

  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  std::map<std::string, sqlite3_stmt*> cache_;
};

// BEGIN IMMEDIATE (takes the write lock at once, so a transaction never fails
// half-way on a lock upgrade) ... COMMIT; rolls back when destroyed without a
// successful Commit().
class SqliteTransaction {
 public:
  static absl::StatusOr<std::unique_ptr<SqliteTransaction>> Begin(SqliteDb* db);
  ~SqliteTransaction();

  absl::Status Commit();

 private:
  explicit SqliteTransaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_;
  bool done_ = false;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_SQLITE_H_
