#include "supervisor/store/postgres.h"

#include <libpq-fe.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <glog/logging.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::supervisor {
namespace {

constexpr unsigned kInt8Oid = 20;
constexpr unsigned kTextOid = 25;
// pg_advisory_xact_lock key of schema migrations ("sluice" in ASCII).
constexpr char kMigrationLockKey[] = "126909663503205";  // 0x736c75696365

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

absl::Status CodeForSqlState(const std::string& state, std::string message) {
  auto klass = [&](const char* prefix) { return absl::StartsWith(state, prefix); };
  if (state == "40001" || state == "40P01") return SerializationFailure(message);
  if (klass("08") || state == "57P01" || state == "57P02" || state == "57P03" ||
      state == "55P03" || state == "53300") {
    return absl::UnavailableError(message);
  }
  if (state == "23505") return UniqueViolation(message);
  if (klass("23")) return absl::AlreadyExistsError(message);
  if (klass("28") || state == "42501") return absl::PermissionDeniedError(message);
  if (state == "3D000") return absl::FailedPreconditionError(message);
  if (state == "XX001" || state == "XX002") return absl::DataLossError(message);
  if (klass("53")) return absl::UnavailableError(message);
  return absl::InternalError(message);
}

// A statement run with PQexecParams when stepped; its rows are buffered.
class PostgresCursor : public SqlCursor {
 public:
  PostgresCursor(PostgresDb* db, std::string sql) : db_(db), sql_(std::move(sql)) {}
  ~PostgresCursor() override { Clear(); }

  void BindInt64(int index, int64_t value) override {
    Slot(index) = std::to_string(value);
    types_[index - 1] = kInt8Oid;
  }
  void BindText(int index, absl::string_view text) override {
    Slot(index) = std::string(text);
    types_[index - 1] = kTextOid;
  }
  void BindNull(int index) override {
    Slot(index).reset();
    types_[index - 1] = 0;
  }

  absl::StatusOr<bool> Step() override {
    if (result_ == nullptr) {
      std::vector<const char*> values;
      values.reserve(values_.size());
      for (const auto& value : values_) values.push_back(value ? value->c_str() : nullptr);
      SLUICE_ASSIGN_OR_RETURN(result_, db_->Execute(sql_, types_, values));
      row_ = -1;
    }
    if (++row_ < PQntuples(result_)) return true;
    Clear();
    return false;
  }

  int64_t Int64(int column) const override {
    return std::strtoll(PQgetvalue(result_, row_, column), nullptr, 10);
  }
  std::string Text(int column) const override {
    return std::string(PQgetvalue(result_, row_, column), PQgetlength(result_, row_, column));
  }
  bool IsNull(int column) const override { return PQgetisnull(result_, row_, column) != 0; }
  int64_t Changes() const override { return db_->changes(); }

 private:
  std::optional<std::string>& Slot(int index) {
    if (static_cast<size_t>(index) > values_.size()) {
      values_.resize(index);
      types_.resize(index, 0);
    }
    return values_[index - 1];
  }
  void Clear() {
    if (result_ != nullptr) PQclear(result_);
    result_ = nullptr;
  }

  PostgresDb* db_;
  const std::string sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<unsigned> types_;
  PGresult* result_ = nullptr;
  int row_ = -1;
};

// Server notices (e.g. "there is no transaction in progress") go to the
// verbose log, not to stderr.
void LogNotice(void*, const char* message) { VLOG(1) << "[metadata store] " << message; }

}  // namespace

std::string PostgresPlaceholders(absl::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 8);
  int next = 0;
  char quote = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      out.push_back(c);
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      out.push_back(c);
      continue;
    }
    if (c != '?') {
      out.push_back(c);
      continue;
    }
    size_t j = i + 1;
    while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) ++j;
    if (j == i + 1) {
      absl::StrAppend(&out, "$", ++next);
    } else {
      absl::StrAppend(&out, "$", sql.substr(i + 1, j - i - 1));
      i = j - 1;
    }
  }
  return out;
}

absl::Status PostgresStatus(const PGresult* result, PGconn* conn, absl::string_view context) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message =
      Trimmed(result && PQresultErrorMessage(result)[0] ? PQresultErrorMessage(result)
                                                        : PQerrorMessage(conn));
  message = absl::StrCat(context, ": ", message);
  if (state != nullptr) absl::StrAppend(&message, " (SQLSTATE ", state, ")");
  if (PQstatus(conn) == CONNECTION_BAD) {
    return absl::UnavailableError(absl::StrCat(message, " (connection lost)"));
  }
  if (state == nullptr) return absl::UnavailableError(message);
  return CodeForSqlState(state, std::move(message));
}

absl::StatusOr<std::unique_ptr<PostgresDb>> PostgresDb::Connect(
    const PostgresConnectOptions& options) {
  std::vector<std::pair<std::string, std::string>> params = options.params;
  auto has = [&](const char* key) {
    for (const auto& [k, v] : params) {
      if (k == key) return true;
    }
    return false;
  };
  if (!has("application_name")) params.emplace_back("application_name", "sluice-supervisor");
  if (!has("connect_timeout")) params.emplace_back("connect_timeout", "10");
  if (!options.password_file.empty()) {
    std::ifstream in(options.password_file);
    std::string password;
    if (!in || !std::getline(in, password)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot read the metadata store's password_file ", options.password_file));
    }
    if (!password.empty() && password.back() == '\r') password.pop_back();
    params.emplace_back("password", std::move(password));
  }
  std::vector<const char*> keys;
  std::vector<const char*> values;
  for (const auto& [k, v] : params) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/0);
  if (conn == nullptr) return absl::ResourceExhaustedError("libpq: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    // libpq's message names host, user and database, never the password.
    const std::string detail = Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    const std::string message =
        absl::StrCat("cannot connect to the metadata store ", options.url, ": ", detail);
    if (absl::StrContains(detail, "password authentication failed") ||
        absl::StrContains(detail, "no password supplied") ||
        absl::StrContains(detail, "certificate")) {
      return absl::PermissionDeniedError(message);
    }
    if (absl::StrContains(detail, "does not exist")) return absl::FailedPreconditionError(message);
    return absl::UnavailableError(message);
  }
  PQsetNoticeProcessor(conn, LogNotice, nullptr);
  std::unique_ptr<PostgresDb> db(new PostgresDb(conn, options.url, options.lock_timeout_ms));
  SLUICE_RETURN_IF_ERROR(db->SetUpSession());
  return db;
}

PostgresDb::~PostgresDb() { PQfinish(conn_); }

absl::Status PostgresDb::SetUpSession() {
  return Simple(absl::StrCat("SET lock_timeout = ", lock_timeout_ms_,
                             "; SET client_min_messages = warning"));
}

absl::Status PostgresDb::EnsureConnected() {
  if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  LOG(WARNING) << "[metadata store] connection to " << description_ << " lost; reconnecting";
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat("metadata store ", description_,
                                               " unreachable: ", Trimmed(PQerrorMessage(conn_))));
  }
  return SetUpSession();
}

absl::Status PostgresDb::Simple(const std::string& sql) {
  PGresult* result = PQexec(conn_, sql.c_str());
  const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  absl::Status out = absl::OkStatus();
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    out = PostgresStatus(result, conn_, sql.substr(0, 80));
  }
  PQclear(result);
  return out;
}

absl::StatusOr<PGresult*> PostgresDb::Execute(const std::string& sql,
                                              const std::vector<unsigned>& types,
                                              const std::vector<const char*>& values) {
  // A savepoint before each statement of a transaction, so that a failed
  // statement undoes only itself (see postgres.h). RELEASE of the previous
  // one and the new SAVEPOINT travel in one round trip.
  if (in_transaction_) {
    SLUICE_RETURN_IF_ERROR(Simple("RELEASE SAVEPOINT sluice_statement; SAVEPOINT sluice_statement"));
  }
  static_assert(sizeof(unsigned) == sizeof(Oid), "Oid is an unsigned int");
  PGresult* result =
      PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()),
                   reinterpret_cast<const Oid*>(types.data()), values.data(), nullptr, nullptr, 0);
  const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    changes_ = std::strtoll(PQcmdTuples(result), nullptr, 10);
    return result;
  }
  absl::Status error = PostgresStatus(result, conn_, sql);
  PQclear(result);
  if (in_transaction_ && PQstatus(conn_) == CONNECTION_OK) {
    SLUICE_RETURN_IF_ERROR(Simple("ROLLBACK TO SAVEPOINT sluice_statement"));
  }
  return error;
}

absl::StatusOr<SqlStatement> PostgresDb::Prepare(const std::string& sql) {
  return SqlStatement(std::make_unique<PostgresCursor>(this, PostgresPlaceholders(sql)));
}

absl::Status PostgresDb::Exec(const std::string& sql) {
  if (in_transaction_) {
    SLUICE_RETURN_IF_ERROR(Simple("RELEASE SAVEPOINT sluice_statement; SAVEPOINT sluice_statement"));
  }
  absl::Status status = Simple(sql);
  if (!status.ok() && in_transaction_ && PQstatus(conn_) == CONNECTION_OK) {
    SLUICE_RETURN_IF_ERROR(Simple("ROLLBACK TO SAVEPOINT sluice_statement"));
  }
  return status;
}

absl::StatusOr<std::string> PostgresDb::QueryText(const std::string& sql) {
  if (!in_transaction_) SLUICE_RETURN_IF_ERROR(EnsureConnected());
  SLUICE_ASSIGN_OR_RETURN(PGresult * result, Execute(sql, {}, {}));
  std::string text;
  if (PQntuples(result) > 0 && PQnfields(result) > 0) {
    text.assign(PQgetvalue(result, 0, 0), PQgetlength(result, 0, 0));
  }
  PQclear(result);
  return text;
}

absl::Status PostgresDb::Begin(TxnMode mode) {
  SLUICE_RETURN_IF_ERROR(EnsureConnected());
  const std::string begin =
      mode == TxnMode::kMigration
          ? absl::StrCat("BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(",
                         kMigrationLockKey, ")")
          : std::string("BEGIN ISOLATION LEVEL SERIALIZABLE");
  SLUICE_RETURN_IF_ERROR(Simple(absl::StrCat(begin, "; SAVEPOINT sluice_statement")));
  in_transaction_ = true;
  return absl::OkStatus();
}

absl::Status PostgresDb::Commit() {
  in_transaction_ = false;
  PGresult* result = PQexec(conn_, "COMMIT");
  const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  absl::Status out = absl::OkStatus();
  if (status != PGRES_COMMAND_OK) {
    // A serialization failure detected at commit is 40001 here.
    out = PostgresStatus(result, conn_, "COMMIT");
  } else if (std::string(PQcmdStatus(result)) != "COMMIT") {
    // COMMIT of a transaction that had failed answers ROLLBACK.
    out = absl::AbortedError(
        absl::StrCat("metadata store ", description_, ": the transaction was rolled back"));
  }
  PQclear(result);
  return out;
}

void PostgresDb::Rollback() {
  const bool was = in_transaction_;
  in_transaction_ = false;
  if (!was || PQstatus(conn_) != CONNECTION_OK) return;
  Simple("ROLLBACK").IgnoreError();
}

}  // namespace sluice::supervisor
