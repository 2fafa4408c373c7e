#include "supervisor/store/metadata_schema.h"

#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice::supervisor {
namespace {

// Version 1: the tables of docs/architecture.md ("The parts", metadata store).
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE schema_version (
  version INTEGER PRIMARY KEY,
  description TEXT NOT NULL,
  applied_at_ms INTEGER NOT NULL
) STRICT;

-- One row per datasource ever submitted; the root every other row hangs on.
-- commit_topic: the topic the committed offsets belong to (NULL: none yet).
CREATE TABLE datasources (
  datasource TEXT PRIMARY KEY,
  created_at_ms INTEGER NOT NULL,
  commit_topic TEXT
) STRICT;

-- Supervisor specs with their history; a terminate writes a tombstone row.
CREATE TABLE specs (
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  version INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  spec_json TEXT NOT NULL,
  terminated INTEGER NOT NULL DEFAULT 0 CHECK (terminated IN (0, 1)),
  PRIMARY KEY (datasource, version)
) STRICT;

-- Datasource commit metadata: the next offset to read per partition, i.e.
-- everything before it is in published segments. The compare-and-swap anchor.
CREATE TABLE committed_offsets (
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  partition INTEGER NOT NULL CHECK (partition >= 0),
  next_offset INTEGER NOT NULL CHECK (next_offset >= 0),
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (datasource, partition)
) STRICT;

-- The offsets recorded when a partition was first read (the start of the
-- commit chain the exactly-once audit follows).
CREATE TABLE initial_offsets (
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  partition INTEGER NOT NULL CHECK (partition >= 0),
  start_offset INTEGER NOT NULL CHECK (start_offset >= 0),
  recorded_at_ms INTEGER NOT NULL,
  PRIMARY KEY (datasource, partition)
) STRICT;

-- The version of each segment interval: the ISO instant of its first allocation.
CREATE TABLE interval_versions (
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL,
  version TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (datasource, start_ms, end_ms),
  CHECK (end_ms > start_ms)
) STRICT;

-- Segment ids handed out by AllocateSegment; one per (sequence, interval), so
-- replicas and replacement tasks get the same id.
CREATE TABLE pending_segments (
  id TEXT PRIMARY KEY,
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  sequence_name TEXT NOT NULL,
  start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL,
  version TEXT NOT NULL,
  partition_num INTEGER NOT NULL CHECK (partition_num >= 0),
  task_id TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  UNIQUE (datasource, sequence_name, start_ms, end_ms),
  UNIQUE (datasource, start_ms, end_ms, version, partition_num)
) STRICT;

-- The commit log: one row per published sequence (possibly with no segments).
CREATE TABLE committed_sequences (
  commit_id INTEGER PRIMARY KEY AUTOINCREMENT,
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  sequence_name TEXT NOT NULL,
  task_id TEXT NOT NULL,
  committed_at_ms INTEGER NOT NULL,
  UNIQUE (datasource, sequence_name)
) STRICT;

-- Per-partition range and record accounting of each committed sequence.
CREATE TABLE committed_sequence_partitions (
  commit_id INTEGER NOT NULL REFERENCES committed_sequences(commit_id),
  partition INTEGER NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  rows INTEGER NOT NULL DEFAULT 0,
  unparseable INTEGER NOT NULL DEFAULT 0,
  thrown_away INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (commit_id, partition),
  CHECK (end_offset >= start_offset)
) STRICT;

-- Published segments. handoff_state: sluice.v1.HandoffState numbers.
CREATE TABLE segments (
  id TEXT PRIMARY KEY,
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL,
  version TEXT NOT NULL,
  partition_num INTEGER NOT NULL,
  num_rows INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  checksum TEXT NOT NULL,
  path TEXT NOT NULL,
  provenance_json TEXT NOT NULL,
  sequence_name TEXT NOT NULL,
  commit_id INTEGER NOT NULL REFERENCES committed_sequences(commit_id),
  used INTEGER NOT NULL DEFAULT 1 CHECK (used IN (0, 1)),
  created_at_ms INTEGER NOT NULL,
  handoff_state INTEGER NOT NULL,
  handed_off_at_ms INTEGER NOT NULL DEFAULT 0,
  published_by_task TEXT NOT NULL
) STRICT;
CREATE INDEX segments_by_interval ON segments (datasource, start_ms, end_ms);
CREATE INDEX segments_by_commit ON segments (commit_id);

-- Task groups (one generation of readers of a set of partitions), named by
-- their base sequence name. state: READING, PUBLISHING, DONE, ABANDONED.
CREATE TABLE task_groups (
  base_sequence_name TEXT PRIMARY KEY,
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  group_id INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('READING', 'PUBLISHING', 'DONE', 'ABANDONED')),
  spec_version INTEGER NOT NULL,
  start_offsets_json TEXT NOT NULL,
  end_offsets_json TEXT NOT NULL DEFAULT '{}',
  min_message_time_ms INTEGER NOT NULL,
  max_message_time_ms INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  completion_deadline_ms INTEGER NOT NULL DEFAULT 0,
  finished_at_ms INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX task_groups_by_state ON task_groups (datasource, state);

-- The checkpoint list of each group: sequence id -> start offsets.
CREATE TABLE task_group_checkpoints (
  base_sequence_name TEXT NOT NULL REFERENCES task_groups(base_sequence_name) ON DELETE CASCADE,
  sequence_id INTEGER NOT NULL CHECK (sequence_id >= 0),
  offsets_json TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (base_sequence_name, sequence_id)
) STRICT;

-- Tasks the supervisor created. state: sluice.v1.TaskState numbers.
CREATE TABLE tasks (
  task_id TEXT PRIMARY KEY,
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  group_id INTEGER NOT NULL,
  base_sequence_name TEXT NOT NULL,
  worker_id TEXT NOT NULL,
  state INTEGER NOT NULL,
  spec_json TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  current_offsets_json TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX tasks_by_datasource ON tasks (datasource, state);

-- Task workers seen, so a restarted supervisor can reach them before they
-- register again.
CREATE TABLE workers (
  worker_id TEXT PRIMARY KEY,
  address TEXT NOT NULL,
  capacity INTEGER NOT NULL,
  registered_at_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL
) STRICT;
)sql";

// Version 2: LOADER-mode handoff (deep-storage verification and loader
// confirmation recorded separately) and an audit trail of offset resets.
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE segments ADD COLUMN verified_at_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE segments ADD COLUMN loaded_at_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE segments ADD COLUMN loaded_by TEXT NOT NULL DEFAULT '';
CREATE INDEX segments_by_handoff ON segments (handoff_state, used);

-- Every change of stored offsets that did not come from a publish (operator
-- reset, reset offsets, automatic reset on OffsetOutOfRange).
CREATE TABLE offset_resets (
  reset_id INTEGER PRIMARY KEY AUTOINCREMENT,
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  partition INTEGER NOT NULL,
  old_offset INTEGER,
  new_offset INTEGER,
  reason TEXT NOT NULL,
  reset_at_ms INTEGER NOT NULL
) STRICT;
)sql";

// The leader lease of supervisors sharing one store (supervisor/leader_lease.h):
// at most one row, name 'supervisor'. epoch grows by one at every change of
// holder; every write transaction of a leader checks it (the fence).
// expires_at_ms is the database's clock.
constexpr char kSchemaV3[] = R"sql(
CREATE TABLE leader_lease (
  name TEXT PRIMARY KEY,
  holder_id TEXT NOT NULL,
  holder_address TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  acquired_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL
) STRICT;
)sql";

// Druid's idleConfig (supervisor/idle_tracker.h): a datasource whose stream
// stopped moving stays IDLE across restarts. NULL offsets: awake.
constexpr char kSchemaV4[] = R"sql(
ALTER TABLE datasources ADD COLUMN idle_latest_offsets_json TEXT;
ALTER TABLE datasources ADD COLUMN idle_since_ms INTEGER NOT NULL DEFAULT 0;
)sql";

// Druid's autoScalerConfig (supervisor/task_autoscaler.h): the number of
// reading groups the autoscaler chose (0: none chose yet), kept across
// restarts, and every change it applied, for the commit log.
constexpr char kSchemaV5[] = R"sql(
ALTER TABLE datasources ADD COLUMN autoscaled_task_count INTEGER NOT NULL DEFAULT 0;
CREATE TABLE scaling_decisions (
  decision_id INTEGER PRIMARY KEY AUTOINCREMENT,
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  from_task_count INTEGER NOT NULL,
  to_task_count INTEGER NOT NULL,
  reason TEXT NOT NULL,
  decided_at_ms INTEGER NOT NULL,
  applied_at_ms INTEGER NOT NULL
) STRICT;
)sql";

// ioConfig.topicPattern (common/stream_partitions.h): the stream partition
// id of each (topic, partition) a topic-pattern datasource has seen, which
// its offset maps are keyed by. Never updated or deleted: ids are not given
// again.
constexpr char kSchemaV6[] = R"sql(
CREATE TABLE stream_partitions (
  datasource TEXT NOT NULL REFERENCES datasources(datasource),
  stream_partition INTEGER NOT NULL,
  topic TEXT NOT NULL,
  kafka_partition INTEGER NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  PRIMARY KEY (datasource, stream_partition),
  UNIQUE (datasource, topic, kafka_partition)
) STRICT;
)sql";

// The SHA-256 of each published segment file ("sha256:<64 hex>"), computed by
// the supervisor over the bytes of the deep-storage copy it checked before
// the commit, and checked at handoff and re-verification: CRC-32C finds
// damage, not a deliberate change that keeps it. NULL: none recorded (rows
// from before this version, or a supervisor without deep storage).
constexpr char kSchemaV7[] = R"sql(
ALTER TABLE segments ADD COLUMN sha256 TEXT;
)sql";

// The Iceberg SQL catalog (docs/iceberg.md): the two tables of pyiceberg's
// SqlCatalog and Java's JdbcCatalog, column for column, so those catalogs
// (and Spark, Trino, Flink through them) open the tables sluice commits with
// no sluice code. Not STRICT and VARCHAR: the DDL those catalogs would run
// themselves (they create the tables only when missing). sluice's rows have
// catalog_name 'sluice'; a table's metadata_location is swapped in the same
// transaction as the datasource's offsets.
constexpr char kSchemaV8[] = R"sql(
CREATE TABLE iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name)
);
CREATE TABLE iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255) NOT NULL,
  property_value VARCHAR(1000) NOT NULL,
  PRIMARY KEY (catalog_name, namespace, property_key)
);
)sql";

// Segments replaced by others (a compaction of an interval's segments,
// StoreTxn::ReplaceSegments): which used segment replaced which, and when.
// The replaced ones are marked unused in the same transaction.
constexpr char kSchemaV9[] = R"sql(
CREATE TABLE segment_replacements (
  replaced_id TEXT NOT NULL REFERENCES segments(id),
  replacing_id TEXT NOT NULL REFERENCES segments(id),
  replaced_at_ms INTEGER NOT NULL,
  PRIMARY KEY (replaced_id, replacing_id)
) STRICT;
CREATE INDEX segment_replacements_by_replacing ON segment_replacements (replacing_id);
)sql";

// When the deep-storage file of a segment a compaction replaced was removed
// (0: still there).
constexpr char kSchemaV10[] = R"sql(
ALTER TABLE segments ADD COLUMN file_removed_at_ms INTEGER NOT NULL DEFAULT 0;
)sql";

}  // namespace

const std::vector<Migration>& SchemaMigrations() {
  static const auto* migrations = new std::vector<Migration>{
      {1, "initial tables: specs, commit metadata, segments, allocations, groups, tasks",
       kSchemaV1},
      {2, "loader handoff columns and offset reset log", kSchemaV2},
      {3, "supervisor leader lease with an epoch (failover and fencing)", kSchemaV3},
      {4, "idle state of a datasource (ioConfig.idleConfig)", kSchemaV4},
      {5, "autoscaled task count and scaling decisions (ioConfig.autoScalerConfig)", kSchemaV5},
      {6, "stream partition ids of topic-pattern datasources (ioConfig.topicPattern)", kSchemaV6},
      {7, "SHA-256 of each published segment file", kSchemaV7},
      {8, "Iceberg SQL catalog tables (iceberg_tables, iceberg_namespace_properties)", kSchemaV8},
      {9, "segment replacements (compaction)", kSchemaV9},
      {10, "removal of replaced segments' files", kSchemaV10},
  };
  return *migrations;
}

int LatestSchemaVersion() { return SchemaMigrations().back().version; }

namespace {

// Replaces whole words `from` by `to` (a word: not preceded or followed by a
// letter, digit or underscore).
std::string ReplaceWord(const std::string& text, const std::string& from, const std::string& to) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = text.find(from, pos);
    if (hit == std::string::npos) break;
    const bool starts = hit == 0 || !is_word(text[hit - 1]);
    const size_t end = hit + from.size();
    const bool ends = end == text.size() || !is_word(text[end]);
    out.append(text, pos, hit - pos);
    out.append(starts && ends ? to : from);
    pos = end;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

}  // namespace

std::string MigrationSql(const Migration& migration, SqlDialect dialect) {
  if (dialect == SqlDialect::kSqlite) return migration.sql;
  std::string sql = ReplaceWord(migration.sql, "STRICT", "");
  sql = ReplaceWord(sql, "INTEGER PRIMARY KEY AUTOINCREMENT",
                    "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
  sql = ReplaceWord(sql, "INTEGER", "BIGINT");
  sql = ReplaceWord(sql, "TEXT", "TEXT COLLATE \"C\"");
  return sql;
}

namespace {

absl::StatusOr<int> ReadSqliteTableCounts(SqlConnection* db, bool* has_version) {
  // The first read of the file: a non-database or corrupt header fails here.
  absl::StatusOr<std::string> tables = db->QueryText("SELECT count(*) FROM sqlite_master");
  if (!tables.ok()) {
    // Only a file that is not a database (or a damaged one) is data loss;
    // permissions, a read-only directory or a busy file keep their own code
    // and say what to check.
    if (tables.status().code() == absl::StatusCode::kDataLoss) {
      return absl::DataLossError(absl::StrCat(db->description(),
                                              " is not a readable SQLite database (",
                                              tables.status().message(),
                                              "); refusing to open or overwrite it"));
    }
    return absl::Status(tables.status().code(),
                        absl::StrCat("cannot read the metadata store ", db->description(), " (",
                                     tables.status().message(),
                                     "); check that this user may read and write the file, its "
                                     "-wal and -shm files and its directory"));
  }
  if (*tables == "0") return 0;
  SLUICE_ASSIGN_OR_RETURN(
      std::string has,
      db->QueryText("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                    "name = 'schema_version'"));
  *has_version = has == "1";
  return 1;
}

absl::StatusOr<int> ReadPostgresTableCounts(SqlConnection* db, bool* has_version) {
  absl::StatusOr<std::string> tables = db->QueryText(
      "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()");
  if (!tables.ok()) {
    return absl::Status(tables.status().code(),
                        absl::StrCat("cannot read the metadata store ", db->description(), " (",
                                     tables.status().message(), ")"));
  }
  if (*tables == "0") return 0;
  SLUICE_ASSIGN_OR_RETURN(
      std::string has,
      db->QueryText("SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                    "current_schema() AND table_name = 'schema_version'"));
  *has_version = has == "1";
  return 1;
}

}  // namespace

absl::StatusOr<int> ReadSchemaVersion(SqlConnection* db) {
  bool has_version = false;
  SLUICE_ASSIGN_OR_RETURN(const int tables, db->dialect() == SqlDialect::kSqlite
                                                ? ReadSqliteTableCounts(db, &has_version)
                                                : ReadPostgresTableCounts(db, &has_version));
  if (tables == 0) return 0;
  if (!has_version) {
    return absl::FailedPreconditionError(
        absl::StrCat(db->description(),
                     db->dialect() == SqlDialect::kSqlite ? " is an SQLite database"
                                                          : " is a PostgreSQL schema with tables",
                     " without a sluice schema_version table: not a sluice metadata store; "
                     "refusing to use it"));
  }
  absl::StatusOr<std::string> version =
      db->QueryText("SELECT coalesce(max(version), 0) FROM schema_version");
  if (!version.ok()) {
    return absl::DataLossError(absl::StrCat("reading the schema version of ", db->description(), ": ",
                                            version.status().message()));
  }
  int parsed = 0;
  if (!absl::SimpleAtoi(*version, &parsed)) {
    return absl::DataLossError(
        absl::StrCat(db->description(), ": schema version \"", *version, "\" is not a number"));
  }
  return parsed;
}

absl::Status MigrateSchema(SqlConnection* db, int target_version, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(int current, ReadSchemaVersion(db));
  if (current > target_version) {
    return absl::FailedPreconditionError(absl::StrCat(
        db->description(), " has schema version ", current, ", newer than the ", target_version,
        " this sluice-supervisor supports; refusing to open it (upgrade the supervisor)"));
  }
  for (const Migration& migration : SchemaMigrations()) {
    if (migration.version <= current || migration.version > target_version) continue;
    SLUICE_ASSIGN_OR_RETURN(auto txn, SqlTransaction::Begin(db, TxnMode::kMigration));
    // Another supervisor may have applied it while this one waited for the lock.
    SLUICE_ASSIGN_OR_RETURN(const int now_current, ReadSchemaVersion(db));
    if (now_current >= migration.version) continue;
    SLUICE_RETURN_IF_ERROR(Annotate(db->Exec(MigrationSql(migration, db->dialect())),
                                    absl::StrCat("schema migration ", migration.version)));
    SLUICE_ASSIGN_OR_RETURN(auto insert,
                            db->Prepare("INSERT INTO schema_version (version, "
                                        "description, applied_at_ms) VALUES (?, ?, ?)"));
    insert.Bind(1, migration.version).Bind(2, migration.description).Bind(3, now_ms);
    SLUICE_RETURN_IF_ERROR(insert.Run());
    SLUICE_RETURN_IF_ERROR(txn->Commit());
  }
  return absl::OkStatus();
}

}  // namespace sluice::supervisor
