// Random rows -> index -> spills -> merged segment -> reader equals a naive
// reference; and the same records spilled at different points or consumed in
// different partition interleavings give byte-identical segment files.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/segment/file_io.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/segment_writer.h"
#include "common/segment/spill.h"
#include "common/segment/test_rows.h"

namespace sluice {
namespace segment {
namespace {

using testing::Interleave;
using testing::OutputRow;
using testing::OwnedRow;
using testing::RandomRows;
using testing::ReadRows;
using testing::ReferenceRows;
using testing::TestInterval;
using testing::TestSchema;
using testing::ToInputRow;

std::string NewDir(const std::string& name) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  mkdir(dir.c_str(), 0755);
  return dir;
}

SegmentMetadata Metadata(const std::vector<OwnedRow>& rows) {
  SegmentMetadata m;
  m.datasource = "wiki";
  m.interval = TestInterval();
  m.version = "2026-11-30T02:05:00.000Z";
  m.partition_num = 3;
  m.segment_id = "wiki_2026-11-30T02:00:00.000Z_2026-11-30T03:00:00.000Z_v1_3";
  m.provenance.topic = "edits";
  for (int p = 3; p >= 0; --p) m.provenance.ranges.push_back({p, 100, 100000, 0});
  (void)rows;
  return m;
}

// Feeds `rows` to an index, persisting whenever `spill_every` records have
// arrived since the last persist (0: never), and builds the segment.
SegmentInfo Build(const std::vector<OwnedRow>& rows, const Schema& schema, size_t spill_every,
                  bool keep_live, const std::string& dir, const std::string& out) {
  auto index = IncrementalIndex::Create({schema, TestInterval()});
  EXPECT_TRUE(index.ok()) << index.status();
  std::vector<std::string> spills;
  size_t since = 0;
  for (const OwnedRow& row : rows) {
    EXPECT_TRUE((*index)->Add(ToInputRow(row, schema), row.partition, row.offset).ok());
    if (spill_every > 0 && ++since == spill_every) {
      SpillOptions options;
      options.directory = dir;
      options.name = absl::StrCat("spill-", spills.size());
      auto spill = PersistIndex(index->get(), options);
      EXPECT_TRUE(spill.ok()) << spill.status();
      spills.push_back(spill->path);
      since = 0;
    }
  }
  if (!keep_live && !(*index)->empty()) {
    SpillOptions options;
    options.directory = dir;
    options.name = absl::StrCat("spill-", spills.size());
    auto spill = PersistIndex(index->get(), options);
    EXPECT_TRUE(spill.ok()) << spill.status();
    spills.push_back(spill->path);
  }
  BuildOptions build;
  build.path = out;
  build.schema = schema;
  build.metadata = Metadata(rows);
  build.spill_paths = spills;
  build.live_index = index->get();
  auto info = BuildSegment(build);
  EXPECT_TRUE(info.ok()) << info.status();
  return info.ok() ? *info : SegmentInfo();
}

class RoundTrip : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(RoundTrip, SegmentHoldsExactlyTheReferenceRollup) {
  const auto [rollup, discover] = GetParam();
  const Schema schema = TestSchema(rollup, discover);
  const std::string dir = NewDir(absl::StrCat("rt", rollup, discover));
  for (uint64_t seed : {1, 2}) {
    const std::vector<OwnedRow> rows = RandomRows(seed, 2000, schema, 4);
    const std::string out = absl::StrCat(dir, "/seg", seed);
    const std::string spills = NewDir(absl::StrCat("rt", rollup, discover, "-spills", seed));
    const SegmentInfo info = Build(Interleave(rows, seed), schema, 700, true, spills, out);
    auto reader = SegmentReader::Open(out);
    ASSERT_TRUE(reader.ok()) << reader.status();
    ASSERT_TRUE((*reader)->Verify().ok()) << (*reader)->Verify();
    const std::vector<OutputRow> expected = ReferenceRows(rows, schema);
    const std::vector<OutputRow> actual = ReadRows(reader->get());
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(actual[i], expected[i]) << i << "\n  actual:   " << testing::ToString(actual[i])
                                        << "\n  expected: " << testing::ToString(expected[i]);
    }
    if (rollup) {
      EXPECT_LT(info.num_rows, rows.size());  // rollup merged something
    } else {
      EXPECT_EQ(info.num_rows, rows.size());
    }
    // What the builder reports matches the file.
    EXPECT_EQ(info.num_rows, (*reader)->num_rows());
    EXPECT_EQ(info.input_records, rows.size());
    EXPECT_EQ(info.checksum, (*reader)->checksum());
    EXPECT_EQ(info.size_bytes, (*reader)->file_size());
    const Provenance& prov = (*reader)->header().metadata.provenance;
    EXPECT_EQ(prov.topic, "edits");
    ASSERT_EQ(prov.ranges.size(), 4u);
    int64_t total = 0;
    for (int p = 0; p < 4; ++p) {
      EXPECT_EQ(prov.ranges[p].partition, p);
      int64_t records = 0;
      for (const OwnedRow& r : rows) records += r.partition == p;
      EXPECT_EQ(prov.ranges[p].rows, records);
      EXPECT_EQ(info.provenance.ranges[p].rows, records);
      total += records;
    }
    EXPECT_EQ(total, static_cast<int64_t>(rows.size()));
  }
}

INSTANTIATE_TEST_SUITE_P(RollupAndDiscovery, RoundTrip,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

class Determinism : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

// Builds one segment per replica plan and checks all files are identical.
void ExpectIdenticalSegments(const std::vector<OwnedRow>& rows, const Schema& schema,
                             const std::string& tag,
                             const std::vector<std::tuple<uint64_t, size_t, bool>>& plans) {
  std::string first, first_checksum;
  for (size_t n = 0; n < plans.size(); ++n) {
    const auto [interleaving, spill_every, keep_live] = plans[n];
    const std::string dir = NewDir(absl::StrCat(tag, "-", n));
    const std::string out = absl::StrCat(dir, "/segment");
    const SegmentInfo info =
        Build(Interleave(rows, interleaving), schema, spill_every, keep_live, dir, out);
    auto bytes = ReadFileToString(out);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    if (n == 0) {
      first = *bytes;
      first_checksum = info.checksum;
      auto reader = SegmentReader::Open(out);
      ASSERT_TRUE(reader.ok()) << reader.status();
      EXPECT_TRUE((*reader)->Verify().ok()) << (*reader)->Verify();
    } else {
      EXPECT_EQ(info.checksum, first_checksum) << tag << " replica " << n;
      EXPECT_TRUE(*bytes == first) << tag << " replica " << n << " wrote different bytes";
    }
  }
}

TEST_P(Determinism, SpillPointsAndInterleavingsDoNotChangeABit) {
  const auto [rollup, discover] = GetParam();
  const Schema schema = TestSchema(rollup, discover);
  // (interleaving seed, persist every N records (0: never), keep the last
  // rows in memory for the build)
  ExpectIdenticalSegments(RandomRows(77, 2500, schema, 4), schema,
                          absl::StrCat("det", rollup, discover),
                          {{1, 0, true}, {2, 333, true}, {3, 1000, false}, {5, 2499, true}});
  // One spill per record against none at all.
  ExpectIdenticalSegments(RandomRows(78, 40, schema, 3), schema,
                          absl::StrCat("tiny", rollup, discover), {{1, 0, true}, {2, 1, false}});
}

INSTANTIATE_TEST_SUITE_P(RollupAndDiscovery, Determinism,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

// The bitmaps come from ids kept in memory, or read back from the blocks
// once the kept ids would pass their bound (here from the start, or after a
// block or two): the same bytes every way.
TEST(BitmapIds, KeptOrReadBackTheSameBytes) {
  const Schema schema = TestSchema(/*rollup=*/false, /*discover=*/false);
  const std::vector<OwnedRow> rows = RandomRows(79, 20000, schema, 4);
  std::string first;
  for (uint64_t bound : {kMaxIdBytesInMemory, uint64_t{0}, uint64_t{60000}, uint64_t{120000}}) {
    SetMaxIdBytesInMemoryForTesting(bound);
    const std::string dir = NewDir(absl::StrCat("ids-", bound));
    const std::string out = absl::StrCat(dir, "/segment");
    Build(rows, schema, /*spill_every=*/0, /*keep_live=*/true, dir, out);
    auto bytes = ReadFileToString(out);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    if (first.empty()) {
      first = *bytes;
      auto reader = SegmentReader::Open(out);
      ASSERT_TRUE(reader.ok()) << reader.status();
      EXPECT_TRUE((*reader)->Verify().ok()) << (*reader)->Verify();
    } else {
      EXPECT_TRUE(*bytes == first) << "bound " << bound << " wrote different bytes";
    }
  }
  SetMaxIdBytesInMemoryForTesting(kMaxIdBytesInMemory);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
