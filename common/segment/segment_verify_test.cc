// The two depths of the segment check: the structure (what the task checks
// when its supervisor decodes every pushed segment) and the full decode.
#include "common/segment/segment_verify.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/segment/file_io.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/spill.h"
#include "common/segment/test_damage.h"
#include "common/segment/test_rows.h"

namespace sluice {
namespace segment {
namespace {

struct Built {
  std::string path;
  ExpectedSegment expected;
};

Built BuildTestSegment(const std::string& name) {
  const Schema schema = testing::TestSchema(/*rollup=*/true, /*discover=*/false);
  auto index = IncrementalIndex::Create({schema, testing::TestInterval()});
  EXPECT_TRUE(index.ok()) << index.status();
  for (const testing::OwnedRow& r : testing::RandomRows(11, 200, schema, 2)) {
    EXPECT_TRUE((*index)->Add(testing::ToInputRow(r, schema), r.partition, r.offset).ok());
  }
  const std::string dir = std::getenv("TEST_TMPDIR");
  SpillOptions spill;
  spill.directory = dir;
  spill.name = name;
  auto spilled = PersistIndex(index->get(), spill);
  EXPECT_TRUE(spilled.ok()) << spilled.status();
  BuildOptions build;
  build.path = absl::StrCat(dir, "/", name, ".sluice");
  build.schema = schema;
  build.metadata.datasource = "wiki";
  build.metadata.interval = testing::TestInterval();
  build.metadata.version = "v1";
  build.metadata.segment_id = "wiki_" + name;
  build.metadata.provenance.topic = "edits";
  build.metadata.provenance.ranges = {{0, 0, 1000, 0}, {1, 0, 1000, 0}};
  build.spill_paths = {spilled->path};
  auto info = BuildSegment(build);
  EXPECT_TRUE(info.ok()) << info.status();
  Built out;
  out.path = build.path;
  out.expected.segment_id = build.metadata.segment_id;
  out.expected.num_rows = static_cast<int64_t>(info->num_rows);
  out.expected.size_bytes = static_cast<int64_t>(info->size_bytes);
  out.expected.checksum = info->checksum;
  return out;
}

TEST(SegmentVerify, BothDepthsAcceptAnIntactSegmentAndCompareTheExpectation) {
  const Built built = BuildTestSegment("intact");
  for (VerifyDepth depth : {VerifyDepth::kChecksum, VerifyDepth::kStructure, VerifyDepth::kFull}) {
    EXPECT_TRUE(VerifySegmentFile(built.path, built.expected, depth).ok());
    ExpectedSegment wrong = built.expected;
    wrong.num_rows += 1;
    EXPECT_EQ(VerifySegmentFile(built.path, wrong, depth).code(), absl::StatusCode::kDataLoss);
    wrong = built.expected;
    wrong.checksum = "crc32c:00000000";
    EXPECT_EQ(VerifySegmentFile(built.path, wrong, depth).code(), absl::StatusCode::kDataLoss);
  }
}

TEST(SegmentVerify, OnlyTheFullDepthFindsDamageBehindAValidChecksum) {
  Built built = BuildTestSegment("damaged");
  absl::StatusOr<std::string> resealed = testing::DamageBlocksKeepingChecksum(built.path);
  ASSERT_TRUE(resealed.ok()) << resealed.status();
  built.expected.checksum = *resealed;
  // The structure check passes: the file opens and says what was expected.
  EXPECT_TRUE(VerifySegmentFile(built.path, built.expected, VerifyDepth::kStructure).ok());
  const absl::Status full = VerifySegmentFile(built.path, built.expected, VerifyDepth::kFull);
  EXPECT_EQ(full.code(), absl::StatusCode::kDataLoss) << full;
  EXPECT_NE(full.message().find(built.path), std::string::npos) << full;
  // The same on a reader already open.
  auto reader = SegmentReader::Open(built.path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(VerifyOpenSegment(**reader, built.path, built.expected, VerifyDepth::kFull).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_TRUE(
      VerifyOpenSegment(**reader, built.path, built.expected, VerifyDepth::kStructure).ok());
}

// The checksum depth (a writer's read-back) refuses any byte the disk changed
// and, like the structure, passes damage behind a valid checksum.
TEST(SegmentVerify, TheChecksumDepthFindsAnyChangedByte) {
  Built built = BuildTestSegment("flipped");
  absl::StatusOr<std::string> bytes = ReadFileToString(built.path);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  for (size_t at : {size_t{0}, bytes->size() / 3, bytes->size() / 2, bytes->size() - 13}) {
    std::string changed = *bytes;
    changed[at] = static_cast<char>(changed[at] ^ 0x10);
    ASSERT_TRUE(WriteFileAtomically(built.path, changed).ok());
    const absl::Status s = VerifySegmentFile(built.path, built.expected, VerifyDepth::kChecksum);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << "byte " << at << ": " << s;
  }
  ASSERT_TRUE(WriteFileAtomically(built.path, *bytes).ok());
  EXPECT_TRUE(VerifySegmentFile(built.path, built.expected, VerifyDepth::kChecksum).ok());
  absl::StatusOr<std::string> resealed = testing::DamageBlocksKeepingChecksum(built.path);
  ASSERT_TRUE(resealed.ok()) << resealed.status();
  built.expected.checksum = *resealed;
  EXPECT_TRUE(VerifySegmentFile(built.path, built.expected, VerifyDepth::kChecksum).ok());
}

}  // namespace
}  // namespace segment
}  // namespace sluice
