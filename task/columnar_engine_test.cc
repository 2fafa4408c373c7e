#include "task/columnar_engine.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "common/file_util.h"
#include "common/segment/segment_reader.h"

namespace sluice::task {
namespace {

v1::DataSchema TestSchema() {
  v1::DataSchema schema;
  schema.mutable_timestamp_spec()->set_column("ts");
  schema.mutable_timestamp_spec()->set_format("auto");
  v1::MetricSpec* count = schema.add_metrics_spec();
  count->set_type("count");
  count->set_name("count");
  v1::MetricSpec* bytes = schema.add_metrics_spec();
  bytes->set_type("longSum");
  bytes->set_name("bytes");
  return schema;
}

class ColumnarEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_columnar_engine_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto engine = NewColumnarEngine(TestSchema());
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

  std::string dir_;
  std::unique_ptr<SegmentEngine> engine_;
  std::unique_ptr<RowParser> parser_;
};

TEST_F(ColumnarEngineTest, ParseErrorsUseTheWireKinds) {
  RowParseError error;
  const ParsedRow* row = parser_->Parse(R"({"ts":"2026-11-30T02:00:00.123Z","x":"a"})", &error);
  ASSERT_NE(row, nullptr) << error.message;
  EXPECT_EQ(row->timestamp_ms(), 1796004000123);
  EXPECT_EQ(Kind("not json"), "NOT_JSON");
  EXPECT_EQ(Kind(R"({"x":1})"), "NO_TIMESTAMP");
  EXPECT_EQ(Kind(R"({"ts":"yesterday"})"), "BAD_TIMESTAMP");
  EXPECT_EQ(Kind(R"({"ts":1796004000,"bytes":"many"})"), "BAD_NUMBER");
  EXPECT_EQ(Kind(R"({"ts":1796004000,"bytes":"12"})"), "OK");
}

TEST_F(ColumnarEngineTest, BadSchemasAreInvalidArgumentNamingTheField) {
  v1::DataSchema bad = TestSchema();
  bad.mutable_metrics_spec(1)->set_type("median");
  absl::Status s = NewColumnarEngine(bad).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "dataSchema.metricsSpec[1].type: ")) << s;
  bad = TestSchema();
  bad.mutable_timestamp_spec()->set_format("julian");
  s = NewColumnarEngine(bad).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "dataSchema.timestampSpec.format: ")) << s;
  bad = TestSchema();
  bad.mutable_granularity_spec()->set_query_granularity("FORTNIGHT");
  s = NewColumnarEngine(bad).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "dataSchema.granularitySpec.queryGranularity: ")) << s;
  bad = TestSchema();
  bad.mutable_dimensions_spec()->add_dimensions("bytes");  // also a metric input... and name
  bad.mutable_dimensions_spec()->add_dimensions("bytes");
  EXPECT_EQ(NewColumnarEngine(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ColumnarEngineTest, SegmentBytesDoNotDependOnHowRowsWereSpilled) {
  const std::vector<std::string> values = {
      R"({"ts":1796004000003,"k":"c","bytes":3})", R"({"ts":1796004000001,"k":"a","bytes":1})",
      R"({"ts":1796004000002,"k":"b","bytes":2})", R"({"ts":1796004000001,"k":"a","bytes":5})"};
  v1::Interval interval;
  interval.set_start_ms(1796004000000);
  interval.set_end_ms(1796007600000);
  SegmentBuildInfo info;
  info.segment_id = "wiki_x";
  info.datasource = "wiki";
  info.interval = interval;
  info.version = "2026-11-30T00:00:00.000Z";
  info.sequence_name = "wiki_abc_0";
  info.provenance.set_topic("t");
  v1::PartitionRange* range = info.provenance.add_ranges();
  range->set_partition(0);
  range->set_start_offset(0);
  range->set_end_offset(4);
  range->set_rows(4);

  auto build = [&](std::vector<size_t> split, const std::string& name) {
    std::vector<std::string> spills;
    auto index = engine_->NewIndex(interval);
    for (size_t i = 0; i < values.size(); ++i) {
      RowParseError error;
      const ParsedRow* row = parser_->Parse(values[i], &error);
      EXPECT_NE(row, nullptr) << error.message;
      EXPECT_TRUE(index->Add(*row, 0, static_cast<int64_t>(i)).ok());
      if (std::find(split.begin(), split.end(), i) != split.end()) {
        const std::string spill = name + std::to_string(i) + ".spill";
        const int64_t held = index->rows();
        auto rows = index->Spill(dir_, spill);
        EXPECT_TRUE(rows.ok()) << rows.status();
        EXPECT_EQ(rows.value_or(-1), held);  // the spill's own count
        EXPECT_EQ(index->rows(), 0);
        spills.push_back(dir_ + "/" + spill);
      }
    }
    auto built = engine_->BuildSegment(spills, info, dir_ + "/" + name + ".seg");
    EXPECT_TRUE(built.ok()) << built.status();
    return built.ok() ? *built : BuiltSegment{};
  };
  const BuiltSegment one = build({3}, "one");
  const BuiltSegment three = build({0, 2, 3}, "three");
  EXPECT_EQ(one.rows, 3);  // the two "a" records at the same time roll up
  // The file's records per partition are checked against the task's count.
  range->set_rows(5);
  {
    auto index = engine_->NewIndex(interval);
    for (size_t i = 0; i < values.size(); ++i) {
      RowParseError error;
      const ParsedRow* row = parser_->Parse(values[i], &error);
      ASSERT_NE(row, nullptr) << error.message;
      ASSERT_TRUE(index->Add(*row, 0, static_cast<int64_t>(i)).ok());
    }
    const std::string path = dir_ + "/miscounted.spill";
    ASSERT_TRUE(index->Spill(dir_, "miscounted.spill").ok());
    auto miscounted = engine_->BuildSegment({path}, info, dir_ + "/miscounted.seg");
    EXPECT_EQ(miscounted.status().code(), absl::StatusCode::kInternal) << miscounted.status();
    EXPECT_NE(miscounted.status().message().find("holds 4 records of partition 0 but the task "
                                                 "counted 5"),
              std::string::npos)
        << miscounted.status();
  }
  EXPECT_EQ(one.checksum, three.checksum);
  EXPECT_EQ(one.size_bytes, three.size_bytes);
  EXPECT_EQ(one.checksum.rfind("crc32c:", 0), 0u);

  auto reader = segment::SegmentReader::Open(dir_ + "/one.seg");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->Verify().ok());
  EXPECT_EQ((*reader)->header().metadata.segment_id, "wiki_x");
  auto sums = (*reader)->ReadLongMetric("bytes");
  ASSERT_TRUE(sums.ok());
  EXPECT_EQ(*sums, (std::vector<int64_t>{6, 2, 3}));

  // A spill name that does not end in .spill is refused.
  auto index = engine_->NewIndex(interval);
  RowParseError error;
  ASSERT_TRUE(index->Add(*parser_->Parse(values[0], &error), 0, 0).ok());
  EXPECT_EQ(index->Spill(dir_, "x.bin").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->rows(), 1);
  // Records outside the provenance ranges are refused by the build.
  range->set_end_offset(2);
  EXPECT_FALSE(engine_->BuildSegment({dir_ + "/one3.spill"}, info, dir_ + "/bad.seg").ok());
}

}  // namespace
}  // namespace sluice::task

namespace sluice::task {
namespace {

TEST(ColumnarEngineTransformTest, FilteredRowsComeBackThrownAway) {
  v1::DataSchema schema = TestSchema();
  v1::TransformSpec* transform = schema.mutable_transform_spec();
  v1::Transform* t = transform->add_transforms();
  t->set_type("expression");
  t->set_name("page");
  t->set_expression("lower(page)");
  v1::DimFilter* filter = transform->mutable_filter();
  filter->set_type("selector");
  filter->set_dimension("page");
  filter->set_value("main");
  auto engine = NewColumnarEngine(schema);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::unique_ptr<RowParser> parser = (*engine)->NewParser();
  RowParseError error;
  const ParsedRow* row = parser->Parse(R"({"ts":1796004000,"page":"MAIN"})", &error);
  ASSERT_NE(row, nullptr) << error.message;
  EXPECT_FALSE(row->thrown_away());
  row = parser->Parse(R"({"ts":1796004000,"page":"Talk"})", &error);
  ASSERT_NE(row, nullptr) << error.message;
  EXPECT_TRUE(row->thrown_away());
  // A parser for the next row starts clean.
  row = parser->Parse(R"({"ts":1796004000,"page":"main"})", &error);
  ASSERT_NE(row, nullptr) << error.message;
  EXPECT_FALSE(row->thrown_away());
}

TEST(ColumnarEngineTransformTest, BadTransformSpecIsRefusedWithItsPath) {
  v1::DataSchema schema = TestSchema();
  v1::Transform* t = schema.mutable_transform_spec()->add_transforms();
  t->set_type("expression");
  t->set_name("x");
  t->set_expression("nosuch(a)");
  auto engine = NewColumnarEngine(schema);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine.status().message(),
            "dataSchema.transformSpec.transforms[0].expression: unknown function nosuch "
            "(supported: concat, lower, upper, substring, timestamp_format) at column 1");
}

}  // namespace
}  // namespace sluice::task
