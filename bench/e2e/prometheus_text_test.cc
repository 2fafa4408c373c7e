#include "bench/e2e/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sluice {
namespace bench {
namespace {

constexpr char kText[] = R"(# HELP x_seconds Latency.
# TYPE x_seconds histogram
x_seconds_bucket{datasource="a",le="0.001"} 0
x_seconds_bucket{datasource="a",le="0.01"} 90
x_seconds_bucket{datasource="a",le="0.1"} 100
x_seconds_bucket{datasource="a",le="+Inf"} 100
x_seconds_sum{datasource="a"} 0.75
x_seconds_count{datasource="a"} 100
x_seconds_bucket{datasource="b",le="0.001"} 10
x_seconds_bucket{datasource="b",le="0.01"} 10
x_seconds_bucket{datasource="b",le="0.1"} 10
x_seconds_bucket{datasource="b",le="+Inf"} 20
x_seconds_sum{datasource="b"} 9.5
x_seconds_count{datasource="b"} 20
rows_total{datasource="a",note="q\"uote\\d"} 7
rows_total{datasource="b"} 5 1700000000000
)";

TEST(PromTextTest, ParsesLabelsEscapesAndTimestamps) {
  auto samples = ParsePromText(kText);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 14u);
  EXPECT_EQ((*samples)[12].labels.at("note"), "q\"uote\\d");
  EXPECT_EQ(SumSamples(*samples, "rows_total"), 12);
  EXPECT_EQ(SumSamples(*samples, "rows_total", {{"datasource", "b"}}), 5);
  EXPECT_EQ(SumSamples(*samples, "missing"), 0);
}

TEST(PromTextTest, RejectsLinesThatAreNotSamples) {
  EXPECT_FALSE(ParsePromText("x{a=\"1\" 3\n").ok());
  EXPECT_FALSE(ParsePromText("x seven\n").ok());
}

TEST(PromTextTest, HistogramQuantilesInterpolateWithinBuckets) {
  auto samples = ParsePromText(kText);
  ASSERT_TRUE(samples.ok());
  auto a = MergedHistogram(*samples, "x_seconds", {{"datasource", "a"}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->count, 100);
  EXPECT_DOUBLE_EQ(a->Mean(), 0.0075);
  // Rank 50 of 90 in (0.001, 0.01].
  EXPECT_NEAR(a->Quantile(0.5), 0.001 + 0.009 * 50 / 90, 1e-12);
  // Rank 99: 9 of 10 in (0.01, 0.1].
  EXPECT_NEAR(a->Quantile(0.99), 0.01 + 0.09 * 9 / 10, 1e-12);
  EXPECT_DOUBLE_EQ(a->FractionAtOrBelow(0.01), 0.9);
}

TEST(PromTextTest, MergesSeriesAndCapsTheInfBucket) {
  auto samples = ParsePromText(kText);
  ASSERT_TRUE(samples.ok());
  auto all = MergedHistogram(*samples, "x_seconds");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->count, 120);
  EXPECT_EQ(all->cumulative, (std::vector<double>{10, 100, 110, 120}));
  // The top 10 observations are above 0.1: the highest finite bound.
  EXPECT_DOUBLE_EQ(all->Quantile(0.99), 0.1);
  auto none = MergedHistogram(*samples, "x_seconds", {{"datasource", "c"}});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(std::isnan(none->Quantile(0.5)));
}

TEST(PromTextTest, TheSameSeriesFromTwoProcessesAddsUp) {
  const std::string one = "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n";
  auto samples = ParsePromText(one + one);
  ASSERT_TRUE(samples.ok()) << samples.status();
  auto h = MergedHistogram(*samples, "h");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->cumulative, (std::vector<double>{2, 4}));
  EXPECT_EQ(h->count, 4);
  EXPECT_DOUBLE_EQ(h->FractionAtOrBelow(1), 0.5);
}

}  // namespace
}  // namespace bench
}  // namespace sluice
