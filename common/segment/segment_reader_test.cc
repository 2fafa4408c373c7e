// The writer and reader APIs on a small hand-made segment.
#include "common/file_util.h"
#include "common/segment/segment_reader.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/segment/file_io.h"
#include "common/segment/segment_writer.h"

namespace sluice {
namespace segment {
namespace {

std::string TempPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

FileHeader Header(uint32_t rows_per_block) {
  FileHeader h;
  h.kind = FileKind::kSegment;
  h.compression = Compression::kZstd;
  h.rows_per_block = rows_per_block;
  h.input_records = 7;
  h.metadata.datasource = "wiki";
  h.metadata.interval = {1000, 2000};
  h.metadata.version = "v1";
  h.metadata.partition_num = 2;
  h.metadata.segment_id = "wiki_1000_2000_v1_2";
  h.metadata.provenance.topic = "edits";
  h.metadata.provenance.ranges = {{0, 10, 20, 7}};
  h.schema.dimensions = {"country", "page"};
  h.schema.metrics = {{MetricType::kCount, "count", ""},
                      {MetricType::kDoubleSum, "delta", "delta"}};
  h.dimensions = h.schema.dimensions;
  h.partitions = {{0, 7, 10, 16}};
  return h;
}

// Rows: (time, country id, page id, count, delta).
struct Row {
  int64_t time;
  uint32_t country, page;
  int64_t count;
  double delta;
};

absl::StatusOr<WrittenFile> Write(const std::string& path, const std::vector<Row>& rows,
                                  uint32_t rows_per_block = 2) {
  auto writer = SegmentWriter::Create(path, Header(rows_per_block),
                                      {{"de", "fr", "us"}, {"Berlin", "Paris"}});
  if (!writer.ok()) return writer.status();
  for (const Row& r : rows) {
    const uint32_t ids[] = {r.country, r.page};
    const MetricCell cells[] = {{static_cast<uint64_t>(r.count), nullptr}, {Bits(r.delta), nullptr}};
    if (absl::Status s = (*writer)->AddRow(r.time, ids, cells, 0, 0); !s.ok()) return s;
  }
  return (*writer)->Finish();
}

const std::vector<Row> kRows = {{1000, 0, 1, 1, 0.5},  {1000, 1, 1, 2, -1.0}, {1500, 1, 2, 1, 2.0},
                                {1500, 3, 0, 1, 3.25}, {1999, 2, 2, 2, 0.0}};

TEST(SegmentReader, ReadsColumnsBitmapsAndRows) {
  const std::string path = TempPath("small.seg");
  auto written = Write(path, kRows);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->num_rows, 5u);
  auto reader = SegmentReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  SegmentReader& r = **reader;
  ASSERT_TRUE(r.Verify().ok()) << r.Verify();
  EXPECT_EQ(r.num_rows(), 5u);
  EXPECT_EQ(r.num_blocks(), 3u);
  EXPECT_EQ(r.file_size(), written->size_bytes);
  EXPECT_EQ(r.crc(), written->crc);
  EXPECT_EQ(r.checksum(), absl::StrFormat("crc32c:%08x", written->crc));
  const FileHeader& h = r.header();
  EXPECT_EQ(h.metadata.segment_id, "wiki_1000_2000_v1_2");
  EXPECT_EQ(h.metadata.partition_num, 2);
  EXPECT_EQ(h.min_time, 1000);
  EXPECT_EQ(h.max_time, 1999);
  EXPECT_EQ(h.metadata.provenance.ranges[0].rows, 7);

  EXPECT_EQ(*r.ReadTimes(), (std::vector<int64_t>{1000, 1000, 1500, 1500, 1999}));
  EXPECT_EQ(*r.ReadDimensionIds("country"), (std::vector<uint32_t>{0, 1, 1, 3, 2}));
  EXPECT_EQ(*r.ReadLongMetric("count"), (std::vector<int64_t>{1, 2, 1, 1, 2}));
  EXPECT_EQ(*r.ReadDoubleMetric("delta"), (std::vector<double>{0.5, -1.0, 2.0, 3.25, 0.0}));
  EXPECT_EQ(r.ReadLongMetric("delta").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.ReadDimensionIds("nope").status().code(), absl::StatusCode::kNotFound);

  EXPECT_EQ(r.RowsWithValue("country", "de")->ToVector(), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(r.RowsWithValue("country", std::nullopt)->ToVector(), (std::vector<uint32_t>{0}));
  EXPECT_EQ(r.RowsWithValue("page", "Paris")->ToVector(), (std::vector<uint32_t>{2, 4}));
  EXPECT_EQ(r.RowsWithValue("page", "Rome")->cardinality(), 0u);
  EXPECT_TRUE(r.RowsWithValue("page", "Berlin")->Contains(0));
  EXPECT_EQ(r.RowsWithValue("nope", "x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.FindId(0, "us"), 3);
  EXPECT_EQ(r.FindId(0, "xx"), -1);
  EXPECT_EQ(r.FindId(0, std::nullopt), 0);

  RowCursor cursor(&r);
  std::vector<std::string> seen;
  while (*cursor.Next()) {
    auto country = cursor.dimension(0);
    seen.push_back(absl::StrCat(cursor.row(), ":", cursor.time(), ":",
                                country ? std::string(*country) : "null", ":",
                                cursor.long_metric(0), ":", cursor.double_metric(1)));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"0:1000:null:1:0.5", "1:1000:de:2:-1",
                                            "2:1500:de:1:2", "3:1500:us:1:3.25",
                                            "4:1999:fr:2:0"}));
  EXPECT_GT(r.ColumnBytes(1), 0u);
}

// The order check compares a block's first row with the last row of the
// block before it (rows_per_block 2 here).
TEST(SegmentWriter, RefusesRowsOutOfOrderAcrossABlockBoundary) {
  EXPECT_EQ(Write(TempPath("across1"), {{1000, 1, 2, 1, 0}, {1500, 2, 1, 1, 0}, {1500, 1, 2, 1, 0}})
                .status()
                .code(),
            absl::StatusCode::kInternal);
  // Same time, the second id lower at the block's start.
  EXPECT_EQ(Write(TempPath("across2"), {{1000, 1, 0, 1, 0}, {1500, 2, 2, 1, 0}, {1500, 2, 1, 1, 0}})
                .status()
                .code(),
            absl::StatusCode::kInternal);
  // Equal keys across the boundary with rollup on.
  EXPECT_EQ(Write(TempPath("across3"), {{1000, 1, 0, 1, 0}, {1500, 2, 2, 1, 0}, {1500, 2, 2, 1, 0}})
                .status()
                .code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(
      Write(TempPath("across4"), {{1000, 1, 0, 1, 0}, {1500, 2, 1, 1, 0}, {1500, 2, 2, 1, 0}}).ok());
}

// A refused row leaves nothing in the block: the rows after it are written
// as if it had never come.
TEST(SegmentWriter, ARefusedRowLeavesNothingBehind) {
  const std::string path = TempPath("refused");
  auto writer = SegmentWriter::Create(path, Header(4), {{"de", "fr", "us"}, {"Berlin", "Paris"}});
  ASSERT_TRUE(writer.ok());
  const MetricCell cells[] = {{1, nullptr}, {Bits(0.5), nullptr}};
  const uint32_t first[] = {1, 1};
  ASSERT_TRUE((*writer)->AddRow(1000, first, cells, 0, 0).ok());
  const uint32_t bad_id[] = {2, 9};  // page 9 is not in the dictionary
  EXPECT_EQ((*writer)->AddRow(1200, bad_id, cells, 0, 0).code(), absl::StatusCode::kInvalidArgument);
  const uint32_t out_of_order[] = {0, 0};
  EXPECT_EQ((*writer)->AddRow(1000, out_of_order, cells, 0, 0).code(), absl::StatusCode::kInternal);
  const uint32_t second[] = {2, 2};
  ASSERT_TRUE((*writer)->AddRow(1200, second, cells, 0, 0).ok());
  const uint32_t third[] = {3, 1};
  ASSERT_TRUE((*writer)->AddRow(1300, third, cells, 0, 0).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  auto reader = SegmentReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->num_rows(), 3u);
  EXPECT_EQ(*(*reader)->ReadTimes(), (std::vector<int64_t>{1000, 1200, 1300}));
  EXPECT_EQ(*(*reader)->ReadDimensionIds("country"), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(*(*reader)->ReadDimensionIds("page"), (std::vector<uint32_t>{1, 2, 1}));
}

TEST(SegmentWriter, RefusesRowsOutOfOrderOrOutOfRange) {
  EXPECT_EQ(Write(TempPath("bad1"), {{1500, 0, 0, 1, 0}, {1000, 0, 0, 1, 0}}).status().code(),
            absl::StatusCode::kInternal);
  // Equal keys with rollup on.
  EXPECT_EQ(Write(TempPath("bad2"), {{1500, 1, 0, 1, 0}, {1500, 1, 0, 1, 0}}).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(Write(TempPath("bad3"), {{1500, 4, 0, 1, 0}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Write(TempPath("bad4"), {{2000, 0, 0, 1, 0}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (const char* name : {"bad1", "bad2", "bad3", "bad4"}) {
    EXPECT_FALSE(ReadFileToString(TempPath(name)).ok()) << name << " was left behind";
  }
  auto unsorted = SegmentWriter::Create(TempPath("bad5"), Header(8), {{"b", "a"}, {}});
  EXPECT_EQ(unsorted.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SegmentReader, OpenErrors) {
  EXPECT_EQ(SegmentReader::Open(TempPath("missing")).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(sluice::WriteFileAtomically(TempPath("text"), std::string(100, 'x')).ok());
  const absl::Status s = SegmentReader::Open(TempPath("text")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("text"), absl::string_view::npos);  // names the file
  EXPECT_NE(s.message().find("magic"), absl::string_view::npos);
}

TEST(SegmentWriter, IdenticalRowsGiveIdenticalBytes) {
  ASSERT_TRUE(Write(TempPath("same1"), kRows, 3).ok());
  ASSERT_TRUE(Write(TempPath("same2"), kRows, 3).ok());
  EXPECT_EQ(*ReadFileToString(TempPath("same1")), *ReadFileToString(TempPath("same2")));
}

// A merge of many spills opens them without their dictionaries and holds
// one dimension's at a time.
TEST(SegmentReader, LoadsAndReleasesDictionariesOnDemand) {
  const std::string path = TempPath("lazy.seg");
  ASSERT_TRUE(Write(path, kRows).ok());
  SegmentReader::Options options;
  options.load_dictionaries = false;
  auto reader = SegmentReader::Open(path, options);
  ASSERT_TRUE(reader.ok()) << reader.status();
  SegmentReader& r = **reader;
  EXPECT_TRUE(r.dictionary(0).empty());
  ASSERT_TRUE(r.LoadDictionary(0).ok());
  EXPECT_EQ(r.dictionary(0), (std::vector<absl::string_view>{"de", "fr", "us"}));
  EXPECT_TRUE(r.dictionary(1).empty());
  ASSERT_TRUE(r.LoadDictionary(0).ok());  // loaded already: the same values
  EXPECT_EQ(r.dictionary(0).size(), 3u);
  r.ReleaseDictionary(0);
  EXPECT_TRUE(r.dictionary(0).empty());
  // Blocks still decode, and their pages come back after being given back.
  DecodedBlock block;
  for (size_t b = 0; b < r.num_blocks(); ++b) {
    ASSERT_TRUE(r.ReadBlock(b, &block).ok());
    r.ReleaseBlockPages(b);
  }
  ASSERT_TRUE(r.ReadBlock(0, &block).ok());
  EXPECT_EQ(block.times[0], 1000);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
