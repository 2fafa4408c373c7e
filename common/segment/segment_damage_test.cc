// Damaged files: every flipped byte and every truncation is a clear DATA_LOSS
// error, and the reader never reads out of bounds (run under
// bazel test --config=checks). With the checksum recomputed after the damage,
// the structural checks must still stop the reader from misbehaving.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/segment/byte_io.h"
#include "common/segment/file_io.h"
#include "common/segment/format.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/spill.h"
#include "common/segment/test_damage.h"
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

// A small segment and a spill (rollup on) plus a spill with rollup off, as bytes.
struct Files {
  std::string segment, spill, spill_no_rollup;
};

std::string PersistRows(const Schema& schema, const std::vector<OwnedRow>& rows,
                        const std::string& dir) {
  auto index = IncrementalIndex::Create({schema, testing::TestInterval()});
  EXPECT_TRUE(index.ok());
  for (const OwnedRow& r : rows) {
    EXPECT_TRUE((*index)->Add(testing::ToInputRow(r, schema), r.partition, r.offset).ok());
  }
  SpillOptions options;
  options.directory = dir;
  options.name = "s";
  options.caller_metadata = "offsets 0-100";
  auto spill = PersistIndex(index->get(), options);
  EXPECT_TRUE(spill.ok()) << spill.status();
  return spill->path;
}

Files MakeFiles() {
  Files f;
  const Schema schema = testing::TestSchema(/*rollup=*/true, /*discover=*/false);
  const std::vector<OwnedRow> rows = testing::RandomRows(5, 100, schema, 2);
  const std::string dir = NewDir("damage");
  const std::string spill = PersistRows(schema, rows, dir);
  f.spill = *ReadFileToString(spill);
  BuildOptions build;
  build.path = dir + "/segment";
  build.schema = schema;
  build.metadata.datasource = "wiki";
  build.metadata.interval = testing::TestInterval();
  build.metadata.version = "v1";
  build.metadata.segment_id = "wiki_x_y_v1_0";
  build.metadata.provenance.topic = "edits";
  build.metadata.provenance.ranges = {{0, 0, 1000, 0}, {1, 0, 1000, 0}};
  build.spill_paths = {spill};
  auto info = BuildSegment(build);
  EXPECT_TRUE(info.ok()) << info.status();
  f.segment = *ReadFileToString(build.path);
  const Schema plain = testing::TestSchema(/*rollup=*/false, /*discover=*/true);
  const std::string dir2 = NewDir("damage-plain");
  f.spill_no_rollup = *ReadFileToString(
      PersistRows(plain, testing::RandomRows(6, 60, plain, 2), dir2));
  return f;
}

// Opens and, if that works, reads everything a caller could read.
absl::Status ReadEverything(std::string bytes, bool verify_checksum) {
  SegmentReader::Options options;
  options.verify_checksum = verify_checksum;
  auto reader = SegmentReader::FromBytes(std::move(bytes), options);
  if (!reader.ok()) return reader.status();
  if (absl::Status s = (*reader)->Verify(); !s.ok()) return s;
  for (size_t d = 0; d < (*reader)->num_dimensions(); ++d) {
    const std::string name = (*reader)->header().dimensions[d];
    if (!(*reader)->ReadDimensionIds(name).ok()) return absl::DataLossError("ids");
    if ((*reader)->header().kind == FileKind::kSegment) {
      auto rows = (*reader)->RowsWithValue(name, std::nullopt);
      if (!rows.ok()) return rows.status();
    }
  }
  return absl::OkStatus();
}

void ExpectClearError(const absl::Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << what << ": " << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "corrupt segment file: ") ||
              absl::StrContains(s.message(), "does not decompress"))
      << what << ": " << s;
}

class Damage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { files_ = new Files(MakeFiles()); }
  static void TearDownTestSuite() { delete files_; }
  static Files* files_;
};
Files* Damage::files_ = nullptr;

TEST_F(Damage, IntactFilesReadCleanly) {
  for (const std::string* f : {&files_->segment, &files_->spill, &files_->spill_no_rollup}) {
    EXPECT_TRUE(ReadEverything(*f, true).ok()) << ReadEverything(*f, true);
  }
  EXPECT_LT(files_->segment.size(), 40000u);  // keeps the byte-by-byte tests quick
}

TEST_F(Damage, EveryFlippedByteFailsTheChecksum) {
  for (const std::string* f : {&files_->segment, &files_->spill, &files_->spill_no_rollup}) {
    for (size_t i = 0; i < f->size(); ++i) {
      std::string damaged = *f;
      damaged[i] ^= static_cast<char>(1 << (i % 8));
      auto reader = SegmentReader::FromBytes(damaged, SegmentReader::Options());
      ASSERT_FALSE(reader.ok()) << "byte " << i;
      ExpectClearError(reader.status(), absl::StrCat("byte ", i));
    }
  }
}

TEST_F(Damage, EveryTruncationFails) {
  for (const std::string* f : {&files_->segment, &files_->spill}) {
    for (size_t cut = 0; cut < f->size(); cut += (cut < 64 || cut + 64 > f->size()) ? 1 : 7) {
      const absl::Status s = ReadEverything(f->substr(0, cut), true);
      ASSERT_FALSE(s.ok()) << "cut at " << cut;
      ExpectClearError(s, absl::StrCat("cut at ", cut));
      // Without the checksum the structure checks catch it too.
      const absl::Status unchecked = ReadEverything(f->substr(0, cut), false);
      ASSERT_FALSE(unchecked.ok()) << "cut at " << cut;
      ExpectClearError(unchecked, absl::StrCat("unchecked cut at ", cut));
    }
  }
}

// Damage that comes with a matching checksum (a buggy or hostile writer):
// the reader must still never crash or read out of bounds; it reports an
// error or reads values.
TEST_F(Damage, StructureIsCheckedEvenWhenTheChecksumMatches) {
  int rejected = 0, accepted = 0;
  for (const std::string* f : {&files_->segment, &files_->spill, &files_->spill_no_rollup}) {
    // Every byte of the header, directory and trailer (the structure); every
    // third byte of the data blocks, dictionaries and bitmaps.
    const size_t header_end = kPreambleSize + DecodeFixed32(f->data() + 12);
    const size_t directory = DecodeFixed64(f->data() + f->size() - kTrailerSize);
    for (size_t i = 0; i < f->size(); i += (i >= header_end && i < directory) ? 3 : 1) {
      static constexpr uint8_t kPatterns[] = {0x01, 0x80, 0xff, 0x10};
      std::string damaged = *f;
      damaged[i] ^= static_cast<char>(kPatterns[i % 4]);
      testing::ResealChecksum(&damaged);
      const absl::Status s = ReadEverything(damaged, true);
      if (s.ok()) {
        ++accepted;
      } else {
        ++rejected;
        ExpectClearError(s, absl::StrCat("byte ", i));
      }
    }
  }
  // Most damage is structural; some only changes values (e.g. a metric).
  EXPECT_GT(rejected, accepted);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
