#include "common/segment/schema_proto.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace sluice {
namespace segment {
namespace {

TEST(SchemaFromProto, FillsTheDefaults) {
  sluice::v1::DataSchema proto;
  auto* m = proto.add_metrics_spec();
  m->set_type("count");
  m->set_name("count");
  m = proto.add_metrics_spec();
  m->set_type("longSum");
  m->set_name("added");
  auto schema = SchemaFromProto(proto);
  ASSERT_TRUE(schema.ok()) << schema.status();
  EXPECT_EQ(schema->timestamp_column, "timestamp");
  EXPECT_EQ(schema->timestamp_format, TimestampFormat::kAuto);
  EXPECT_TRUE(schema->discover_dimensions());
  EXPECT_EQ(schema->query_granularity, Granularity(Granularity::Unit::kNone));
  EXPECT_TRUE(schema->rollup);
  ASSERT_EQ(schema->metrics.size(), 2u);
  EXPECT_EQ(schema->metrics[0].field, "");
  EXPECT_EQ(schema->metrics[1].type, MetricType::kLongSum);
  EXPECT_EQ(schema->metrics[1].field, "added");  // field_name defaults to the name
}

TEST(SchemaFromProto, TakesEveryField) {
  sluice::v1::DataSchema proto;
  proto.mutable_timestamp_spec()->set_column("ts");
  proto.mutable_timestamp_spec()->set_format("MILLIS");
  proto.mutable_dimensions_spec()->add_dimensions("channel");
  proto.mutable_dimensions_spec()->add_dimensions("page");
  proto.mutable_dimensions_spec()->add_dimension_exclusions("secret");
  auto* m = proto.add_metrics_spec();
  m->set_type("doubleMax");
  m->set_name("max_delta");
  m->set_field_name("delta");
  proto.mutable_granularity_spec()->set_query_granularity("minute");
  proto.mutable_granularity_spec()->set_rollup(false);
  auto schema = SchemaFromProto(proto);
  ASSERT_TRUE(schema.ok()) << schema.status();
  EXPECT_EQ(schema->timestamp_column, "ts");
  EXPECT_EQ(schema->timestamp_format, TimestampFormat::kMillis);
  EXPECT_EQ(schema->dimensions, (std::vector<std::string>{"channel", "page"}));
  EXPECT_EQ(schema->dimension_exclusions, (std::vector<std::string>{"secret"}));
  EXPECT_EQ(schema->metrics[0].type, MetricType::kDoubleMax);
  EXPECT_EQ(schema->metrics[0].field, "delta");
  EXPECT_EQ(schema->query_granularity, Granularity(Granularity::Unit::kMinute));
  EXPECT_FALSE(schema->rollup);
}

TEST(SchemaFromProto, NamesTheBadField) {
  sluice::v1::DataSchema proto;
  proto.mutable_timestamp_spec()->set_format("seconds");
  EXPECT_NE(SchemaFromProto(proto).status().message().find("timestampSpec.format"),
            absl::string_view::npos);
  proto.mutable_timestamp_spec()->set_format("posix");
  auto* m = proto.add_metrics_spec();
  m->set_type("longAvg");
  m->set_name("x");
  absl::Status s = SchemaFromProto(proto).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("metricsSpec[0].type"), absl::string_view::npos) << s;
  m->set_type("longSum");
  proto.mutable_granularity_spec()->set_query_granularity("FORTNIGHT");
  EXPECT_NE(SchemaFromProto(proto).status().message().find("queryGranularity"),
            absl::string_view::npos);
  proto.mutable_granularity_spec()->set_query_granularity("HOUR");
  proto.mutable_dimensions_spec()->add_dimensions("x");  // same name as the metric
  s = SchemaFromProto(proto).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "dataSchema: ")) << s;
}

}  // namespace
}  // namespace segment
}  // namespace sluice
