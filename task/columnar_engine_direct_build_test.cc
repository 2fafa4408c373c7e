// The direct build (SegmentIndex::Build: a segment file made straight from
// the rows in memory, with or without earlier spills) against the spill path
// (every row spilled, then BuildSegment): the same rows must give the same
// bytes, whatever the rollup, the dimensions (listed or discovered) and the
// split between spills and memory. Replicas compare segment checksums, so a
// single byte of difference would be a replica divergence.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "task/columnar_engine.h"

namespace sluice::task {
namespace {

constexpr int64_t kStart = 1796004000000;  // 2026-11-30T02:00:00Z
constexpr int kPartitions = 2;
constexpr int kRecords = 3000;

v1::DataSchema Schema(bool rollup, bool discover) {
  v1::DataSchema schema;
  schema.mutable_timestamp_spec()->set_column("ts");
  schema.mutable_timestamp_spec()->set_format("millis");
  schema.mutable_granularity_spec()->set_rollup(rollup);
  schema.mutable_granularity_spec()->set_query_granularity(rollup ? "MINUTE" : "NONE");
  if (!discover) {
    for (const char* d : {"page", "country", "robot"}) {
      schema.mutable_dimensions_spec()->add_dimensions(d);
    }
  }
  auto metric = [&](const char* type, const char* name, const char* field) {
    v1::MetricSpec* m = schema.add_metrics_spec();
    m->set_type(type);
    m->set_name(name);
    if (field != nullptr) m->set_field_name(field);
  };
  metric("count", "count", nullptr);
  metric("longSum", "added", "added");
  // Sums of doubles such as 0.1 are not exact in floating point: what a
  // spill keeps of a rolled-up sum must be what the index holds.
  metric("doubleSum", "delta", "delta");
  metric("doubleMax", "delta_max", "delta");
  return schema;
}

// Record i of partition i % kPartitions, offset i / kPartitions, in time
// order within a partition; few distinct keys so that rollup combines rows.
std::string Record(int i) {
  const int64_t ts = kStart + static_cast<int64_t>(i) * 997 % 3'500'000;
  std::string out = absl::StrCat(R"({"ts":)", ts, R"(,"page":"p)", (i * 7) % 23,
                                 R"(","country":")", (i % 5 == 0 ? "" : "c"), i % 4,
                                 R"(","added":)", i % 100, R"(,"delta":)", (i % 13) * 0.1 - 0.3);
  if (i % 3 == 0) absl::StrAppend(&out, R"(,"robot":"yes")");
  // A field only some records carry: a discovered dimension that appears
  // late, so earlier spills lack it.
  if (i > kRecords / 2 && i % 11 == 0) absl::StrAppend(&out, R"(,"late":"x)", i % 3, R"(")");
  return out + "}";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class DirectBuildTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_direct_build_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto engine = NewColumnarEngine(Schema(std::get<0>(GetParam()), std::get<1>(GetParam())));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
    parser_ = engine_->NewParser();
    interval_.set_start_ms(kStart);
    interval_.set_end_ms(kStart + 3'600'000);
    info_.segment_id = "wiki_x";
    info_.datasource = "wiki";
    info_.interval = interval_;
    info_.version = "2026-11-30T00:00:00.000Z";
    info_.sequence_name = "wiki_abc_0";
    info_.provenance.set_topic("t");
    for (int p = 0; p < kPartitions; ++p) {
      v1::PartitionRange* range = info_.provenance.add_ranges();
      range->set_partition(p);
      range->set_start_offset(0);
      range->set_end_offset(kRecords / kPartitions);
      range->set_rows(kRecords / kPartitions);
    }
  }
  void TearDown() override { ASSERT_TRUE(RemoveAll(dir_).ok()); }

  // Adds every record to an index, spilling after the records in `spill_after`
  // (each index continuing the last, as the task's Successor does); returns
  // the last index and appends the spills' paths.
  std::unique_ptr<SegmentIndex> Ingest(const std::vector<int>& spill_after,
                                       const std::string& name, std::vector<std::string>* spills) {
    std::unique_ptr<SegmentIndex> index = engine_->NewIndex(interval_);
    for (int i = 0; i < kRecords; ++i) {
      RowParseError error;
      const ParsedRow* row = parser_->Parse(Record(i), &error);
      EXPECT_NE(row, nullptr) << error.kind << ": " << error.message;
      if (row == nullptr) continue;
      EXPECT_TRUE(index->Add(*row, i % kPartitions, i / kPartitions).ok());
      if (std::find(spill_after.begin(), spill_after.end(), i) != spill_after.end()) {
        const std::string spill = absl::StrCat(name, "_", i, ".spill");
        EXPECT_TRUE(index->Spill(dir_, spill).ok());
        spills->push_back(absl::StrCat(dir_, "/", spill));
        std::unique_ptr<SegmentIndex> next = index->Successor();
        if (next != nullptr) index = std::move(next);
      }
    }
    return index;
  }

  std::string dir_;
  std::unique_ptr<SegmentEngine> engine_;
  std::unique_ptr<RowParser> parser_;
  v1::Interval interval_;
  SegmentBuildInfo info_;
};

TEST_P(DirectBuildTest, SameBytesAsTheSpillPath) {
  // The spill path: every row spilled (the last spill at the end), then built.
  std::vector<std::string> spills;
  std::unique_ptr<SegmentIndex> rest = Ingest({kRecords - 1}, "all", &spills);
  ASSERT_EQ(rest->rows(), 0);
  const std::string via_spill = dir_ + "/via_spill.sluice";
  auto spilled = engine_->BuildSegment(spills, info_, via_spill);
  ASSERT_TRUE(spilled.ok()) << spilled.status();
  const std::string expected = ReadFile(via_spill);
  ASSERT_FALSE(expected.empty());

  // The direct build: every row still in memory.
  std::vector<std::string> none;
  std::unique_ptr<SegmentIndex> index = Ingest({}, "direct", &none);
  ASSERT_TRUE(none.empty());
  const std::string direct = dir_ + "/direct.sluice";
  auto built = index->Build({}, info_, direct);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(ReadFile(direct), expected);
  EXPECT_EQ(built->checksum, spilled->checksum);
  EXPECT_EQ(built->rows, spilled->rows);
  EXPECT_EQ(built->size_bytes, spilled->size_bytes);
  // The index is read, not emptied.
  EXPECT_GT(index->rows(), 0);

  // Earlier spills merged with the rows in memory (memory pressure during
  // the sequence, or a restart).
  std::vector<std::string> early;
  std::unique_ptr<SegmentIndex> tail = Ingest({400, 1700}, "mixed", &early);
  ASSERT_EQ(early.size(), 2u);
  const std::string mixed = dir_ + "/mixed.sluice";
  auto merged = tail->Build(early, info_, mixed);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(ReadFile(mixed), expected);

  // What the publisher learns of a built file from the file alone, without
  // and with the read-back check.
  for (bool check : {false, true}) {
    auto described = engine_->DescribeBuilt(direct, info_, check);
    ASSERT_TRUE(described.ok()) << described.status();
    EXPECT_EQ(described->checksum, built->checksum);
    EXPECT_EQ(described->rows, built->rows);
    EXPECT_EQ(described->size_bytes, built->size_bytes);
  }
  // The file's records per partition are checked against the task's count.
  SegmentBuildInfo miscounted = info_;
  miscounted.provenance.mutable_ranges(0)->set_rows(info_.provenance.ranges(0).rows() + 1);
  EXPECT_EQ(engine_->DescribeBuilt(direct, miscounted, false).status().code(),
            absl::StatusCode::kInternal);
  // Another segment's file is refused.
  SegmentBuildInfo other = info_;
  other.segment_id = "wiki_y";
  EXPECT_EQ(engine_->DescribeBuilt(direct, other, false).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_P(DirectBuildTest, DamagedBuiltFileFailsTheCheck) {
  std::vector<std::string> none;
  std::unique_ptr<SegmentIndex> index = Ingest({}, "direct", &none);
  const std::string path = dir_ + "/direct.sluice";
  ASSERT_TRUE(index->Build({}, info_, path).ok());
  std::string bytes = ReadFile(path);
  bytes[bytes.size() / 2] ^= 0x5a;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_EQ(engine_->DescribeBuilt(path, info_, /*check=*/true).status().code(),
            absl::StatusCode::kDataLoss);
}

INSTANTIATE_TEST_SUITE_P(RollupAndDimensions, DirectBuildTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return absl::StrCat(std::get<0>(info.param) ? "Rollup" : "NoRollup",
                                               std::get<1>(info.param) ? "Discovered" : "Listed");
                         });

}  // namespace
}  // namespace sluice::task
