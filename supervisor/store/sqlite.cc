#include "supervisor/store/sqlite.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::supervisor {

absl::Status SqliteStatus(int rc, absl::string_view context, absl::string_view detail) {
  const std::string message =
      absl::StrCat(context, ": ", detail.empty() ? sqlite3_errstr(rc) : detail, " (sqlite ",
                   sqlite3_errstr(rc), ")");
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PROTOCOL:
      return absl::UnavailableError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(message);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

// ---- statement ----

namespace {

// A cached prepared statement; resets and clears its bindings on
// destruction so the cache can hand it out again.
class SqliteCursor : public SqlCursor {
 public:
  SqliteCursor(SqliteDb* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteCursor() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  void BindInt64(int index, int64_t value) override {
    Check(sqlite3_bind_int64(stmt_, index, value));
  }
  void BindText(int index, absl::string_view text) override {
    Check(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                            SQLITE_TRANSIENT));
  }
  void BindNull(int index) override { Check(sqlite3_bind_null(stmt_, index)); }

  absl::StatusOr<bool> Step() override {
    if (!bind_status_.ok()) return bind_status_;
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    // Reset at once (bindings stay), so the statement can be bound again.
    if (rc == SQLITE_DONE) {
      sqlite3_reset(stmt_);
      return false;
    }
    absl::Status status = SqliteStatus(rc, sqlite3_sql(stmt_), sqlite3_errmsg(db_->handle()));
    sqlite3_reset(stmt_);
    return status;
  }

  int64_t Int64(int column) const override { return sqlite3_column_int64(stmt_, column); }
  std::string Text(int column) const override {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    if (text == nullptr) return "";
    return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, column));
  }
  bool IsNull(int column) const override {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  int64_t Changes() const override { return sqlite3_changes(db_->handle()); }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK && bind_status_.ok()) {
      bind_status_ = SqliteStatus(rc, "bind", sqlite3_sql(stmt_));
    }
  }

  SqliteDb* db_;
  sqlite3_stmt* stmt_;
  // First binding error, reported by Step().
  absl::Status bind_status_;
};

}  // namespace

// ---- connection ----

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status =
        SqliteStatus(rc, absl::StrCat("open ", path), db ? sqlite3_errmsg(db) : "");
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

absl::StatusOr<SqlStatement> SqliteDb::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      return SqliteStatus(rc, absl::StrCat("prepare \"", sql, "\""), sqlite3_errmsg(db_));
    }
    it = cache_.emplace(sql, stmt).first;
  }
  return SqlStatement(std::make_unique<SqliteCursor>(this, it->second));
}

absl::Status SqliteDb::Exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return absl::OkStatus();
  absl::Status status = SqliteStatus(rc, sql.substr(0, 80), error ? error : "");
  sqlite3_free(error);
  return status;
}

absl::StatusOr<std::string> SqliteDb::QueryText(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(rc, sql, sqlite3_errmsg(db_));
  std::string result;
  rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    if (text != nullptr) result = reinterpret_cast<const char*>(text);
  } else if (rc != SQLITE_DONE) {
    absl::Status status = SqliteStatus(rc, sql, sqlite3_errmsg(db_));
    sqlite3_finalize(stmt);
    return status;
  }
  sqlite3_finalize(stmt);
  return result;
}

absl::Status SqliteDb::SetBusyTimeout(int milliseconds) {
  const int rc = sqlite3_busy_timeout(db_, milliseconds);
  if (rc != SQLITE_OK) return SqliteStatus(rc, "busy timeout", sqlite3_errmsg(db_));
  return absl::OkStatus();
}

// ---- transaction ----

absl::Status SqliteDb::RunCached(const std::string& sql) {
  SLUICE_ASSIGN_OR_RETURN(SqlStatement statement, Prepare(sql));
  return statement.Run();
}

absl::Status SqliteDb::Begin(TxnMode) { return RunCached("BEGIN IMMEDIATE"); }

absl::Status SqliteDb::Commit() { return RunCached("COMMIT"); }

void SqliteDb::Rollback() {
  if (sqlite3_get_autocommit(db_)) return;  // no transaction open: SQLite already rolled back
  RunCached("ROLLBACK").IgnoreError();
}

}  // namespace sluice::supervisor
