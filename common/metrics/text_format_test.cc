#include "common/metrics/text_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace sluice {
namespace metrics {
namespace {

TEST(TextFormat, MetricNames) {
  for (const char* ok : {"a", "_x", "sluice_task_rows_total", "ns:sub:name", "a1"}) {
    EXPECT_TRUE(IsValidMetricName(ok)) << ok;
  }
  for (const char* bad : {"", "1abc", "has-dash", "sp ace", "é", "a.b"}) {
    EXPECT_FALSE(IsValidMetricName(bad)) << bad;
  }
}

TEST(TextFormat, LabelNames) {
  for (const char* ok : {"datasource", "_x", "le", "a1"}) EXPECT_TRUE(IsValidLabelName(ok)) << ok;
  for (const char* bad : {"", "__name__", "__x", "1a", "a:b", "a-b"}) {
    EXPECT_FALSE(IsValidLabelName(bad)) << bad;
  }
}

TEST(TextFormat, EscapesHelp) {
  EXPECT_EQ(EscapeHelp("plain"), "plain");
  EXPECT_EQ(EscapeHelp("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");  // quotes stay in HELP
}

TEST(TextFormat, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("wiki"), "wiki");
  EXPECT_EQ(EscapeLabelValue("a\\b\nc\"d"), "a\\\\b\\nc\\\"d");
  EXPECT_EQ(EscapeLabelValue("naïve"), "naïve");  // UTF-8 passes through
}

TEST(TextFormat, FormatsDoubles) {
  EXPECT_EQ(FormatDouble(0), "0");
  EXPECT_EQ(FormatDouble(42), "42");
  EXPECT_EQ(FormatDouble(-1.5), "-1.5");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(0.0025), "0.0025");
  EXPECT_EQ(FormatDouble(1e21), "1e+21");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatDouble(std::nan("")), "NaN");
  // Round trip of an awkward value.
  double v = 1.0 / 3.0;
  EXPECT_EQ(std::stod(FormatDouble(v)), v);
}

TEST(TextFormat, FormatsLabels) {
  EXPECT_EQ(FormatLabels({}), "");
  EXPECT_EQ(FormatLabels({{"a", "x"}, {"b", "y\"z"}}), "{a=\"x\",b=\"y\\\"z\"}");
  std::pair<std::string, std::string> le("le", "0.5");
  EXPECT_EQ(FormatLabels({}, &le), "{le=\"0.5\"}");
  EXPECT_EQ(FormatLabels({{"ds", "w"}}, &le), "{ds=\"w\",le=\"0.5\"}");
}

}  // namespace
}  // namespace metrics
}  // namespace sluice
