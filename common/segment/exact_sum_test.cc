#include "common/segment/exact_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace sluice {
namespace segment {
namespace {

uint64_t Bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

double SumOf(const std::vector<double>& values) {
  ExactSum s;
  for (double v : values) s.Add(v);
  return s.Round();
}

TEST(ExactSum, EmptyAndZeros) {
  EXPECT_EQ(Bits(ExactSum().Round()), Bits(0.0));
  EXPECT_EQ(Bits(SumOf({-0.0})), Bits(-0.0));
  EXPECT_EQ(Bits(SumOf({-0.0, -0.0})), Bits(-0.0));
  EXPECT_EQ(Bits(SumOf({-0.0, 0.0})), Bits(0.0));
  EXPECT_EQ(Bits(SumOf({1.5, -1.5})), Bits(0.0));
}

TEST(ExactSum, CancellationThatNaiveSummationLoses) {
  EXPECT_EQ(SumOf({1e16, 1.0, -1e16}), 1.0);
  EXPECT_EQ(SumOf({1e300, 1e-300, -1e300}), 1e-300);
  EXPECT_EQ(SumOf({DBL_MAX, DBL_MAX, -DBL_MAX}), DBL_MAX);
}

TEST(ExactSum, RoundsOnceToNearestEven) {
  const double two53 = 9007199254740992.0;  // 2^53
  EXPECT_EQ(SumOf({two53, 1.0}), two53);              // tie -> even
  EXPECT_EQ(SumOf({two53, 3.0}), two53 + 4);          // tie -> even (up)
  EXPECT_EQ(SumOf({two53, 1.0, 1e-10}), two53 + 2);   // above the tie
  EXPECT_EQ(SumOf({-two53, -1.0, -1e-10}), -two53 - 2);
  EXPECT_EQ(SumOf({0.1, 0.2}), 0.30000000000000004);  // the exact sum rounds there too
}

TEST(ExactSum, SubnormalsAreExact) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  std::vector<double> v(1000, tiny);
  EXPECT_EQ(SumOf(v), 1000 * tiny);
  EXPECT_EQ(SumOf({DBL_MIN, -tiny}), std::nextafter(DBL_MIN, 0.0));
}

TEST(ExactSum, OverflowGivesInfinity) {
  EXPECT_EQ(SumOf({DBL_MAX, DBL_MAX}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(SumOf({-DBL_MAX, -DBL_MAX}), -std::numeric_limits<double>::infinity());
  // Just below the rounding boundary to infinity stays finite.
  EXPECT_EQ(SumOf({DBL_MAX, std::ldexp(1.0, 969)}), DBL_MAX);
  EXPECT_TRUE(std::isinf(SumOf({DBL_MAX, std::ldexp(1.0, 970)})));
}

TEST(ExactSum, NonFinite) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(SumOf({1.0, inf}), inf);
  EXPECT_EQ(SumOf({1.0, -inf}), -inf);
  EXPECT_TRUE(std::isnan(SumOf({inf, -inf})));
  EXPECT_TRUE(std::isnan(SumOf({1.0, nan, inf})));
  EXPECT_TRUE(std::isnan(SumOf({-nan})));
}

// Doubles with exponents in a narrow band sum exactly in __float128 (113-bit
// significand), which then rounds to nearest-even like ExactSum must.
TEST(ExactSum, MatchesQuadPrecisionReferenceInAnyOrder) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::uniform_int_distribution<int> exp_dist(-20, 20);
    std::uniform_int_distribution<uint64_t> mant_dist(0, (uint64_t{1} << 53) - 1);
    std::vector<double> values;
    __float128 reference = 0;
    const int n = 1 + trial * 5;
    for (int i = 0; i < n; ++i) {
      double v = std::ldexp(static_cast<double>(mant_dist(rng)), exp_dist(rng) - 53);
      if (rng() & 1) v = -v;
      values.push_back(v);
      reference += static_cast<__float128>(v);
    }
    const double expected = static_cast<double>(reference);
    EXPECT_EQ(Bits(SumOf(values)), Bits(expected == 0 ? 0.0 : expected)) << trial;
    std::shuffle(values.begin(), values.end(), rng);
    EXPECT_EQ(Bits(SumOf(values)), Bits(expected == 0 ? 0.0 : expected)) << trial;
  }
}

TEST(ExactSum, MergingPartialSumsEqualsOneSum) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1e6, 1e6);
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i) values.push_back(dist(rng) * std::pow(10.0, (i % 13) - 6));
  ExactSum whole;
  for (double v : values) whole.Add(v);
  for (int split : {1, 7, 100, 999}) {
    ExactSum a, b;
    for (int i = 0; i < 1000; ++i) (i % split == 0 ? a : b).Add(values[i]);
    ExactSum merged = b;
    merged.Add(a);
    EXPECT_EQ(Bits(merged.Round()), Bits(whole.Round())) << split;
    EXPECT_TRUE(merged == whole) << split;
  }
}

TEST(ExactSum, ManyMergesNormalizeWithoutOverflow) {
  // Doubling 40 times pushes the pending-addition count past its limit.
  ExactSum s(1.25);
  for (int i = 0; i < 40; ++i) {
    ExactSum copy = s;
    s.Add(copy);
  }
  EXPECT_EQ(s.Round(), std::ldexp(1.25, 40));
  ExactSum neg(-3.0);
  for (int i = 0; i < 70; ++i) {
    ExactSum copy = neg;
    neg.Add(copy);
  }
  EXPECT_EQ(neg.Round(), std::ldexp(-3.0, 70));
}

TEST(ExactSum, EncodingRoundTripsAndIsCanonical) {
  const std::vector<std::vector<double>> cases = {
      {}, {-0.0}, {1.0}, {-1.0}, {1e300, -1e-300, 3.5}, {DBL_MAX, DBL_MAX},
      {std::numeric_limits<double>::infinity(), 2.0},
      {std::numeric_limits<double>::denorm_min()}};
  for (const auto& values : cases) {
    ExactSum s;
    for (double v : values) s.Add(v);
    std::string bytes;
    s.AppendTo(&bytes);
    ByteReader in(bytes);
    ExactSum back;
    ASSERT_TRUE(ExactSum::ReadFrom(&in, &back));
    EXPECT_TRUE(in.empty());
    EXPECT_EQ(Bits(back.Round()), Bits(s.Round()));
    std::string again;
    back.AppendTo(&again);
    EXPECT_EQ(again, bytes);
    // Adding to a decoded sum works like adding to the original.
    back.Add(0.5);
    s.Add(0.5);
    EXPECT_EQ(Bits(back.Round()), Bits(s.Round()));
  }
  ExactSum a, b;
  a.Add(1.0);
  a.Add(2.0);
  b.Add(3.0);
  std::string ea, eb;
  a.AppendTo(&ea);
  b.AppendTo(&eb);
  EXPECT_EQ(ea, eb);
}

TEST(ExactSum, DecodingRejectsDamage) {
  ExactSum s;
  s.Add(123.456);
  s.Add(-1e-5);
  std::string bytes;
  s.AppendTo(&bytes);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    ByteReader in(bytes.data(), cut);
    ExactSum out;
    EXPECT_FALSE(ExactSum::ReadFrom(&in, &out)) << cut;
  }
  // Every single-byte change either fails or decodes to something (never crashes).
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes;
      damaged[i] ^= static_cast<char>(1 << bit);
      ByteReader in(damaged);
      ExactSum out;
      if (ExactSum::ReadFrom(&in, &out)) (void)out.Round();
    }
  }
  const std::string huge_base = std::string("\x00\x01\xff\x7f\x01", 5);
  ByteReader in(huge_base);
  ExactSum out;
  EXPECT_FALSE(ExactSum::ReadFrom(&in, &out));
}

TEST(TotalOrderKey, OrdersLikeIeeeTotalOrder) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> ordered = {-nan, -inf, -DBL_MAX, -1.0, -DBL_MIN,
                                       -0.0, 0.0,  DBL_MIN,  1.0,  DBL_MAX,
                                       inf,  nan};
  for (size_t i = 0; i + 1 < ordered.size(); ++i) {
    EXPECT_LT(TotalOrderKey(ordered[i]), TotalOrderKey(ordered[i + 1])) << i;
  }
}

}  // namespace
}  // namespace segment
}  // namespace sluice
