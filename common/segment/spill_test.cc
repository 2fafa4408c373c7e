#include "common/file_util.h"
#include "common/segment/spill.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/segment/file_io.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/test_rows.h"

namespace sluice {
namespace segment {
namespace {

using testing::OwnedRow;

std::string NewDir(const std::string& name) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  mkdir(dir.c_str(), 0755);
  return dir;
}

std::unique_ptr<IncrementalIndex> Filled(const Schema& schema, const std::vector<OwnedRow>& rows) {
  auto index = IncrementalIndex::Create({schema, testing::TestInterval()});
  EXPECT_TRUE(index.ok());
  for (const OwnedRow& r : rows) {
    EXPECT_TRUE((*index)->Add(testing::ToInputRow(r, schema), r.partition, r.offset).ok());
  }
  return std::move(*index);
}

TEST(Spill, PersistClearsTheIndexAndListSpillsRestoresItsDescription) {
  const Schema schema = testing::TestSchema(true, false);
  const std::string dir = NewDir("persist");
  const std::vector<OwnedRow> rows = testing::RandomRows(1, 500, schema, 3);
  auto index = Filled(schema, std::vector<OwnedRow>(rows.begin(), rows.begin() + 200));
  const int64_t rows_before = index->rows();
  SpillOptions options;
  options.directory = dir;
  options.name = "seq_0-0002";
  options.caller_metadata = R"({"offsets":{"0":67}})";
  auto spill = PersistIndex(index.get(), options);
  ASSERT_TRUE(spill.ok()) << spill.status();
  EXPECT_TRUE(index->empty());
  EXPECT_EQ(spill->rows, static_cast<uint64_t>(rows_before));
  EXPECT_EQ(spill->input_records, 200u);
  EXPECT_EQ(spill->path, dir + "/seq_0-0002.spill");
  // A second spill from the same index, then a restart: list them.
  for (size_t i = 200; i < 500; ++i) {
    ASSERT_TRUE(index->Add(testing::ToInputRow(rows[i], schema), rows[i].partition, rows[i].offset).ok());
  }
  options.name = "seq_0-0001";  // names decide the order, not creation time
  options.caller_metadata = "second";
  ASSERT_TRUE(PersistIndex(index.get(), options).ok());
  auto listed = ListSpills(dir);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "seq_0-0001");
  EXPECT_EQ((*listed)[0].caller_metadata, "second");
  EXPECT_EQ((*listed)[1].name, "seq_0-0002");
  EXPECT_EQ((*listed)[1].caller_metadata, R"({"offsets":{"0":67}})");
  EXPECT_EQ((*listed)[1].rows, spill->rows);
  EXPECT_EQ((*listed)[1].crc, spill->crc);
  EXPECT_EQ((*listed)[1].size_bytes, spill->size_bytes);
  EXPECT_EQ((*listed)[1].interval.start_ms, testing::TestInterval().start_ms);
  uint64_t records = 0;
  for (const SpillDescriptor& d : *listed) {
    for (const PartitionStats& p : d.partitions) records += p.records;
  }
  EXPECT_EQ(records, 500u);
}

TEST(Spill, RefusesEmptyIndexesBadNamesAndOverwrites) {
  const Schema schema = testing::TestSchema(false, true);
  const std::string dir = NewDir("refuse");
  auto index = Filled(schema, {});
  SpillOptions options;
  options.directory = dir;
  options.name = "s1";
  EXPECT_EQ(PersistIndex(index.get(), options).status().code(),
            absl::StatusCode::kFailedPrecondition);
  index = Filled(schema, testing::RandomRows(2, 10, schema, 1));
  options.name = "../escape";
  EXPECT_EQ(PersistIndex(index.get(), options).status().code(), absl::StatusCode::kInvalidArgument);
  options.name = "s1";
  ASSERT_TRUE(PersistIndex(index.get(), options).ok());
  index = Filled(schema, testing::RandomRows(3, 10, schema, 1));
  EXPECT_EQ(PersistIndex(index.get(), options).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(index->input_records(), 10);  // nothing lost
  options.directory = dir + "/missing";
  options.name = "s2";
  const absl::Status s = PersistIndex(index.get(), options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_EQ(index->input_records(), 10);  // a failed persist keeps the rows
}

TEST(Spill, ListSpillsRemovesLeftoverTemporaryFilesAndReportsDamage) {
  const Schema schema = testing::TestSchema(true, true);
  const std::string dir = NewDir("leftovers");
  auto index = Filled(schema, testing::RandomRows(4, 50, schema, 2));
  SpillOptions options;
  options.directory = dir;
  options.name = "a";
  ASSERT_TRUE(PersistIndex(index.get(), options).ok());
  // What a crash in the middle of a persist leaves behind.
  ASSERT_TRUE(sluice::WriteFileAtomically(dir + "/" + kTempFilePrefix + "b.spill.123.0", "half").ok());
  ASSERT_TRUE(sluice::WriteFileAtomically(dir + "/notes.txt", "not a spill").ok());
  auto listed = ListSpills(dir);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_FALSE(ReadFileToString(dir + "/" + kTempFilePrefix + "b.spill.123.0").ok());
  // A damaged spill is reported, never silently skipped.
  std::string bytes = *ReadFileToString(dir + "/a.spill");
  bytes[bytes.size() / 2] ^= 1;
  ASSERT_TRUE(sluice::WriteFileAtomically(dir + "/a.spill", bytes).ok());
  const absl::Status s = ListSpills(dir).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("a.spill"), absl::string_view::npos);
  EXPECT_NE(s.message().find("checksum"), absl::string_view::npos);
  ASSERT_TRUE(RemoveSpill(dir + "/a.spill").ok());
  EXPECT_TRUE(ListSpills(dir)->empty());
}

TEST(Spill, BuildRefusesSpillsThatDoNotBelongTogether) {
  const Schema schema = testing::TestSchema(true, false);
  const std::string dir = NewDir("mismatch");
  const std::vector<OwnedRow> rows = testing::RandomRows(9, 100, schema, 2);
  SpillOptions options;
  options.directory = dir;
  options.name = "first";
  auto first = PersistIndex(Filled(schema, rows).get(), options);
  ASSERT_TRUE(first.ok());
  options.name = "again";  // the same records spilled twice
  auto again = PersistIndex(Filled(schema, rows).get(), options);
  ASSERT_TRUE(again.ok());
  Schema other = schema;
  other.metrics.pop_back();
  options.name = "other";
  auto different = PersistIndex(Filled(other, testing::RandomRows(9, 100, other, 2)).get(), options);
  ASSERT_TRUE(different.ok());

  BuildOptions build;
  build.path = dir + "/segment";
  build.schema = schema;
  build.metadata.datasource = "wiki";
  build.metadata.interval = testing::TestInterval();
  build.metadata.version = "v";
  build.metadata.segment_id = "id";
  build.metadata.provenance.topic = "t";
  build.metadata.provenance.ranges = {{0, 0, 1000, 0}, {1, 0, 1000, 0}};
  build.spill_paths = {first->path, again->path};
  absl::Status s = BuildSegment(build).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("overlapping"), absl::string_view::npos) << s;
  build.spill_paths = {first->path, different->path};
  s = BuildSegment(build).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("schema"), absl::string_view::npos) << s;
  // Records outside the provenance ranges.
  build.spill_paths = {first->path};
  build.metadata.provenance.ranges = {{0, 0, 1000, 0}, {1, 0, 120, 0}};
  s = BuildSegment(build).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("partition 1"), absl::string_view::npos) << s;
  build.metadata.provenance.ranges = {{0, 0, 1000, 0}};
  EXPECT_EQ(BuildSegment(build).status().code(), absl::StatusCode::kFailedPrecondition);
  build.metadata.provenance.ranges = {{0, 0, 1000, 0}, {0, 0, 1000, 0}};
  EXPECT_EQ(BuildSegment(build).status().code(), absl::StatusCode::kInvalidArgument);
  // Nothing at all.
  build.spill_paths = {};
  EXPECT_EQ(BuildSegment(build).status().code(), absl::StatusCode::kFailedPrecondition);
  // No file is left behind by the failures.
  EXPECT_FALSE(ReadFileToString(build.path).ok());
}

}  // namespace
}  // namespace segment
}  // namespace sluice
