#include "supervisor/pauseless_margin.h"

#include <gtest/gtest.h>

namespace sluice::supervisor {
namespace {

TEST(PauselessMarginTest, RatesComeFromTheOffsetsReadBetweenTwoObservations) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  const OffsetObservation before{{{0, 100}, {1, 500}}, t0};
  const OffsetObservation now{{{0, 1100}, {1, 500}, {2, 7}}, t0 + absl::Milliseconds(500)};
  const std::map<int32_t, double> rates = ReadRates(before, now);
  EXPECT_DOUBLE_EQ(rates.at(0), 2000);  // 1000 offsets in 0.5 s
  EXPECT_DOUBLE_EQ(rates.at(1), 0);     // nothing read
  EXPECT_DOUBLE_EQ(rates.at(2), 0);     // not observed before
  // No time between them: no rate.
  EXPECT_DOUBLE_EQ(ReadRates(now, now).at(0), 0);
}

TEST(PauselessMarginTest, MarginsAreRateTimesWindowTimesSafetyClamped) {
  PauselessMarginOptions options;
  options.min_margin = 10;
  options.max_margin = 5000;
  options.safety_factor = 2;
  options.min_window = absl::Milliseconds(5);
  const std::map<int32_t, int64_t> margins = PauselessMargins(
      {{0, 100000}, {1, 100}, {2, 1e12}}, absl::Milliseconds(10), options);
  EXPECT_EQ(margins.at(0), 2000);  // 100k/s x 10 ms x 2
  EXPECT_EQ(margins.at(1), 10);    // 2 records: the minimum
  EXPECT_EQ(margins.at(2), 5000);  // the maximum
  // A window below the minimum counts as the minimum.
  EXPECT_EQ(PauselessMargins({{0, 100000}}, absl::ZeroDuration(), options).at(0), 1000);
}

TEST(PauselessMarginTest, ExpectedArrivalsHaveNoMinimum) {
  PauselessMarginOptions options;
  options.min_margin = 10;
  options.max_margin = 5000;
  options.safety_factor = 2;
  options.min_window = absl::Milliseconds(5);
  EXPECT_EQ(ExpectedArrivals(100000, absl::Milliseconds(10), options), 2000);
  // A partition that gets less than a record in the window: nothing is
  // expected, so an end goes no further than the records known.
  EXPECT_EQ(ExpectedArrivals(20, absl::Milliseconds(10), options), 0);
  EXPECT_EQ(ExpectedArrivals(0, absl::Milliseconds(10), options), 0);
  EXPECT_EQ(ExpectedArrivals(1e12, absl::Milliseconds(10), options), 5000);
  EXPECT_EQ(ExpectedArrivals(100000, absl::ZeroDuration(), options), 1000);
}

TEST(PauselessMarginTest, EndOffsetsAddTheMarginToTheMaximum) {
  const OffsetMap end =
      PauselessEndOffsets({{0, 100}, {1, kEndOfPartition}, {2, 5}}, {{0, 20}, {1, 20}});
  EXPECT_EQ(end, (OffsetMap{{0, 120}, {1, kEndOfPartition}, {2, 5}}));
}

}  // namespace
}  // namespace sluice::supervisor
