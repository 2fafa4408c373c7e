#include "task/raw_row_engine.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/file_util.h"

namespace sluice::task {
namespace {

class RawRowEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_raw_engine_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    v1::DataSchema schema;
    schema.mutable_timestamp_spec()->set_column("ts");
    schema.mutable_timestamp_spec()->set_format("auto");
    v1::MetricSpec* metric = schema.add_metrics_spec();
    metric->set_type("longSum");
    metric->set_name("bytes");
    auto engine = NewRawRowEngine(schema);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
    parser_ = engine_->NewParser();
  }
  void TearDown() override { ASSERT_TRUE(RemoveAll(dir_).ok()); }

  std::string Kind(absl::string_view value) {
    RowParseError error;
    const ParsedRow* row = parser_->Parse(value, &error);
    return row == nullptr ? error.kind : "OK";
  }
  int64_t Time(absl::string_view value) {
    RowParseError error;
    const ParsedRow* row = parser_->Parse(value, &error);
    EXPECT_NE(row, nullptr) << value << ": " << error.kind << " " << error.message;
    return row == nullptr ? -1 : row->timestamp_ms();
  }

  std::string dir_;
  std::unique_ptr<SegmentEngine> engine_;
  std::unique_ptr<RowParser> parser_;
};

TEST_F(RawRowEngineTest, ParsesTimestampsInEveryAutoForm) {
  EXPECT_EQ(Time(R"({"ts":"2026-11-30T02:00:00.123Z","x":"a"})"), 1796004000123);
  EXPECT_EQ(Time(R"({"ts":1796004000123})"), 1796004000123);  // millis (>= 1e11)
  EXPECT_EQ(Time(R"({"ts":1796004000})"), 1796004000000);     // seconds
  EXPECT_EQ(Time(R"({"ts":"1796004000.5"})"), 1796004000500);
  EXPECT_EQ(Time(R"({"x":{"nested":[1,2]},"ts":"2026-11-30"})"), 1795996800000);
}

TEST_F(RawRowEngineTest, ClassifiesBadRecords) {
  EXPECT_EQ(Kind("not json"), "NOT_JSON");
  EXPECT_EQ(Kind("[1,2]"), "NOT_JSON");
  EXPECT_EQ(Kind(R"({"ts":"2026-11-30T02:00:00Z"} trailing)"), "NOT_JSON");
  EXPECT_EQ(Kind(R"({"ts":"2026-11-30T02:00:00Z","x":)"), "NOT_JSON");
  EXPECT_EQ(Kind(R"({"x":1})"), "NO_TIMESTAMP");
  EXPECT_EQ(Kind(R"({"ts":null})"), "NO_TIMESTAMP");
  EXPECT_EQ(Kind(R"({"ts":"yesterday"})"), "BAD_TIMESTAMP");
  EXPECT_EQ(Kind(R"({"ts":true})"), "BAD_TIMESTAMP");
  EXPECT_EQ(Kind(R"({"ts":1796004000,"bytes":"many"})"), "BAD_NUMBER");
  EXPECT_EQ(Kind(R"({"ts":1796004000,"bytes":"12"})"), "OK");
  EXPECT_EQ(Kind(R"({"ts":1796004000,"bytes":null})"), "OK");
}

TEST_F(RawRowEngineTest, SegmentBytesDoNotDependOnHowRowsWereSpilled) {
  const std::vector<std::string> values = {
      R"({"ts":1796004000003,"k":"c"})", R"({"ts":1796004000001,"k":"a"})",
      R"({"ts":1796004000002,"k":"b"})", R"({"ts":1796004000001,"k":"z"})"};
  v1::Interval interval;
  interval.set_start_ms(1796004000000);
  interval.set_end_ms(1796007600000);
  SegmentBuildInfo info;
  info.segment_id = "wiki_x";
  info.datasource = "wiki";
  info.interval = interval;
  info.provenance.set_topic("t");

  auto build = [&](std::vector<size_t> split, const std::string& name) {
    std::vector<std::string> spills;
    auto index = engine_->NewIndex(interval);
    for (size_t i = 0; i < values.size(); ++i) {
      RowParseError error;
      const ParsedRow* row = parser_->Parse(values[i], &error);
      EXPECT_NE(row, nullptr);
      EXPECT_TRUE(index->Add(*row).ok());
      if (std::find(split.begin(), split.end(), i) != split.end()) {
        const std::string path = dir_ + "/" + name + std::to_string(i) + ".spill";
        auto rows = index->Spill(path);
        EXPECT_TRUE(rows.ok());
        EXPECT_EQ(index->rows(), 0);
        spills.push_back(path);
      }
    }
    auto built = engine_->BuildSegment(spills, info, dir_ + "/" + name + ".seg");
    EXPECT_TRUE(built.ok()) << built.status();
    return built.ok() ? *built : BuiltSegment{};
  };
  const BuiltSegment one = build({3}, "one");
  const BuiltSegment three = build({0, 2, 3}, "three");
  EXPECT_EQ(one.rows, 4);
  EXPECT_EQ(one.checksum, three.checksum);
  EXPECT_EQ(one.size_bytes, three.size_bytes);

  auto contents = ReadRawSegment(dir_ + "/one.seg");
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->rows.size(), 4u);
  EXPECT_EQ(contents->rows[0].second, values[1]);
  EXPECT_EQ(contents->rows[3].second, values[0]);
  EXPECT_EQ(contents->header.datasource(), "wiki");
  EXPECT_EQ(contents->checksum, one.checksum);

  // A flipped byte is caught.
  auto data = ReadFile(dir_ + "/one.seg");
  ASSERT_TRUE(data.ok());
  (*data)[data->size() / 2] ^= 1;
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/bad.seg", *data).ok());
  EXPECT_EQ(ReadRawSegment(dir_ + "/bad.seg").status().code(), absl::StatusCode::kDataLoss);
  auto spill = ReadFile(dir_ + "/three0.spill");
  ASSERT_TRUE(spill.ok());
  spill->back() ^= 1;
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/bad.spill", *spill).ok());
  EXPECT_EQ(engine_->BuildSegment({dir_ + "/bad.spill"}, info, dir_ + "/x.seg").status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace sluice::task
