// The table side of compaction read by readers sluice did not write: a
// table that went through append, append, a compaction's replace (the
// first two sequences' segments compacted with rollup) and append, each
// committed to the SQL catalog in a metadata store, is read by pyiceberg's
// SqlCatalog and DuckDB (check_compacted_table.py): at every snapshot the
// sum of the count metric is what the committed sequences hold. Then the
// snapshots are expired (only the last kept), the orphan sweeper removes
// what only they referenced, and the table reads the same. A table whose
// appends' manifests were merged by the upkeep reads the same at every
// snapshot too.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "iceberg/table_reader.h"
#include "supervisor/compaction/iceberg_test_table.h"
#include "supervisor/compaction/table_upkeep.h"
#include "supervisor/iceberg/iceberg_orphan_sweeper.h"
#include "supervisor/store/metadata_store.h"
#include "tests/testing/iceberg_readers.h"

namespace sluice::supervisor {
namespace {

std::string ReadersPython() { return sluice::testing::IcebergReadersPython(); }

struct Expected {
  int64_t id = 0;
  std::string operation;
  int64_t count = 0;
  int files = 0;
};

class IcebergCompactionTest : public testing::IcebergTableTest {
 protected:
  void SetUp() override {
    testing::IcebergTableTest::SetUp();
    store_ = testing::OpenTestStore(dir_.path());
  }

  void Commit(const std::optional<std::string>& expected, const std::string& next) {
    ASSERT_TRUE(store_
                    ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                      SLUICE_ASSIGN_OR_RETURN(bool swapped, txn.SwapIcebergMetadataLocation(
                                                                "sluice", "wiki", expected, next));
                      return swapped ? absl::OkStatus() : absl::AbortedError("moved");
                    })
                    .ok());
  }

  int64_t CurrentSnapshot(const std::string& location) {
    auto metadata = iceberg::ReadTableMetadata(Read(location));
    EXPECT_TRUE(metadata.ok()) << metadata.status();
    return *metadata->current_snapshot_id;
  }

  // The readers' verdict on the table as the catalog has it.
  int Check(const std::vector<Expected>& snapshots, const std::string& name) {
    const std::string path = absl::StrCat(dir_.path(), "/", name, ".json");
    std::vector<std::string> items;
    for (const Expected& e : snapshots) {
      items.push_back(absl::StrCat("{\"id\": ", e.id, ", \"operation\": \"", e.operation,
                                   "\", \"count\": ", e.count, ", \"files\": ", e.files, "}"));
    }
    {
      std::ofstream out(path);
      out << "{\"warehouse\": \"" << target_.location << "\", \"local_prefix\": {\""
          << deep_->UriForKey("x").substr(0, deep_->UriForKey("x").size() - 1) << "\": \""
          << dir_.path() << "/deep/\"}, \"snapshots\": [" << absl::StrJoin(items, ", ")
          << "]}\n";
    }
    const std::string command =
        absl::StrCat(ReadersPython(), " tests/iceberg/check_compacted_table.py ", dir_.path(),
                     "/metadata.db ", path);
    std::printf("[iceberg compaction] %s\n", command.c_str());
    std::fflush(stdout);
    return std::system(command.c_str());
  }

  std::unique_ptr<MetadataStore> store_;
};

TEST_F(IcebergCompactionTest, EverySnapshotHoldsWhatTheCommittedSequencesHold) {
  ASSERT_EQ(access(ReadersPython().c_str(), X_OK), 0)
      << "no readers venv at " << ReadersPython() << ": run scripts/install_deps.sh --tests";
  const v1::SegmentDescriptor a = Segment(0, 40, 0), b = Segment(1, 50, 40), c = Segment(2, 60, 90);
  // What each committed sequence holds: its Kafka range's records.
  auto records = [](const v1::SegmentDescriptor& s) {
    return s.provenance().ranges(0).end_offset() - s.provenance().ranges(0).start_offset();
  };
  std::vector<Expected> expected;
  const std::string first = Append(std::nullopt, "seq_a", a);
  Commit(std::nullopt, first);
  expected.push_back({CurrentSnapshot(first), "append", records(a), 1});
  const std::string second = Append(first, "seq_b", b);
  Commit(first, second);
  expected.push_back({CurrentSnapshot(second), "append", records(a) + records(b), 2});
  auto replaced = Replace(second, Compact({a, b}));
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  ASSERT_TRUE(replaced->metadata_location.has_value()) << replaced->skipped;
  Commit(second, *replaced->metadata_location);
  expected.push_back({replaced->snapshot_id, "replace", records(a) + records(b), 1});
  const std::string last = Append(*replaced->metadata_location, "seq_c", c);
  Commit(*replaced->metadata_location, last);
  expected.push_back({CurrentSnapshot(last), "append", records(a) + records(b) + records(c), 2});
  EXPECT_EQ(Check(expected, "before_expiry"), 0) << "the readers disagree (see above)";

  // Expiry keeps the last snapshot; the sweeper removes what only the
  // others referenced; the readers find the same rows.
  SnapshotExpiryPolicy policy;
  policy.retention = absl::Hours(1);
  policy.keep = 1;
  const absl::Time later = absl::FromUnixMillis(now_ms_) + absl::Hours(2);
  auto staged = StageSnapshotExpiry(deep_.get(), Scratch(), target_, last, policy, later);
  ASSERT_TRUE(staged.ok() && staged->has_value()) << staged.status();
  auto swapped = CommitSnapshotExpiry(store_.get(), target_, **staged);
  ASSERT_TRUE(swapped.ok() && *swapped) << swapped.status();
  IcebergOrphanSweepOptions options;
  options.min_age = absl::ZeroDuration();
  options.scratch_dir = Scratch();
  IcebergOrphanSweeper sweeper(deep_.get(), options);
  int64_t removed = 0;
  for (int pass = 0; pass < 2; ++pass) {
    auto n = sweeper.Sweep(target_.location_key, (*staged)->metadata_location, later);
    ASSERT_TRUE(n.ok()) << n.status();
    removed += *n;
  }
  EXPECT_GT(removed, 0);
  EXPECT_EQ(Check({expected.back()}, "after_expiry"), 0) << "the readers disagree (see above)";
}

TEST_F(IcebergCompactionTest, AMergeOfTheAppendsManifestsReadsTheSame) {
  ASSERT_EQ(access(ReadersPython().c_str(), X_OK), 0)
      << "no readers venv at " << ReadersPython() << ": run scripts/install_deps.sh --tests";
  std::vector<Expected> expected;
  std::optional<std::string> at;
  int64_t records = 0;
  for (int i = 0; i < 6; ++i) {
    const int rows = 10 + i;
    const std::string next =
        Append(at, absl::StrCat("seq_", i), Segment(i, rows, int64_t{100} * i));
    Commit(at, next);
    at = next;
    records += rows;
    expected.push_back({CurrentSnapshot(next), "append", records, i + 1});
  }
  ManifestRewritePolicy policy;
  policy.min_count_to_merge = 5;
  auto merged = StageManifestMerge(deep_.get(), Scratch(), target_, *at, policy,
                                   absl::FromUnixMillis(now_ms_));
  ASSERT_TRUE(merged.ok() && merged->has_value()) << merged.status();
  EXPECT_EQ((*merged)->manifests_replaced, 6);
  auto swapped = CommitManifestMerge(store_.get(), target_, **merged);
  ASSERT_TRUE(swapped.ok() && *swapped) << swapped.status();
  expected.push_back({(*merged)->snapshot_id, "replace", records, 6});
  auto list = iceberg::ReadManifestList(
      Read(iceberg::ReadTableMetadata(Read((*merged)->metadata_location))
               ->Snapshot((*merged)->snapshot_id)
               ->manifest_list));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1u);
  EXPECT_EQ(Check(expected, "after_merge"), 0) << "the readers disagree (see above)";
}

}  // namespace
}  // namespace sluice::supervisor
