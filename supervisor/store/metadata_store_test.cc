// Tests of metadata_store.h as a whole: opening, migrating and refusing
// databases, the SQLite file's settings, transactions (rollback, two
// connections, concurrent compare-and-swaps, a failed statement), foreign
// keys and text order. The statements of each table group are tested beside
// their *_rows.cc.
#include "supervisor/store/metadata_store.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "supervisor/store/metadata_schema.h"
#include "supervisor/store/postgres.h"
#include "supervisor/store/postgres_url.h"
#include "supervisor/store/sqlite.h"
#include "supervisor/store/store_test_fixture.h"
#include "supervisor/testing/test_store.h"

namespace sluice::supervisor {
namespace {

using store_testing::MetadataStoreTest;
using store_testing::StoreTest;
using store_testing::TestBackend;

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

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
