#include "common/granularity.h"

#include <gtest/gtest.h>

#include "common/time_util.h"

namespace sluice {
namespace {

int64_t T(const char* iso) { return *ParseIsoInstantMillis(iso); }

Granularity G(const char* name) { return *Granularity::Parse(name); }

TEST(Granularity, TruncateAndNext) {
  const int64_t t = T("2026-11-30T02:47:44.123Z");  // a Monday
  EXPECT_EQ(G("NONE").Truncate(t), t);
  EXPECT_EQ(G("SECOND").Truncate(t), T("2026-11-30T02:47:44Z"));
  EXPECT_EQ(G("MINUTE").Truncate(t), T("2026-11-30T02:47:00Z"));
  EXPECT_EQ(G("five_minute").Truncate(t), T("2026-11-30T02:45:00Z"));
  EXPECT_EQ(G("FIFTEEN_MINUTE").Truncate(t), T("2026-11-30T02:45:00Z"));
  EXPECT_EQ(G("HOUR").Truncate(t), T("2026-11-30T02:00:00Z"));
  EXPECT_EQ(G("HOUR").Next(T("2026-11-30T02:00:00Z")), T("2026-11-30T03:00:00Z"));
  EXPECT_EQ(G("SIX_HOUR").Truncate(t), T("2026-11-30T00:00:00Z"));
  EXPECT_EQ(G("DAY").Truncate(t), T("2026-11-30"));
  EXPECT_EQ(G("WEEK").Truncate(T("2026-12-03T10:00Z")), T("2026-11-30"));
  EXPECT_EQ(G("WEEK").Next(T("2026-11-30")), T("2026-12-07"));
  EXPECT_EQ(G("MONTH").Truncate(t), T("2026-11-01"));
  EXPECT_EQ(G("MONTH").Next(T("2026-12-01")), T("2027-01-01"));
  EXPECT_EQ(G("QUARTER").Truncate(t), T("2026-10-01"));
  EXPECT_EQ(G("YEAR").Truncate(t), T("2026-01-01"));
  EXPECT_EQ(G("YEAR").Next(T("2026-01-01")), T("2027-01-01"));
}

TEST(Granularity, BeforeEpoch) {
  EXPECT_EQ(G("HOUR").Truncate(-1), -3600000);
  EXPECT_EQ(G("DAY").Truncate(T("1969-12-31T12:00Z")), T("1969-12-31"));
  EXPECT_EQ(G("MONTH").Truncate(T("1969-12-31T12:00Z")), T("1969-12-01"));
  EXPECT_EQ(G("WEEK").Truncate(T("1969-12-31T12:00Z")), T("1969-12-29"));
}

TEST(Granularity, ParseRejectsUnknown) {
  auto g = Granularity::Parse("FORTNIGHT");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("FORTNIGHT"), std::string::npos);
}

TEST(Granularity, Aligned) {
  EXPECT_TRUE(G("HOUR").IsAligned(T("2026-11-30T02:00Z")));
  EXPECT_FALSE(G("HOUR").IsAligned(T("2026-11-30T02:00:01Z")));
}

}  // namespace
}  // namespace sluice
