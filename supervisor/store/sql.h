// The SQL connection interface the metadata store is written against, with
// two implementations: SQLite (supervisor/store/sqlite.h) and PostgreSQL
// (supervisor/store/postgres.h).
//
// Statements are written once, in SQLite's spelling of placeholders (`?` and
// `?N`); the PostgreSQL connection rewrites them to `$N`. Values are 64-bit
// integers, text or NULL; nothing else crosses this interface.
//
// Not thread-safe: one connection is used by one thread at a time (the
// metadata store serializes access with its own mutex).
#ifndef SLUICE_SUPERVISOR_STORE_SQL_H_
#define SLUICE_SUPERVISOR_STORE_SQL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice::supervisor {

enum class SqlDialect { kSqlite, kPostgres };

// ABORTED statuses a backend returns when the database refused a
// transaction to keep transactions serializable (PostgreSQL SQLSTATE 40001,
// 40P01) carry this payload: running the same transaction again is correct.
// An ABORTED a transaction's body returns itself does not.
inline constexpr char kSerializationFailurePayload[] = "sluice.metadata/serialization-failure";
absl::Status SerializationFailure(absl::string_view message);
bool IsSerializationFailure(const absl::Status& status);

// ALREADY_EXISTS from a unique index (PostgreSQL 23505). Two serializable
// PostgreSQL transactions inserting the same key are not always reported as
// a serialization failure (only when the loser had read the key through the
// same index); a transaction that checked for the row first and then hit
// this lost such a race, and running it again finds the winner's row.
inline constexpr char kUniqueViolationPayload[] = "sluice.metadata/unique-violation";
absl::Status UniqueViolation(absl::string_view message);
bool IsUniqueViolation(const absl::Status& status);

// What a backend implements for one statement; used through SqlStatement.
class SqlCursor {
 public:
  virtual ~SqlCursor() = default;
  // Bind errors are remembered and reported by the next Step().
  virtual void BindInt64(int index, int64_t value) = 0;
  virtual void BindText(int index, absl::string_view text) = 0;
  virtual void BindNull(int index) = 0;
  // True when a row is available, false when done; after false the
  // statement may be bound and run again.
  virtual absl::StatusOr<bool> Step() = 0;
  virtual int64_t Int64(int column) const = 0;
  virtual std::string Text(int column) const = 0;
  virtual bool IsNull(int column) const = 0;
  // Rows changed by the last completed statement.
  virtual int64_t Changes() const = 0;
};

// A prepared statement. Bind values (1-based), Step() through the rows, read
// columns (0-based).
class SqlStatement {
 public:
  explicit SqlStatement(std::unique_ptr<SqlCursor> cursor) : cursor_(std::move(cursor)) {}
  SqlStatement(SqlStatement&&) noexcept = default;
  SqlStatement& operator=(SqlStatement&&) = delete;
  SqlStatement(const SqlStatement&) = delete;

  SqlStatement& Bind(int index, int64_t value) {
    cursor_->BindInt64(index, value);
    return *this;
  }
  SqlStatement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  SqlStatement& Bind(int index, absl::string_view text) {
    cursor_->BindText(index, text);
    return *this;
  }
  SqlStatement& Bind(int index, const char* text) { return Bind(index, absl::string_view(text)); }
  SqlStatement& Bind(int index, const std::string& text) {
    return Bind(index, absl::string_view(text));
  }
  SqlStatement& BindNull(int index) {
    cursor_->BindNull(index);
    return *this;
  }

  absl::StatusOr<bool> Step() { return cursor_->Step(); }
  // Steps to completion (for statements that return no rows).
  absl::Status Run();

  int64_t Int64(int column) const { return cursor_->Int64(column); }
  std::string Text(int column) const { return cursor_->Text(column); }
  bool IsNull(int column) const { return cursor_->IsNull(column); }
  int64_t Changes() const { return cursor_->Changes(); }

 private:
  std::unique_ptr<SqlCursor> cursor_;
};

// How a transaction isolates itself; see each backend for what it means there.
enum class TxnMode {
  // The store's read-write transactions: serializable (SQLite: BEGIN
  // IMMEDIATE, one writer at a time; PostgreSQL: ISOLATION LEVEL
  // SERIALIZABLE).
  kSerializable,
  // Schema migrations: SQLite as above; PostgreSQL READ COMMITTED under an
  // advisory lock, so concurrent supervisors migrate one after the other and
  // each sees what the previous one committed.
  kMigration,
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  virtual SqlDialect dialect() const = 0;
  // What to call the database in messages: a file path or a URL without
  // any password.
  virtual const std::string& description() const = 0;

  virtual absl::StatusOr<SqlStatement> Prepare(const std::string& sql) = 0;
  // Runs one or more statements that take no parameters and return no rows.
  virtual absl::Status Exec(const std::string& sql) = 0;
  // The first column of the first row of `sql`, as text ("" when no row).
  virtual absl::StatusOr<std::string> QueryText(const std::string& sql) = 0;

  virtual absl::Status Begin(TxnMode mode) = 0;
  virtual absl::Status Commit() = 0;
  // Best effort; a connection whose transaction already ended is fine.
  virtual void Rollback() = 0;
};

// Begin ... Commit; rolls back when destroyed without a successful Commit().
class SqlTransaction {
 public:
  static absl::StatusOr<std::unique_ptr<SqlTransaction>> Begin(
      SqlConnection* db, TxnMode mode = TxnMode::kSerializable);
  ~SqlTransaction();
  SqlTransaction(const SqlTransaction&) = delete;
  SqlTransaction& operator=(const SqlTransaction&) = delete;

  absl::Status Commit();

 private:
  explicit SqlTransaction(SqlConnection* db) : db_(db) {}
  SqlConnection* db_;
  bool done_ = false;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_SQL_H_
