#include "common/segment/schema.h"

#include <gtest/gtest.h>

namespace sluice {
namespace segment {
namespace {

TEST(Schema, NamesRoundTrip) {
  for (const char* name : {"auto", "iso", "millis", "posix", "micros", "nanos"}) {
    auto f = ParseTimestampFormat(name);
    ASSERT_TRUE(f.ok()) << name;
    EXPECT_STREQ(TimestampFormatName(*f), name);
  }
  EXPECT_EQ(*ParseTimestampFormat("ISO"), TimestampFormat::kIso);
  EXPECT_FALSE(ParseTimestampFormat("ruby").ok());
  for (const char* name :
       {"count", "longSum", "doubleSum", "longMin", "longMax", "doubleMin", "doubleMax"}) {
    auto t = ParseMetricType(name);
    ASSERT_TRUE(t.ok()) << name;
    EXPECT_STREQ(MetricTypeName(*t), name);
  }
  EXPECT_FALSE(ParseMetricType("longsum").ok());  // case matters, as in Druid
  EXPECT_TRUE(IsLongMetric(MetricType::kCount));
  EXPECT_FALSE(IsLongMetric(MetricType::kDoubleMin));
}

TEST(Schema, Validation) {
  Schema s;
  s.dimensions = {"a", "b"};
  s.metrics = {{MetricType::kCount, "n", ""}, {MetricType::kLongSum, "x", "a"}};
  EXPECT_TRUE(ValidateSchema(s).ok());  // a metric may read a dimension's field
  const auto expect_refused = [](Schema bad, const char* why) {
    const absl::Status st = ValidateSchema(bad);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << why;
    EXPECT_NE(st.message().find(why), absl::string_view::npos) << st;
  };
  Schema bad = s;
  bad.timestamp_column = "";
  expect_refused(bad, "timestamp column");
  bad = s;
  bad.dimensions = {"a", "a"};
  expect_refused(bad, "listed twice");
  bad = s;
  bad.dimensions = {"__time"};
  expect_refused(bad, "__time");
  bad = s;
  bad.dimensions = {"timestamp"};
  expect_refused(bad, "is the timestamp column");
  bad = s;
  bad.metrics.push_back({MetricType::kLongSum, "a", "f"});
  expect_refused(bad, "has the name of another column");
  bad = s;
  bad.metrics.push_back({MetricType::kLongSum, "m", ""});
  expect_refused(bad, "no input field");
  bad = s;
  bad.metrics.push_back({MetricType::kLongSum, "m", "timestamp"});
  expect_refused(bad, "reads the timestamp column");
  bad = s;
  bad.metrics.push_back({MetricType::kCount, "", ""});
  expect_refused(bad, "metric name is empty");
}

}  // namespace
}  // namespace segment
}  // namespace sluice
