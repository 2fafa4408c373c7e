// The orphan sweeper on a table written by the real writers in local deep
// storage: files a publish staged and never committed go once they have
// been seen unreferenced for the safety age; referenced files never, young
// ones not yet; a table whose documents cannot all be read loses nothing.
#include "supervisor/iceberg/iceberg_orphan_sweeper.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/local_deep_storage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iceberg/table_reader.h"
#include "iceberg/test_table.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

using iceberg::testing::TestSnapshot;
using iceberg::testing::TestTable;
using iceberg::testing::WriteBytes;
using ::testing::HasSubstr;

constexpr char kKey[] = "iceberg/sluice/wiki";

class IcebergOrphanSweeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path();
    storage_ = *LocalDeepStorage::Open(root_);
    table_ = std::make_unique<TestTable>(absl::StrCat(root_, "/", kKey));
    table_->Append({"s1", {{0, {0, 10}}}, {5, 5}});
    table_->Append({"s2", {{0, {10, 20}}}, {10}});
  }

  // Every file the table's current metadata references, as paths.
  std::vector<std::string> Referenced() {
    std::vector<std::string> out;
    auto path = [](const std::string& uri) { return uri.substr(7); };
    absl::StatusOr<iceberg::TableMetadataInfo> m =
        iceberg::ReadTableMetadata(Slurp(path(table_->metadata_location())));
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return out;
    out.push_back(path(table_->metadata_location()));
    for (const std::string& previous : m->metadata_log) out.push_back(path(previous));
    for (const iceberg::SnapshotInfo& s : m->snapshots) {
      out.push_back(path(s.manifest_list));
      absl::StatusOr<std::vector<iceberg::ManifestListEntry>> list =
          iceberg::ReadManifestList(Slurp(path(s.manifest_list)));
      EXPECT_TRUE(list.ok()) << list.status();
      if (!list.ok()) return out;
      for (const iceberg::ManifestListEntry& e : *list) {
        out.push_back(path(e.manifest_path));
        absl::StatusOr<std::vector<iceberg::ManifestEntryInfo>> entries =
            iceberg::ReadManifest(Slurp(path(e.manifest_path)));
        EXPECT_TRUE(entries.ok()) << entries.status();
        if (!entries.ok()) return out;
        for (const iceberg::ManifestEntryInfo& f : *entries) out.push_back(path(f.file_path));
      }
    }
    return out;
  }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Files of a publish that staged a snapshot and did not commit it.
  std::vector<std::string> StageUncommitted(const std::string& name) {
    std::vector<std::string> paths = {
        table_->Path(absl::StrCat("/data/p1-", name, ".parquet")),
        table_->Path(absl::StrCat("/metadata/", name, "-m0.avro")),
        table_->Path(absl::StrCat("/metadata/snap-9", name, ".avro")),
        table_->Path(absl::StrCat("/metadata/00009-", name, ".metadata.json"))};
    for (const std::string& p : paths) WriteBytes(p, "staged " + name);
    return paths;
  }

  testing::TempDir dir_;
  std::string root_;
  std::unique_ptr<LocalDeepStorage> storage_;
  std::unique_ptr<TestTable> table_;
};

TEST_F(IcebergOrphanSweeperTest, StagedButUncommittedFilesGoAfterTheSafetyAgeOnly) {
  IcebergOrphanSweeper sweeper(storage_.get(), {.min_age = absl::Hours(1),
                                                .scratch_dir = root_ + "/scratch"});
  const std::vector<std::string> referenced = Referenced();
  // 2 metadata documents, 2 lists, 3 manifest and 3 data file references
  // (the first snapshot's carried over by the second): 7 distinct files.
  ASSERT_EQ(referenced.size(), 10u);
  const std::vector<std::string> staged = StageUncommitted("a");
  const absl::Time t0 = absl::FromUnixSeconds(1800000000);

  // First seen: nothing removed; within the safety age: nothing either.
  EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0), 0);
  EXPECT_EQ(sweeper.Pending(kKey), 4);
  EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0 + absl::Minutes(30)), 0);
  // A younger orphan appears meanwhile.
  const std::vector<std::string> young = StageUncommitted("b");
  EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0 + absl::Minutes(45)), 0);
  EXPECT_EQ(sweeper.Pending(kKey), 8);

  // Past the age: the old orphans go, the young ones and every referenced
  // file stay.
  absl::StatusOr<int64_t> removed =
      sweeper.Sweep(kKey, table_->metadata_location(), t0 + absl::Minutes(61));
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 4);
  for (const std::string& p : staged) EXPECT_FALSE(std::filesystem::exists(p)) << p;
  for (const std::string& p : young) EXPECT_TRUE(std::filesystem::exists(p)) << p;
  for (const std::string& p : referenced) EXPECT_TRUE(std::filesystem::exists(p)) << p;
  EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0 + absl::Minutes(106)), 4);
  for (const std::string& p : young) EXPECT_FALSE(std::filesystem::exists(p)) << p;
  for (const std::string& p : referenced) EXPECT_TRUE(std::filesystem::exists(p)) << p;
  EXPECT_EQ(sweeper.Pending(kKey), 0);
}

TEST_F(IcebergOrphanSweeperTest, AFileCommittedMeanwhileIsNeverRemoved) {
  IcebergOrphanSweeper sweeper(storage_.get(), {.min_age = absl::Hours(1),
                                                .scratch_dir = root_ + "/scratch"});
  const absl::Time t0 = absl::FromUnixSeconds(1800000000);
  // s3's data file staged before the first pass, committed after it.
  const std::string early = table_->Path("/data/s3.parquet");
  WriteBytes(early, "staged, to be rewritten by the commit");
  EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0), 0);
  EXPECT_EQ(sweeper.Pending(kKey), 1);
  table_->Append({"s3", {{0, {20, 25}}}, {5}});
  EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0 + absl::Hours(2)), 0);
  EXPECT_EQ(sweeper.Pending(kKey), 0);
  EXPECT_TRUE(std::filesystem::exists(early));
  for (const std::string& p : Referenced()) EXPECT_TRUE(std::filesystem::exists(p)) << p;
}

// A publish of the table under way (it may be reusing an old staged file
// for its commit) or a commit since the pass read the table: nothing is
// removed in that pass; the next one removes what is still orphan.
TEST_F(IcebergOrphanSweeperTest, NothingGoesWhileAPublishRunsOrAfterACommitSinceTheRead) {
  IcebergTableLocks locks;
  IcebergOrphanSweeper sweeper(storage_.get(), {.min_age = absl::Hours(1),
                                                .scratch_dir = root_ + "/scratch",
                                                .locks = &locks});
  const absl::Time t0 = absl::FromUnixSeconds(1800000000);
  const std::vector<std::string> staged = StageUncommitted("a");
  EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0), 0);
  {
    IcebergTableLocks::Shared publishing = locks.Publishing(kKey);
    EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0 + absl::Hours(2)), 0);
    for (const std::string& p : staged) EXPECT_TRUE(std::filesystem::exists(p)) << p;
  }
  const std::string read = table_->metadata_location();
  auto moved_on = [&]() -> absl::StatusOr<std::string> { return std::string("file:///elsewhere"); };
  EXPECT_EQ(*sweeper.Sweep(kKey, read, t0 + absl::Hours(2), moved_on), 0);
  for (const std::string& p : staged) EXPECT_TRUE(std::filesystem::exists(p)) << p;
  auto unchanged = [&]() -> absl::StatusOr<std::string> { return read; };
  EXPECT_EQ(*sweeper.Sweep(kKey, read, t0 + absl::Hours(2), unchanged), 4);
  for (const std::string& p : staged) EXPECT_FALSE(std::filesystem::exists(p)) << p;
  EXPECT_EQ(locks.Publishes(kKey), 0);
  EXPECT_TRUE(locks.TryExclusive(kKey));  // the sweep released its hold
}

TEST_F(IcebergOrphanSweeperTest, AnUnreadableDocumentRemovesNothing) {
  IcebergOrphanSweeper sweeper(storage_.get(), {.min_age = absl::Hours(1),
                                                .scratch_dir = root_ + "/scratch"});
  const absl::Time t0 = absl::FromUnixSeconds(1800000000);
  const std::vector<std::string> staged = StageUncommitted("a");
  EXPECT_EQ(*sweeper.Sweep(kKey, table_->metadata_location(), t0), 0);
  std::filesystem::remove(table_->Path("/metadata/s1-m0.avro"));
  absl::StatusOr<int64_t> removed =
      sweeper.Sweep(kKey, table_->metadata_location(), t0 + absl::Hours(2));
  EXPECT_FALSE(removed.ok());
  EXPECT_THAT(removed.status().message(), HasSubstr("s1-m0.avro"));
  EXPECT_THAT(removed.status().message(), HasSubstr("nothing removed"));
  for (const std::string& p : staged) EXPECT_TRUE(std::filesystem::exists(p)) << p;
}

}  // namespace
}  // namespace sluice::supervisor
