// The metadata store's schema as an ordered list of migrations. Version N of
// the schema is migrations 1..N applied in order; the applied versions are
// rows of the `schema_version` table. A migration is never edited once
// released: changes are new migrations.
#ifndef SLUICE_SUPERVISOR_STORE_METADATA_SCHEMA_H_
#define SLUICE_SUPERVISOR_STORE_METADATA_SCHEMA_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

struct Migration {
  int version;
  const char* description;
  // One or more SQL statements, in SQLite's dialect.
  const char* sql;
};

// A migration's statements for `dialect`. PostgreSQL gets the SQLite text
// rewritten word by word (no STRICT; INTEGER is BIGINT, as SQLite's INTEGER
// is 64-bit; INTEGER PRIMARY KEY AUTOINCREMENT is a BIGINT identity column;
// TEXT compares bytewise, COLLATE "C", as SQLite's BINARY collation does, so
// ORDER BY on names gives the same order on both backends). The rewrite is
// part of the released migrations: change it only for new migrations.
std::string MigrationSql(const Migration& migration, SqlDialect dialect);

// Every migration, ascending by version.
const std::vector<Migration>& SchemaMigrations();

// The newest schema version this build knows.
int LatestSchemaVersion();

// The version recorded in `db`: 0 for an empty database (no tables at all;
// on PostgreSQL: in the connection's current schema).
// DATA_LOSS when the file is not an SQLite database or is corrupt;
// FAILED_PRECONDITION when it is a database with tables but no sluice
// schema_version table (someone else's database).
absl::StatusOr<int> ReadSchemaVersion(SqlConnection* db);

// Applies the migrations after the recorded version up to `target_version`,
// each in its own transaction (TxnMode::kMigration, so supervisors sharing a
// PostgreSQL database migrate one at a time and each applies a version once).
// FAILED_PRECONDITION if the database is newer than `target_version`.
absl::Status MigrateSchema(SqlConnection* db, int target_version, int64_t now_ms);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_METADATA_SCHEMA_H_
