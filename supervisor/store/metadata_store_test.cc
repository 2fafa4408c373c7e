#include "supervisor/store/metadata_store.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <stdlib.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "supervisor/store/metadata_schema.h"
#include "supervisor/store/postgres.h"
#include "supervisor/store/postgres_url.h"
#include "supervisor/store/sqlite.h"
#include "supervisor/testing/test_store.h"

namespace sluice::supervisor {
namespace {

class MetadataStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
    std::string tmpl = base + "/store_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/metadata.db";
  }
  void TearDown() override { RemoveAll(dir_).IgnoreError(); }

  absl::StatusOr<std::unique_ptr<MetadataStore>> Open(int target_version = 0) {
    MetadataStoreOptions options;
    options.path = path_;
    options.target_schema_version = target_version;
    return MetadataStore::Open(options);
  }

  static v1::SupervisorSpec Spec(const std::string& topic) {
    v1::SupervisorSpec spec;
    spec.set_datasource("wiki");
    spec.mutable_io_config()->set_topic(topic);
    return spec;
  }

  std::string dir_;
  std::string path_;
};

using testing::TestBackend;

// The tests every backend passes (the ones above are about the SQLite file).
class StoreTest : public MetadataStoreTest, public ::testing::WithParamInterface<TestBackend> {
 protected:
  absl::StatusOr<std::unique_ptr<MetadataStore>> Open(int target_version = 0) {
    SLUICE_ASSIGN_OR_RETURN(MetadataStoreOptions options,
                            testing::TestStoreOptions(GetParam(), dir_));
    options.target_schema_version = target_version;
    return MetadataStore::Open(options);
  }

  // A plain connection to the store's database, for SQL the store would not run.
  absl::StatusOr<std::unique_ptr<SqlConnection>> Raw() {
    SLUICE_ASSIGN_OR_RETURN(MetadataStoreOptions options,
                            testing::TestStoreOptions(GetParam(), dir_));
    if (GetParam() == TestBackend::kSqlite) {
      SLUICE_ASSIGN_OR_RETURN(auto db, SqliteDb::Open(options.path));
      return std::unique_ptr<SqlConnection>(std::move(db));
    }
    SLUICE_ASSIGN_OR_RETURN(PostgresConnectOptions connect, ParsePostgresUrl(options.postgres_url));
    SLUICE_ASSIGN_OR_RETURN(auto db, PostgresDb::Connect(connect));
    return std::unique_ptr<SqlConnection>(std::move(db));
  }
};

TEST_F(MetadataStoreTest, FreshStoreHasLatestSchemaWalFullSyncAndForeignKeys) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(*(*store)->SchemaVersion(), LatestSchemaVersion());
  EXPECT_EQ(*(*store)->Pragma("journal_mode"), "wal");
  EXPECT_EQ(*(*store)->Pragma("synchronous"), "2");  // FULL
  EXPECT_EQ(*(*store)->Pragma("foreign_keys"), "1");
  EXPECT_TRUE(PathExists(path_ + "-wal"));
}

TEST_P(StoreTest, ReopenKeepsData) {
  {
    auto store = Open();
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      auto version = txn.InsertSpec("wiki", Spec("edits"), false, 1000);
                      if (!version.ok()) return version.status();
                      EXPECT_EQ(*version, 1);
                      return txn.SetCommittedOffsets("wiki", "edits", {{0, 5}, {1, 7}}, 1000);
                    })
                    .ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto spec = txn.LatestSpec("wiki");
                    EXPECT_TRUE(spec.ok() && spec->has_value());
                    EXPECT_EQ((*spec)->spec.io_config().topic(), "edits");
                    EXPECT_EQ(*txn.CommittedOffsets("wiki"), (OffsetMap{{0, 5}, {1, 7}}));
                    EXPECT_EQ(**txn.CommitTopic("wiki"), "edits");
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, MigratesAnOlderSchemaKeepingItsRows) {
  {
    auto store = Open(/*target_version=*/1);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ(*(*store)->SchemaVersion(), 1);
    ASSERT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) {
                      return txn.InsertSpec("wiki", Spec("edits"), false, 1000).status();
                    })
                    .ok());
    // Version 1 has no offset_resets table.
    auto missing = (*store)->InTransaction(
        [](StoreTxn& txn) { return txn.RecordOffsetReset("wiki", 0, 1, 2, "test", 1); });
    EXPECT_FALSE(missing.ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(*(*store)->SchemaVersion(), LatestSchemaVersion());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto history = txn.SpecHistory("wiki");
                    EXPECT_EQ(history->size(), 1u);
                    return txn.RecordOffsetReset("wiki", 0, 1, 2, "after migration", 1);
                  })
                  .ok());
}

// Version 7 adds segments.sha256: rows committed before it keep NULL (no
// digest recorded, read as empty), rows committed after it carry theirs.
TEST_P(StoreTest, SegmentDigestColumnIsAddedWithOldRowsLeftWithout) {
  int64_t commit_id = 0;
  {
    auto store = Open(/*target_version=*/6);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_RETURN_IF_ERROR(
                          txn.InsertSpec("wiki", Spec("edits"), false, 1000).status());
                      SLUICE_ASSIGN_OR_RETURN(commit_id,
                                              txn.InsertCommittedSequence(
                                                  "wiki", "wiki_a_0", "t", {{0, 0}}, {{0, 5}},
                                                  {}, 1000));
                      return absl::OkStatus();
                    })
                    .ok());
  }
  {
    auto db = Raw();
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)
                    ->Exec(absl::StrCat(
                        "INSERT INTO segments (id, datasource, start_ms, end_ms, version, "
                        "partition_num, num_rows, size_bytes, checksum, path, provenance_json, "
                        "sequence_name, commit_id, used, created_at_ms, handoff_state, "
                        "published_by_task) VALUES ('old', 'wiki', 0, 3600000, 'v', 0, 5, 100, "
                        "'crc32c:00000000', 'file:///deep/old', '{}', 'wiki_a_0', ",
                        commit_id, ", 1, 1000, 1, 't')"))
                    .ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(*(*store)->SchemaVersion(), LatestSchemaVersion());
  const std::string digest = "sha256:" + std::string(64, 'a');
  std::vector<HandoffCandidate> candidates;
  std::vector<v1::SegmentDescriptor> listed;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    v1::SegmentDescriptor s;
                    s.set_id("new");
                    s.set_datasource("wiki");
                    s.mutable_interval()->set_start_ms(3600000);
                    s.mutable_interval()->set_end_ms(7200000);
                    s.set_version("v");
                    s.set_num_rows(5);
                    s.set_size_bytes(100);
                    s.set_checksum("crc32c:00000000");
                    s.set_path("file:///deep/new");
                    s.set_sequence_name("wiki_a_0");
                    SLUICE_RETURN_IF_ERROR(txn.InsertSegment(s, digest, commit_id, "t", 2000));
                    SLUICE_ASSIGN_OR_RETURN(candidates, txn.HandoffCandidates(10));
                    SLUICE_ASSIGN_OR_RETURN(listed, txn.ListSegments("wiki", nullptr, false, 10));
                    return absl::OkStatus();
                  })
                  .ok());
  // Listings carry the digest (the audit checks files against it).
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].sha256(), "");
  EXPECT_EQ(listed[1].sha256(), digest);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].id, "old");
  EXPECT_EQ(candidates[0].sha256, "");
  EXPECT_EQ(candidates[1].id, "new");
  EXPECT_EQ(candidates[1].sha256, digest);
  auto db = Raw();
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(*(*db)->QueryText("SELECT id FROM segments WHERE sha256 IS NULL"), "old");
}

// Version 8: the Iceberg SQL catalog's tables, column for column what
// pyiceberg's SqlCatalog and Java's JdbcCatalog use, and the catalog's
// compare-and-swap on metadata_location.
TEST_P(StoreTest, IcebergCatalogTablesComeWithVersion8AndSwapLikeTheSqlCatalog) {
  {
    auto old = Open(/*target_version=*/7);
    ASSERT_TRUE(old.ok()) << old.status();
    EXPECT_FALSE((*old)
                     ->InTransaction([](StoreTxn& txn) {
                       return txn.IcebergMetadataLocation("sluice", "wiki").status();
                     })
                     .ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  auto swap = [&](std::optional<std::string> expected, const std::string& next) {
    bool swapped = false;
    EXPECT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(swapped, txn.SwapIcebergMetadataLocation(
                                                           "sluice", "wiki", expected, next));
                      return absl::OkStatus();
                    })
                    .ok());
    return swapped;
  };
  EXPECT_TRUE(swap(std::nullopt, "file:///t/metadata/00000-a.metadata.json"));
  EXPECT_FALSE(swap(std::nullopt, "file:///t/metadata/00000-b.metadata.json"));  // exists
  EXPECT_FALSE(swap("file:///t/metadata/00009-x.metadata.json", "file:///t/m/2"));
  EXPECT_TRUE(swap("file:///t/metadata/00000-a.metadata.json",
                   "file:///t/metadata/00001-c.metadata.json"));
  auto db = Raw();
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(*(*db)->QueryText("SELECT catalog_name || '|' || table_namespace || '|' || table_name "
                              "|| '|' || metadata_location || '|' || previous_metadata_location "
                              "|| '|' || iceberg_type FROM iceberg_tables"),
            "sluice|sluice|wiki|file:///t/metadata/00001-c.metadata.json|"
            "file:///t/metadata/00000-a.metadata.json|TABLE");
  EXPECT_EQ(*(*db)->QueryText("SELECT catalog_name || '|' || namespace || '|' || property_key || "
                              "'|' || property_value FROM iceberg_namespace_properties"),
            "sluice|sluice|exists|true");
  // The DDL a SQL catalog runs itself finds the tables already there: the
  // columns it inserts and reads exist (a pyiceberg-style row).
  ASSERT_TRUE((*db)
                  ->Exec("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                         "metadata_location, previous_metadata_location, iceberg_type) VALUES "
                         "('other', 'default', 't', NULL, NULL, 'TABLE')")
                  .ok());
}

// What the Iceberg REST catalog reads: namespaces (with properties or
// tables), their properties and their tables, of catalog 'sluice' only,
// sorted and paged; views and other catalogs' rows are not listed.
TEST_P(StoreTest, IcebergCatalogListsNamespacesAndTablesOfCatalogSluicePaged) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  auto db = Raw();
  ASSERT_TRUE(db.ok()) << db.status();
  for (const char* row :
       {"('sluice', 'b', 't2', 'file:///x', NULL, 'TABLE')",
        "('sluice', 'b', 't1', 'file:///x', NULL, NULL)",
        "('sluice', 'b', 'v1', 'file:///x', NULL, 'VIEW')",
        "('sluice', 'c', 't3', 'file:///x', NULL, 'TABLE')",
        "('other', 'z', 't9', 'file:///x', NULL, 'TABLE')"}) {
    ASSERT_TRUE((*db)->Exec(absl::StrCat("INSERT INTO iceberg_tables (catalog_name, "
                                         "table_namespace, table_name, metadata_location, "
                                         "previous_metadata_location, iceberg_type) VALUES ",
                                         row))
                    .ok());
  }
  for (const char* row : {"('sluice', 'a', 'exists', 'true')", "('sluice', 'b', 'owner', 'me')",
                          "('sluice', 'b', 'exists', 'true')", "('other', 'y', 'exists', 'true')"}) {
    ASSERT_TRUE((*db)->Exec(absl::StrCat("INSERT INTO iceberg_namespace_properties (catalog_name, "
                                         "namespace, property_key, property_value) VALUES ",
                                         row))
                    .ok());
  }
  std::vector<std::string> all, page, after_a, tables, tables_after_t1, none;
  std::optional<std::map<std::string, std::string>> props_b, props_c, props_y, props_b1;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(all, txn.IcebergNamespaces("", 100));
                    SLUICE_ASSIGN_OR_RETURN(page, txn.IcebergNamespaces("", 2));
                    SLUICE_ASSIGN_OR_RETURN(after_a, txn.IcebergNamespaces("a", 100));
                    SLUICE_ASSIGN_OR_RETURN(props_b, txn.IcebergNamespaceProperties("b", 100));
                    SLUICE_ASSIGN_OR_RETURN(props_b1, txn.IcebergNamespaceProperties("b", 1));
                    SLUICE_ASSIGN_OR_RETURN(props_c, txn.IcebergNamespaceProperties("c", 100));
                    SLUICE_ASSIGN_OR_RETURN(props_y, txn.IcebergNamespaceProperties("y", 100));
                    SLUICE_ASSIGN_OR_RETURN(tables, txn.IcebergTableNames("b", "", 100));
                    SLUICE_ASSIGN_OR_RETURN(tables_after_t1, txn.IcebergTableNames("b", "t1", 1));
                    SLUICE_ASSIGN_OR_RETURN(none, txn.IcebergTableNames("z", "", 100));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(all, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(page, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(after_a, (std::vector<std::string>{"b", "c"}));
  ASSERT_TRUE(props_b.has_value());
  EXPECT_EQ(*props_b, (std::map<std::string, std::string>{{"exists", "true"}, {"owner", "me"}}));
  ASSERT_TRUE(props_b1.has_value());
  EXPECT_EQ(props_b1->size(), 1u);
  ASSERT_TRUE(props_c.has_value());  // a namespace with a table only
  EXPECT_TRUE(props_c->empty());
  EXPECT_FALSE(props_y.has_value());  // another catalog's
  EXPECT_EQ(tables, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(tables_after_t1, (std::vector<std::string>{"t2"}));
  EXPECT_TRUE(none.empty());
}

TEST_P(StoreTest, RefusesANewerSchemaAndLeavesItUntouched) {
  {
    auto store = Open();
    ASSERT_TRUE(store.ok()) << store.status();
  }
  auto db = Raw();
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("INSERT INTO schema_version VALUES (99, 'from the future', 0)").ok());
  const std::string count_tables =
      GetParam() == TestBackend::kSqlite
          ? "SELECT count(*) FROM sqlite_master"
          : "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'";
  auto tables_before = (*db)->QueryText(count_tables);
  auto before = GetParam() == TestBackend::kSqlite ? ReadFile(path_) : absl::StatusOr<std::string>("");
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("schema version 99"), std::string::npos)
      << store.status();
  if (GetParam() == TestBackend::kSqlite) {
    EXPECT_EQ(*ReadFile(path_), *before);
  }
  EXPECT_EQ(*(*db)->QueryText(count_tables), *tables_before);
  EXPECT_EQ(*(*db)->QueryText("SELECT count(*) FROM schema_version"),
            std::to_string(LatestSchemaVersion() + 1));
}

TEST_F(MetadataStoreTest, RefusesACorruptFileWithoutOverwritingIt) {
  const std::string garbage(8192, 'x');
  ASSERT_TRUE(WriteFileAtomically(path_, garbage).ok());
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_NE(store.status().message().find("not a readable SQLite database"), std::string::npos)
      << store.status();
  EXPECT_EQ(*ReadFile(path_), garbage);
  EXPECT_FALSE(PathExists(path_ + "-wal"));
}

TEST_F(MetadataStoreTest, AFileItCannotOpenForWritingIsNotCalledDataLoss) {
  { ASSERT_TRUE(Open().ok()); }  // a real store, in WAL mode, closed cleanly
  // SQLite cannot open its write-ahead log beside the database: what a
  // read-only directory or a file owned by someone else looks like to it.
  ASSERT_EQ(mkdir((path_ + "-wal").c_str(), 0700), 0);
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_NE(store.status().message().find("cannot read the metadata store " + path_),
            std::string::npos)
      << store.status();
  EXPECT_NE(store.status().message().find("may read and write"), std::string::npos);
}

TEST_F(MetadataStoreTest, ADirectoryThatIsNotWritableIsPermissionDenied) {
  // Root writes to any directory, so as root the open runs in a child that
  // drops to an unprivileged user (for whom the 0700 root-owned directory is
  // closed); otherwise the directory is made read-only.
  const bool root = getuid() == 0;
  if (!root) {
    ASSERT_EQ(chmod(dir_.c_str(), 0500), 0);
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    if (root && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(2);
    auto store = Open();
    const std::string result =
        store.ok() ? "OK" : absl::StrCat(static_cast<int>(store.status().code()), " ",
                                         store.status().message());
    (void)!write(fds[1], result.data(), result.size());
    _exit(0);
  }
  close(fds[1]);
  std::string result;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) result.append(buffer, n);
  close(fds[0]);
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  chmod(dir_.c_str(), 0700);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "child failed: " << wstatus;
  EXPECT_EQ(result.substr(0, result.find(' ')),
            std::to_string(static_cast<int>(absl::StatusCode::kPermissionDenied)))
      << result;
  EXPECT_NE(result.find("directory " + dir_ + " is not writable"), std::string::npos) << result;
}

TEST_P(StoreTest, OffsetResetsAreReadBackInOrder) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_RETURN_IF_ERROR(txn.EnsureDatasource("wiki", 1));
                    SLUICE_RETURN_IF_ERROR(
                        txn.RecordOffsetReset("wiki", 0, 20, 5, "operator reset of offsets", 10));
                    return txn.RecordOffsetReset("wiki", 1, 7, std::nullopt, "operator reset", 11);
                  })
                  .ok());
  std::vector<v1::OffsetReset> resets;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(resets, txn.OffsetResets("wiki"));
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_EQ(resets.size(), 2u);
  EXPECT_EQ(resets[0].partition(), 0);
  EXPECT_EQ(resets[0].old_offset(), 20);
  EXPECT_EQ(resets[0].new_offset(), 5);
  EXPECT_EQ(resets[0].reason(), "operator reset of offsets");
  EXPECT_EQ(resets[0].reset_at_ms(), 10);
  EXPECT_LT(resets[0].reset_id(), resets[1].reset_id());
  EXPECT_TRUE(resets[1].has_old_offset());
  EXPECT_FALSE(resets[1].has_new_offset());
}

TEST_P(StoreTest, RefusesSomeoneElsesDatabase) {
  {
    auto db = Raw();
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Exec("CREATE TABLE accounts (id INTEGER PRIMARY KEY)").ok());
  }
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("not a sluice metadata store"), std::string::npos);
}

TEST_P(StoreTest, SpecHistoryWithTombstoneAndActiveSpecs) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_EQ(*txn.InsertSpec("wiki", Spec("a"), false, 1), 1);
                    EXPECT_EQ(*txn.InsertSpec("wiki", Spec("b"), false, 2), 2);
                    EXPECT_EQ(*txn.InsertSpec("wiki", Spec("b"), true, 3), 3);
                    v1::SupervisorSpec other = Spec("c");
                    other.set_datasource("clicks");
                    EXPECT_EQ(*txn.InsertSpec("clicks", other, false, 4), 1);
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto history = *txn.SpecHistory("wiki");
                    EXPECT_EQ(history.size(), 3u);
                    EXPECT_EQ(history[0].version, 3);
                    EXPECT_TRUE(history[0].terminated);
                    EXPECT_EQ(history[2].spec.io_config().topic(), "a");
                    auto active = *txn.ActiveSpecs();
                    EXPECT_EQ(active.size(), 1u);
                    EXPECT_EQ(active[0].datasource, "clicks");
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, InitialOffsetsAreRecordedOnceAndGuardTheTopic) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto recorded = txn.RecordInitialOffsets("wiki", "edits", {{0, 10}}, 1);
                    EXPECT_EQ(*recorded, (OffsetMap{{0, 10}}));
                    EXPECT_TRUE(txn.SetCommittedOffsets("wiki", "edits", {{0, 50}}, 2).ok());
                    // A second call only records partitions without an offset.
                    recorded = txn.RecordInitialOffsets("wiki", "edits", {{0, 99}, {1, 3}}, 3);
                    EXPECT_EQ(*recorded, (OffsetMap{{1, 3}}));
                    EXPECT_EQ(*txn.CommittedOffsets("wiki"), (OffsetMap{{0, 50}, {1, 3}}));
                    EXPECT_EQ(*txn.InitialOffsets("wiki"), (OffsetMap{{0, 10}, {1, 3}}));
                    auto other = txn.RecordInitialOffsets("wiki", "clicks", {{0, 1}}, 4);
                    EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
                    EXPECT_TRUE(txn.DeleteCommittedOffsets("wiki", {}).ok());
                    EXPECT_FALSE(txn.CommitTopic("wiki")->has_value());
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, FailedTransactionRollsBack) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  absl::Status status = (*store)->InTransaction([&](StoreTxn& txn) -> absl::Status {
    EXPECT_TRUE(txn.SetCommittedOffsets("wiki", "edits", {{0, 5}}, 1).ok());
    return absl::AbortedError("changed my mind");
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_FALSE(*txn.DatasourceExists("wiki"));
                    EXPECT_TRUE(txn.CommittedOffsets("wiki")->empty());
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, ForeignKeysRejectOrphanRows) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  absl::Status status = (*store)->InTransaction([&](StoreTxn& txn) {
    PendingSegment s;
    s.id = "x";
    s.datasource = "no-such-datasource";
    s.sequence_name = "seq";
    s.start_ms = 0;
    s.end_ms = 1;
    s.version = "v";
    s.task_id = "t";
    return txn.InsertPendingSegment(s, 1);
  });
  EXPECT_FALSE(status.ok());
}

TEST_P(StoreTest, PendingSegmentsOfLongCommittedSequencesAreDeleted) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  auto pending = [](const std::string& id, const std::string& sequence) {
    PendingSegment s;
    s.id = id;
    s.datasource = "wiki";
    s.sequence_name = sequence;
    s.start_ms = 0;
    s.end_ms = 3600000;
    s.version = "v1";
    s.partition_num = id == "a" ? 0 : (id == "b" ? 1 : 2);
    s.task_id = "t";
    return s;
  };
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_TRUE(txn.EnsureDatasource("wiki", 1).ok());
                    EXPECT_TRUE(txn.InsertPendingSegment(pending("a", "wiki_x_0"), 1).ok());
                    EXPECT_TRUE(txn.InsertPendingSegment(pending("b", "wiki_x_1"), 1).ok());
                    EXPECT_TRUE(txn.InsertPendingSegment(pending("c", "wiki_x_2"), 1).ok());
                    // wiki_x_0 committed at 1000, wiki_x_1 at 5000, wiki_x_2 never.
                    EXPECT_TRUE(txn.InsertCommittedSequence("wiki", "wiki_x_0", "t", {{0, 0}},
                                                            {{0, 10}}, {}, 1000)
                                    .ok());
                    EXPECT_TRUE(txn.InsertCommittedSequence("wiki", "wiki_x_1", "t", {{0, 10}},
                                                            {{0, 20}}, {}, 5000)
                                    .ok());
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfCommittedSequences(500), 0);
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfCommittedSequences(2000), 1);
                    EXPECT_FALSE(txn.PendingSegmentById("a")->has_value());
                    EXPECT_TRUE(txn.PendingSegmentById("b")->has_value());
                    EXPECT_TRUE(txn.PendingSegmentById("c")->has_value());
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfCommittedSequences(10000), 1);
                    EXPECT_FALSE(txn.PendingSegmentById("b")->has_value());
                    // Never committed: kept (its group may still be reading).
                    EXPECT_TRUE(txn.PendingSegmentById("c")->has_value());
                    return absl::OkStatus();
                  })
                  .ok());
}

// Allocations of a sequence that never publishes are not kept forever: once
// the group of the task that made them ended longer ago than the cut-off,
// they go, whether their sequence was committed or not; a live group's stay.
TEST_P(StoreTest, PendingSegmentsOfLongEndedGroupsAreDeleted) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  auto add_group = [](StoreTxn& txn, const std::string& base) {
    TaskGroupRecord g;
    g.base_sequence_name = base;
    g.datasource = "wiki";
    g.start_offsets = {{0, 0}};
    EXPECT_TRUE(txn.InsertTaskGroup(g).ok());
    TaskRecord t;
    t.task_id = base + "_task";
    t.datasource = "wiki";
    t.base_sequence_name = base;
    t.worker_id = "w0";
    t.state = v1::TASK_STATE_READING;
    t.spec.set_task_id(t.task_id);
    EXPECT_TRUE(txn.InsertTask(t).ok());
  };
  auto pending = [](StoreTxn& txn, const std::string& base, int hour) {
    PendingSegment s;
    s.id = absl::StrCat(base, "_segment_", hour);
    s.datasource = "wiki";
    s.sequence_name = base + "_0";
    s.start_ms = int64_t{hour} * 3600000;
    s.end_ms = s.start_ms + 3600000;
    s.version = "v1";
    s.partition_num = base == "wiki_done" ? 0 : (base == "wiki_gone" ? 1 : 2);
    s.task_id = base + "_task";
    EXPECT_TRUE(txn.InsertPendingSegment(s, 1).ok());
  };
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_TRUE(txn.EnsureDatasource("wiki", 1).ok());
                    for (const char* base : {"wiki_done", "wiki_gone", "wiki_live"}) {
                      add_group(txn, base);
                      for (int hour = 0; hour < 3; ++hour) pending(txn, base, hour);
                    }
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_done_0"), 3);
                    EXPECT_TRUE(txn.FinishGroup("wiki_done", GroupState::kDone, "", 1000).ok());
                    EXPECT_TRUE(
                        txn.FinishGroup("wiki_gone", GroupState::kAbandoned, "", 5000).ok());
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfEndedGroups(500), 0);
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfEndedGroups(2000), 3);
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_done_0"), 0);
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_gone_0"), 3);
                    EXPECT_EQ(*txn.DeletePendingSegmentsOfEndedGroups(1'000'000), 3);
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_gone_0"), 0);
                    // A reading group keeps its allocations.
                    EXPECT_EQ(*txn.CountPendingSegments("wiki", "wiki_live_0"), 3);
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, TaskGroupsCheckpointsAndTasks) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(
      (*store)
          ->InTransaction([&](StoreTxn& txn) -> absl::Status {
            EXPECT_TRUE(txn.EnsureDatasource("wiki", 1).ok());
            TaskGroupRecord g;
            g.base_sequence_name = "wiki_0123456789abcdef";
            g.datasource = "wiki";
            g.group_id = 0;
            g.start_offsets = {{0, 10}, {2, 20}};
            g.created_at_ms = 5;
            EXPECT_TRUE(txn.InsertTaskGroup(g).ok());
            EXPECT_EQ(txn.InsertTaskGroup(g).code(), absl::StatusCode::kAlreadyExists);
            EXPECT_TRUE(txn.AppendCheckpoint(g.base_sequence_name, 1, {{0, 15}, {2, 25}}, 6).ok());
            TaskRecord t;
            t.task_id = "wiki_0123456789abcdef_00000001";
            t.datasource = "wiki";
            t.base_sequence_name = g.base_sequence_name;
            t.worker_id = "w0";
            t.state = v1::TASK_STATE_NOT_STARTED;
            t.spec.set_task_id(t.task_id);
            EXPECT_TRUE(txn.InsertTask(t).ok());
            EXPECT_TRUE(txn.UpdateTask(t.task_id, v1::TASK_STATE_READING, "", {{0, 12}}, 7).ok());
            EXPECT_EQ(txn.UpdateTask("nope", v1::TASK_STATE_READING, "", {}, 7).code(),
                      absl::StatusCode::kNotFound);
            return absl::OkStatus();
          })
          .ok());
  ASSERT_TRUE(
      (*store)
          ->InTransaction([&](StoreTxn& txn) -> absl::Status {
            auto groups = *txn.LiveTaskGroups("wiki");
            EXPECT_EQ(groups.size(), 1u);
            EXPECT_EQ(groups[0].checkpoints.size(), 2u);
            EXPECT_EQ(groups[0].checkpoints[1], (OffsetMap{{0, 15}, {2, 25}}));
            EXPECT_TRUE(
                txn.SetGroupPublishing(groups[0].base_sequence_name, {{0, 30}, {2, 40}}, 99).ok());
            auto task = *txn.GetTask("wiki_0123456789abcdef_00000001");
            EXPECT_EQ(task->state, v1::TASK_STATE_READING);
            EXPECT_EQ(task->current_offsets, (OffsetMap{{0, 12}}));
            EXPECT_EQ(task->spec.task_id(), task->task_id);
            EXPECT_EQ(txn.ListTasks("wiki", false)->size(), 1u);
            EXPECT_TRUE(txn.UpdateTask(task->task_id, v1::TASK_STATE_SUCCESS, "", {}, 8).ok());
            EXPECT_EQ(txn.ListTasks("wiki", false)->size(), 0u);
            EXPECT_EQ(txn.ListTasks("", true)->size(), 1u);
            EXPECT_TRUE(
                txn.FinishGroup(groups[0].base_sequence_name, GroupState::kDone, "published", 9)
                    .ok());
            EXPECT_TRUE(txn.LiveTaskGroups("wiki")->empty());
            return absl::OkStatus();
          })
          .ok());
}

TEST_P(StoreTest, ScalingDecisionsAreLoggedAndTheLastCountIsKept) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto none = txn.AutoscaledTaskCount("wiki");
                    EXPECT_TRUE(none.ok() && !none->has_value());
                    v1::ScalingDecision d;
                    d.set_from_task_count(1);
                    d.set_to_task_count(3);
                    d.set_reason("scale out: 7 of 10 lag samples >= 6000000");
                    d.set_decided_at_ms(100);
                    d.set_applied_at_ms(120);
                    auto first = txn.RecordScaling("wiki", d);
                    EXPECT_TRUE(first.ok()) << first.status();
                    d.set_from_task_count(3);
                    d.set_to_task_count(2);
                    d.set_reason("scale in");
                    auto second = txn.RecordScaling("wiki", d);
                    EXPECT_TRUE(second.ok()) << second.status();
                    EXPECT_GT(*second, *first);
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto count = txn.AutoscaledTaskCount("wiki");
                    EXPECT_TRUE(count.ok() && count->value_or(0) == 2);
                    auto log = txn.ScalingDecisions("wiki");
                    EXPECT_TRUE(log.ok());
                    EXPECT_EQ(log->size(), 2u);
                    if (log->size() == 2) {
                      EXPECT_EQ((*log)[0].to_task_count(), 3);
                      EXPECT_EQ((*log)[0].reason(), "scale out: 7 of 10 lag samples >= 6000000");
                      EXPECT_EQ((*log)[0].decided_at_ms(), 100);
                      EXPECT_EQ((*log)[0].applied_at_ms(), 120);
                      EXPECT_EQ((*log)[1].from_task_count(), 3);
                    }
                    EXPECT_TRUE(txn.ClearAutoscaledTaskCount("wiki").ok());
                    auto cleared = txn.AutoscaledTaskCount("wiki");
                    EXPECT_TRUE(cleared.ok() && !cleared->has_value());
                    EXPECT_EQ(txn.ScalingDecisions("wiki")->size(), 2u);
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, StreamPartitionIdsAreOnlyEverAdded) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  auto entry = [](int32_t id, const std::string& topic, int32_t partition) {
    v1::StreamPartition p;
    p.set_id(id);
    p.set_topic(topic);
    p.set_partition(partition);
    return p;
  };
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_TRUE(txn.StreamPartitions("wiki")->empty());
                    return txn.AddStreamPartitions(
                        "wiki", {entry(1, "b", 0), entry(0, "a", 0)}, 100);
                  })
                  .ok());
  absl::Status again = (*store)->InTransaction([&](StoreTxn& txn) {
    return txn.AddStreamPartitions("wiki", {entry(2, "c", 0), entry(3, "a", 0)}, 200);
  });
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_NE(again.message().find("a[0]"), std::string::npos) << again;
  absl::Status same_id = (*store)->InTransaction(
      [&](StoreTxn& txn) { return txn.AddStreamPartitions("wiki", {entry(1, "z", 5)}, 200); });
  EXPECT_EQ(same_id.code(), absl::StatusCode::kAlreadyExists) << same_id;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    auto stored = txn.StreamPartitions("wiki");
                    EXPECT_TRUE(stored.ok());
                    EXPECT_EQ(stored->size(), 2u) << "the refused transaction added nothing";
                    if (stored->size() == 2) {
                      EXPECT_EQ((*stored)[0].topic(), "a");
                      EXPECT_EQ((*stored)[1].id(), 1);
                      EXPECT_EQ((*stored)[1].topic(), "b");
                    }
                    EXPECT_TRUE(txn.StreamPartitions("other")->empty());
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, TwoConnectionsSerializeWrites) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->InTransaction([](StoreTxn& txn) {
                    return txn.SetCommittedOffsets("wiki", "edits", {{0, 1}}, 1);
                  })
                  .ok());
  ASSERT_TRUE((*b)->InTransaction([](StoreTxn& txn) -> absl::Status {
                    EXPECT_EQ(*txn.CommittedOffsets("wiki"), (OffsetMap{{0, 1}}));
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, ConcurrentCompareAndSwapsNeverLoseAnUpdate) {
  // The publish compare-and-swap in miniature, from two connections (two
  // supervisors): read the committed offset, refuse unless it is the one the
  // publish started from, write the next one. Each transaction waits between
  // its read and its write, so both read the same offset. An isolation level
  // that let both commit would lose an update: the final offset would fall
  // short of 10 x the successful swaps.
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->InTransaction([](StoreTxn& txn) {
                    return txn.SetCommittedOffsets("wiki", "edits", {{0, 0}}, 1);
                  })
                  .ok());
  std::atomic<int> swapped{0};
  std::atomic<int> refused{0};
  std::atomic<int> aborted{0};
  std::atomic<int> other{0};
  auto run = [&](MetadataStore* store) {
    for (int i = 0; i < 15; ++i) {
      int64_t expected = 0;
      absl::Status read = store->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(OffsetMap offsets, txn.CommittedOffsets("wiki"));
        expected = offsets[0];
        return absl::OkStatus();
      });
      if (!read.ok()) {
        ++other;
        continue;
      }
      absl::Status status = store->InTransaction([&](StoreTxn& txn) -> absl::Status {
        SLUICE_ASSIGN_OR_RETURN(OffsetMap offsets, txn.CommittedOffsets("wiki"));
        if (offsets[0] != expected) return absl::FailedPreconditionError("moved on");
        absl::SleepFor(absl::Milliseconds(5));
        return txn.SetCommittedOffsets("wiki", "edits", {{0, expected + 10}}, 2);
      });
      if (status.ok()) {
        ++swapped;
      } else if (absl::IsFailedPrecondition(status)) {
        ++refused;
      } else if (absl::IsAborted(status) || absl::IsUnavailable(status)) {
        // PostgreSQL: a serialization failure; SQLite: the write lock wait.
        ++aborted;
      } else {
        ++other;
        ADD_FAILURE() << status;
      }
    }
  };
  std::thread ta(run, a->get());
  std::thread tb(run, b->get());
  ta.join();
  tb.join();
  OffsetMap final_offsets;
  ASSERT_TRUE((*a)->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(final_offsets, txn.CommittedOffsets("wiki"));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_GT(swapped.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(final_offsets[0], 10 * swapped.load())
      << swapped << " swaps, " << refused << " refused, " << aborted << " aborted";
}

TEST_P(StoreTest, AFailedStatementDoesNotSpoilTheRestOfTheTransaction) {
  // SQLite undoes only the failed statement; the PostgreSQL connection does
  // the same with a savepoint per statement (a failed statement would
  // otherwise abort the whole transaction there).
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_RETURN_IF_ERROR(txn.EnsureDatasource("wiki", 1));
                    SLUICE_RETURN_IF_ERROR(txn.InsertIntervalVersion("wiki", 0, 10, "v1", 1));
                    absl::Status again = txn.InsertIntervalVersion("wiki", 0, 10, "v2", 1);
                    EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
                    return txn.InsertIntervalVersion("wiki", 10, 20, "v3", 1);
                  })
                  .ok());
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    EXPECT_EQ(**txn.IntervalVersion("wiki", 0, 10), "v1");
                    EXPECT_EQ(**txn.IntervalVersion("wiki", 10, 20), "v3");
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_P(StoreTest, TextSortsBytewiseOnEveryBackend) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    for (const char* name : {"b", "B", "a_1", "a-2", "A"}) {
                      WorkerRecord w;
                      w.worker_id = name;
                      w.address = "x";
                      SLUICE_RETURN_IF_ERROR(txn.UpsertWorker(w));
                    }
                    return absl::OkStatus();
                  })
                  .ok());
  std::vector<std::string> ids;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(auto workers, txn.ListWorkerRecords());
                    for (const auto& w : workers) ids.push_back(w.worker_id);
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(ids, (std::vector<std::string>{"A", "B", "a-2", "a_1", "b"}));
}

// Compaction's replacement: exactly the segments read are replaced, in one
// transaction; one no longer used aborts it with nothing changed; segments
// appended to the interval meanwhile stay used.
TEST_P(StoreTest, ReplaceSegmentsReplacesExactlyTheReadSet) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  auto segment = [](const std::string& id, const std::string& sequence, int64_t start_ms) {
    v1::SegmentDescriptor s;
    s.set_id(id);
    s.set_datasource("wiki");
    s.mutable_interval()->set_start_ms(start_ms);
    s.mutable_interval()->set_end_ms(start_ms + 3600000);
    s.set_version("v");
    s.set_num_rows(5);
    s.set_size_bytes(100);
    s.set_checksum("crc32c:00000000");
    s.set_path("file:///deep/" + id);
    s.set_sequence_name(sequence);
    return s;
  };
  int64_t commit_a = 0, commit_b = 0;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_RETURN_IF_ERROR(
                        txn.InsertSpec("wiki", Spec("edits"), false, 1000).status());
                    SLUICE_ASSIGN_OR_RETURN(commit_a, txn.InsertCommittedSequence(
                                                          "wiki", "wiki_a_0", "t", {{0, 0}},
                                                          {{0, 5}}, {}, 1000));
                    SLUICE_RETURN_IF_ERROR(
                        txn.InsertSegment(segment("a", "wiki_a_0", 0), "", commit_a, "t", 1000));
                    SLUICE_ASSIGN_OR_RETURN(commit_b, txn.InsertCommittedSequence(
                                                          "wiki", "wiki_a_1", "t", {{0, 5}},
                                                          {{0, 10}}, {}, 1100));
                    SLUICE_RETURN_IF_ERROR(
                        txn.InsertSegment(segment("b", "wiki_a_1", 0), "", commit_b, "t", 1100));
                    SLUICE_RETURN_IF_ERROR(txn.InsertSegment(segment("b_next", "wiki_a_1", 3600000),
                                                             "", commit_b, "t", 1100));
                    return absl::OkStatus();
                  })
                  .ok());
  // A compaction reads a and b; meanwhile a sequence appends d to the interval.
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(int64_t commit_c, txn.InsertCommittedSequence(
                                                                  "wiki", "wiki_a_2", "t",
                                                                  {{0, 10}}, {{0, 15}}, {}, 1200));
                    return txn.InsertSegment(segment("d", "wiki_a_2", 0), "", commit_c, "t", 1200);
                  })
                  .ok());
  auto used_ids = [&]() {
    std::vector<std::string> ids;
    EXPECT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(auto listed, txn.ListSegments("wiki", nullptr, false, 100));
                      for (const auto& s : listed) ids.push_back(s.id());
                      std::sort(ids.begin(), ids.end());
                      return absl::OkStatus();
                    })
                    .ok());
    return ids;
  };
  auto replace = [&](std::vector<std::string> replaced, v1::SegmentDescriptor s) {
    return (*store)->InTransaction([&](StoreTxn& txn) {
      return txn.ReplaceSegments("wiki", replaced, {s}, "compactor", 2000);
    });
  };
  v1::SegmentDescriptor compacted = segment("ab", "", 0);
  compacted.set_sha256("sha256:" + std::string(64, 'c'));
  ASSERT_TRUE(replace({"a", "b"}, compacted).ok());
  EXPECT_EQ(used_ids(), (std::vector<std::string>{"ab", "b_next", "d"}));

  // A second compaction that read b (now replaced) and d: aborted, nothing changed.
  absl::Status again = replace({"d", "b"}, segment("bd", "", 0));
  EXPECT_EQ(again.code(), absl::StatusCode::kAborted) << again;
  EXPECT_NE(again.message().find("segment b "), std::string::npos) << again;
  EXPECT_EQ(used_ids(), (std::vector<std::string>{"ab", "b_next", "d"}));
  // Other refusals, nothing changed either.
  EXPECT_EQ(replace({"zzz"}, segment("x", "", 0)).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(replace({"d", "b_next"}, segment("x", "", 0)).code(),
            absl::StatusCode::kInvalidArgument);  // two intervals
  EXPECT_EQ(replace({"d"}, segment("x", "", 3600000)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(replace({"d"}, segment("b_next", "", 0)).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(used_ids(), (std::vector<std::string>{"ab", "b_next", "d"}));

  std::vector<v1::SegmentDescriptor> all;
  std::optional<v1::CommittedSequence> seq_b;
  std::vector<std::string> replaced_by, d_replaced_by;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(all, txn.ListSegments("wiki", nullptr, true, 100));
                    SLUICE_ASSIGN_OR_RETURN(seq_b, txn.CommittedSequence("wiki", "wiki_a_1"));
                    SLUICE_ASSIGN_OR_RETURN(replaced_by, txn.ReplacedBy("a"));
                    SLUICE_ASSIGN_OR_RETURN(d_replaced_by, txn.ReplacedBy("d"));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(replaced_by, (std::vector<std::string>{"ab"}));
  EXPECT_TRUE(d_replaced_by.empty());
  EXPECT_EQ(all.size(), 5u);  // a, b unused; no bd, no x
  for (const auto& s : all) {
    if (s.id() == "ab") {
      EXPECT_TRUE(s.used());
      EXPECT_EQ(s.sequence_name(), "");
      EXPECT_EQ(s.sha256(), compacted.sha256());
      EXPECT_EQ(s.handoff_state(), v1::HANDOFF_STATE_PENDING);
    }
    if (s.id() == "a" || s.id() == "b") {
      EXPECT_FALSE(s.used()) << s.id();
    }
  }
  // The commit record still lists what its sequence published.
  ASSERT_TRUE(seq_b.has_value());
  EXPECT_EQ(std::vector<std::string>(seq_b->segment_ids().begin(), seq_b->segment_ids().end()),
            (std::vector<std::string>{"b", "b_next"}));

  // The replaced segments' files are due once replaced long enough, the
  // longest replaced first, and each only until its removal is recorded.
  using Files = std::vector<std::pair<std::string, std::string>>;
  auto due = [&](int64_t before_ms) {
    Files files;
    EXPECT_TRUE((*store)
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(files, txn.ReplacedSegmentFilesToRemove(before_ms, 10));
                      return absl::OkStatus();
                    })
                    .ok());
    return files;
  };
  EXPECT_TRUE(due(1999).empty());
  EXPECT_EQ(due(2000), (Files{{"a", "file:///deep/a"}, {"b", "file:///deep/b"}}));
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) {
                    // A used segment is never marked.
                    EXPECT_TRUE(txn.SetSegmentFileRemoved("ab", 3000).ok());
                    return txn.SetSegmentFileRemoved("a", 3000);
                  })
                  .ok());
  EXPECT_EQ(due(5000), (Files{{"b", "file:///deep/b"}}));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::ValuesIn(testing::TestBackends()),
                         [](const ::testing::TestParamInfo<TestBackend>& info) {
                           return testing::BackendName(info.param);
                         });

}  // namespace
}  // namespace sluice::supervisor
