// Compaction: segments built from disjoint record sets, compacted, hold the
// rows one segment built from all the records holds; the output does not
// depend on the order of the inputs; mismatched or overlapping inputs are
// refused, naming them.
#include "common/segment/compaction.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/segment/exact_sum.h"
#include "common/segment/file_io.h"
#include "common/segment/incremental_index.h"
#include "common/segment/segment_builder.h"
#include "common/segment/segment_reader.h"
#include "common/segment/test_damage.h"
#include "common/segment/test_rows.h"

namespace sluice {
namespace segment {
namespace {

using testing::OutputRow;
using testing::OwnedRow;
using testing::RandomRows;
using testing::ReadRows;
using testing::TestInterval;
using testing::TestSchema;
using testing::ToInputRow;

constexpr int kPartitions = 4;

std::string Dir() { return std::getenv("TEST_TMPDIR"); }

// Builds a segment of `rows` whose provenance is `ranges`.
SegmentInfo BuildWithRanges(const std::vector<OwnedRow>& rows, const Schema& schema,
                            const std::vector<PartitionRange>& ranges, const std::string& id,
                            const std::string& datasource = "wiki") {
  testing::TestSegment segment;
  segment.path = absl::StrCat(Dir(), "/", id, ".seg");
  segment.segment_id = id;
  segment.datasource = datasource;
  segment.ranges = ranges;
  auto info = testing::BuildTestSegment(rows, schema, segment);
  EXPECT_TRUE(info.ok()) << info.status();
  return info.ok() ? *info : SegmentInfo();
}

// Builds a segment of `rows` whose provenance is [start, end) of every partition.
SegmentInfo Build(const std::vector<OwnedRow>& rows, const Schema& schema, int64_t start,
                  int64_t end, const std::string& id, const std::string& datasource = "wiki") {
  std::vector<PartitionRange> ranges;
  for (int p = 0; p < kPartitions; ++p) ranges.push_back({p, start, end, 0});
  return BuildWithRanges(rows, schema, ranges, id, datasource);
}

CompactionOptions Options(std::vector<std::string> inputs, const std::string& id) {
  CompactionOptions options;
  options.input_paths = std::move(inputs);
  options.path = absl::StrCat(Dir(), "/", id, ".seg");
  options.version = "v2";
  options.segment_id = id;
  return options;
}

std::vector<OutputRow> Rows(const std::string& path) {
  auto reader = SegmentReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return {};
  EXPECT_TRUE((*reader)->Verify().ok()) << (*reader)->Verify();
  return ReadRows(reader->get());
}

double AsDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

class Compaction : public ::testing::TestWithParam<bool> {};

TEST_P(Compaction, HoldsTheRowsOfOneSegmentBuiltFromAllTheRecords) {
  const bool rollup = GetParam();
  const Schema schema = TestSchema(rollup, false);
  const std::vector<OwnedRow> rows = RandomRows(7, 3000, schema, kPartitions);
  // Two sequences: offsets [100, 400) and [400, 100000) of every partition.
  std::vector<OwnedRow> early, late;
  for (const OwnedRow& row : rows) (row.offset < 400 ? early : late).push_back(row);
  ASSERT_FALSE(early.empty());
  ASSERT_FALSE(late.empty());
  const std::string tag = rollup ? "r" : "n";
  const SegmentInfo all = Build(rows, schema, 100, 100000, tag + "all");
  const SegmentInfo a = Build(early, schema, 100, 400, tag + "a");
  const SegmentInfo b = Build(late, schema, 400, 100000, tag + "b");

  auto ab = CompactSegments(Options({a.path, b.path}, tag + "ab"));
  ASSERT_TRUE(ab.ok()) << ab.status();
  auto ba = CompactSegments(Options({b.path, a.path}, tag + "ba"));
  ASSERT_TRUE(ba.ok()) << ba.status();
  EXPECT_EQ(ab->input_records, rows.size());
  // Any order of the inputs: the same bytes (the ids are the same too: the
  // segment id is in the file, so compare ab with a second ab).
  auto ab2 = CompactSegments(Options({b.path, a.path}, tag + "ab"));
  ASSERT_TRUE(ab2.ok()) << ab2.status();
  EXPECT_EQ(ab2->checksum, ab->checksum);
  EXPECT_EQ(ba->num_rows, ab->num_rows);

  // Provenance: both ranges of every partition, each with its segment's rows.
  ASSERT_EQ(ab->provenance.ranges.size(), 2u * kPartitions);
  for (int p = 0; p < kPartitions; ++p) {
    const PartitionRange& first = ab->provenance.ranges[2 * p];
    const PartitionRange& second = ab->provenance.ranges[2 * p + 1];
    EXPECT_EQ(first.partition, p);
    EXPECT_EQ(first.start_offset, 100);
    EXPECT_EQ(first.end_offset, 400);
    EXPECT_EQ(first.rows, a.provenance.ranges[p].rows);
    EXPECT_EQ(second.start_offset, 400);
    EXPECT_EQ(second.rows, b.provenance.ranges[p].rows);
    EXPECT_EQ(first.rows + second.rows, all.provenance.ranges[p].rows);
  }

  std::vector<OutputRow> expected = Rows(all.path);
  std::vector<OutputRow> actual = Rows(ab->path);
  EXPECT_EQ(ab->num_rows, all.num_rows);
  ASSERT_EQ(actual.size(), expected.size());
  if (!rollup) {
    // Rows with equal keys from different sequences: the single build orders
    // them by (partition, offset), which segments do not store.
    auto by_text = [](const OutputRow& x, const OutputRow& y) {
      return testing::ToString(x) < testing::ToString(y);
    };
    std::sort(expected.begin(), expected.end(), by_text);
    std::sort(actual.begin(), actual.end(), by_text);
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(actual[i], expected[i]) << i << "\n  actual:   " << testing::ToString(actual[i])
                                        << "\n  expected: " << testing::ToString(expected[i]);
    }
    return;
  }
  EXPECT_LT(ab->num_rows, a.num_rows + b.num_rows);  // rollup combined across inputs
  // A doubleSum combined across inputs is the exact sum of the inputs'
  // stored (rounded) values, rounded once.
  std::map<std::string, std::vector<ExactSum>> input_sums;
  for (const std::string& path : {a.path, b.path}) {
    for (const OutputRow& row : Rows(path)) {
      OutputRow key = row;
      key.metrics.clear();
      std::vector<ExactSum>& sums = input_sums[testing::ToString(key)];
      sums.resize(schema.metrics.size());
      for (size_t m = 0; m < schema.metrics.size(); ++m) sums[m].Add(AsDouble(row.metrics[m]));
    }
  }
  int combined_doubles_differing = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(actual[i].time, expected[i].time) << i;
    ASSERT_EQ(actual[i].dims, expected[i].dims) << i;
    for (size_t m = 0; m < schema.metrics.size(); ++m) {
      if (schema.metrics[m].type == MetricType::kDoubleSum) {
        OutputRow key = actual[i];
        key.metrics.clear();
        const double want = input_sums.at(testing::ToString(key))[m].Round();
        ASSERT_EQ(std::memcmp(&want, &actual[i].metrics[m], sizeof(double)), 0)
            << i << ": " << AsDouble(actual[i].metrics[m]) << " vs " << want;
        if (actual[i].metrics[m] != expected[i].metrics[m]) ++combined_doubles_differing;
      } else {
        ASSERT_EQ(actual[i].metrics[m], expected[i].metrics[m])
            << i << " metric " << schema.metrics[m].name;
      }
    }
  }
  // The random rows include values whose rounded partial sums lose what the
  // single build's exact sum keeps (1e16 + 1 - 1e16): the documented limit.
  EXPECT_GT(combined_doubles_differing, 0);
}

INSTANTIATE_TEST_SUITE_P(Rollup, Compaction, ::testing::Bool());

// A segment a task builds is LZ4 (cheap on the ingest path); compaction
// rewrites it as zstd (the smaller form that stays in deep storage).
TEST(CompactionCodec, TaskBuiltSegmentsAreLz4AndCompactedOnesZstd) {
  const Schema schema = TestSchema(/*rollup=*/false, false);
  const std::vector<OwnedRow> rows = RandomRows(11, 500, schema, kPartitions);
  const SegmentInfo built = Build(rows, schema, 100, 100000, "codec");
  auto built_reader = SegmentReader::Open(built.path);
  ASSERT_TRUE(built_reader.ok()) << built_reader.status();
  EXPECT_EQ((*built_reader)->header().compression, Compression::kLz4);

  auto compacted = CompactSegments(Options({built.path}, "codec-compacted"));
  ASSERT_TRUE(compacted.ok()) << compacted.status();
  auto compacted_reader = SegmentReader::Open(compacted->path);
  ASSERT_TRUE(compacted_reader.ok()) << compacted_reader.status();
  EXPECT_EQ((*compacted_reader)->header().compression, Compression::kZstd);
  EXPECT_EQ(compacted->num_rows, built.num_rows);
}

// The reader's verification of a compacted segment: a partition's ranges
// must add up to its records (rows moved between them cannot be seen: the
// file keeps no offsets per row).
TEST(CompactedSegment, TheReaderChecksAPartitionsRangesTogether) {
  const Schema schema = TestSchema(false, false);
  const std::vector<OwnedRow> rows = RandomRows(9, 600, schema, kPartitions);
  std::vector<OwnedRow> early, late;
  for (const OwnedRow& row : rows) (row.offset < 200 ? early : late).push_back(row);
  const SegmentInfo a = Build(early, schema, 100, 200, "ra");
  const SegmentInfo b = Build(late, schema, 200, 100000, "rb");
  auto c = CompactSegments(Options({a.path, b.path}, "rc"));
  ASSERT_TRUE(c.ok()) << c.status();
  auto reader = SegmentReader::Open(c->path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE((*reader)->Verify().ok());
  const FileHeader header = (*reader)->header();
  reader->reset();
  auto bytes = ReadFileToString(c->path);
  ASSERT_TRUE(bytes.ok());
  auto rewrite = [&](const FileHeader& changed) {
    const std::string before = EncodeHeader(header), after = EncodeHeader(changed);
    ASSERT_EQ(before.size(), after.size());
    ASSERT_EQ(bytes->compare(0, before.size(), before), 0);
    std::string damaged = *bytes;
    damaged.replace(0, after.size(), after);
    testing::ResealChecksum(&damaged);
    std::ofstream out(c->path, std::ios::binary | std::ios::trunc);
    out.write(damaged.data(), static_cast<std::streamsize>(damaged.size()));
    ASSERT_TRUE(out.good());
  };
  FileHeader moved = header;  // one row moved from a range to the next: unseen
  moved.metadata.provenance.ranges[0].rows -= 1;
  moved.metadata.provenance.ranges[1].rows += 1;
  rewrite(moved);
  reader = SegmentReader::Open(c->path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->Verify().ok());
  FileHeader extra = header;  // one row more than the partition holds
  extra.metadata.provenance.ranges[1].rows += 1;
  rewrite(extra);
  reader = SegmentReader::Open(c->path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const absl::Status verified = (*reader)->Verify();
  EXPECT_EQ(verified.code(), absl::StatusCode::kDataLoss) << verified;
  EXPECT_NE(verified.message().find("provenance of partition 0 says"), std::string::npos)
      << verified;
}

TEST(CompactionRefuses, OverlappingProvenanceDatasourcesAndSchemas) {
  const Schema schema = TestSchema(true, false);
  const std::vector<OwnedRow> rows = RandomRows(8, 500, schema, kPartitions);
  std::vector<OwnedRow> early, late;
  for (const OwnedRow& row : rows) (row.offset < 200 ? early : late).push_back(row);
  const SegmentInfo a = Build(early, schema, 100, 200, "xa");
  const SegmentInfo copy = Build(early, schema, 100, 200, "xa_copy");
  const SegmentInfo overlap = Build(late, schema, 150, 100000, "xoverlap");
  const SegmentInfo other_ds = Build(late, schema, 200, 100000, "xother", "other");
  const SegmentInfo no_rollup = Build(late, TestSchema(false, false), 200, 100000, "xnorollup");

  auto expect_refused = [](const absl::StatusOr<SegmentInfo>& result,
                           std::vector<std::string> names) {
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
    for (const std::string& n : names) {
      EXPECT_NE(result.status().message().find(n), std::string::npos) << result.status();
    }
  };
  expect_refused(CompactSegments(Options({a.path, copy.path}, "x1")), {"xa ", "xa_copy"});
  expect_refused(CompactSegments(Options({overlap.path, a.path}, "x2")), {"xa ", "xoverlap"});
  expect_refused(CompactSegments(Options({a.path, other_ds.path}, "x3")), {"xother", "other"});
  expect_refused(CompactSegments(Options({a.path, no_rollup.path}, "x4")),
                 {"xnorollup", "different schema"});
  auto none = CompactSegments(Options({}, "x5"));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

// A sequence that read nothing of a partition has an empty range there,
// starting where the next sequence's range of it starts: [s, s) and [s, e)
// are no overlap, however many ranges the inputs have (past 16 the sort of
// the ranges is no longer an insertion sort, and equal starts moved).
TEST(CompactionRanges, EmptyRangesStartingWhereAnotherStartsAreNoOverlap) {
  const Schema schema = TestSchema(true, false);
  constexpr int kSequences = 60;
  constexpr int64_t kWidth = 10;
  const std::vector<OwnedRow> rows = RandomRows(11, 3000, schema, kPartitions);
  // Partitions 0 and 1: sequence k reads [100 + 10k, 110 + 10k). Partitions
  // 2 and 3: an even sequence reads nothing ([100 + 10k, 100 + 10k)), the
  // odd one after it reads both slots.
  auto sequence_of = [&](const OwnedRow& row) {
    const int slot = static_cast<int>((row.offset - 100) / kWidth);
    return row.partition < 2 ? slot : (slot | 1);
  };
  std::vector<std::string> paths;
  size_t records = 0;
  for (int k = 0; k < kSequences; ++k) {
    std::vector<OwnedRow> mine;
    for (const OwnedRow& row : rows) {
      if (row.offset < 100 + kWidth * kSequences && sequence_of(row) == k) mine.push_back(row);
    }
    records += mine.size();
    const int64_t start = 100 + kWidth * k;
    std::vector<PartitionRange> ranges = {{0, start, start + kWidth, 0},
                                          {1, start, start + kWidth, 0}};
    for (int p = 2; p < kPartitions; ++p) {
      if (k % 2 == 0) {
        ranges.push_back({p, start, start, 0});
      } else {
        ranges.push_back({p, start - kWidth, start + kWidth, 0});
      }
    }
    paths.push_back(BuildWithRanges(mine, schema, ranges, absl::StrCat("empty", k)).path);
  }
  auto compacted = CompactSegments(Options(paths, "empties"));
  ASSERT_TRUE(compacted.ok()) << compacted.status();
  EXPECT_EQ(compacted->input_records, records);
  EXPECT_EQ(compacted->provenance.ranges.size(), 4u * kSequences);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
