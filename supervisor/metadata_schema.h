// The metadata store's schema as an ordered list of migrations. Version N of
// the schema is migrations 1..N applied in order; the applied versions are
// rows of the `schema_version` table. A migration is never edited once
// released: changes are new migrations.
#ifndef SLUICE_SUPERVISOR_METADATA_SCHEMA_H_
#define SLUICE_SUPERVISOR_METADATA_SCHEMA_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "supervisor/sqlite.h"

namespace sluice::supervisor {

struct Migration {
  int version;
  const char* description;
  // One or more SQL statements.
  const char* sql;
};

// Every migration, ascending by version.
const std::vector<Migration>& SchemaMigrations();

// The newest schema version this build knows.
int LatestSchemaVersion();

// The version recorded in `db`: 0 for an empty database (no tables at all).
// DATA_LOSS when the file is not an SQLite database or is corrupt;
// FAILED_PRECONDITION when it is a database with tables but no sluice
// schema_version table (someone else's file).
absl::StatusOr<int> ReadSchemaVersion(SqliteDb* db);

// Applies the migrations after the recorded version up to `target_version`,
// each in its own transaction. FAILED_PRECONDITION if the database is newer
// than `target_version`.
absl::Status MigrateSchema(SqliteDb* db, int target_version, int64_t now_ms);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_METADATA_SCHEMA_H_
