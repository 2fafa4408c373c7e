#include "common/segment/timestamp.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace sluice {
namespace segment {
namespace {

TEST(ScaledDecimalFloor, ExactForEveryShape) {
  struct Case {
    const char* text;
    int scale;
    int64_t expected;
  } cases[] = {
      {"0", 0, 0},
      {"-0", 3, 0},
      {"12", 0, 12},
      {"1.5", 0, 1},
      {"-1.5", 0, -2},
      {"-1.0", 0, -1},
      {"1700000000.123", 3, 1700000000123},
      {"1700000000.1239", 3, 1700000000123},
      {"-1.0001", 3, -1001},
      {"1e3", 0, 1000},
      {"1.5E+2", 0, 150},
      {"15e-1", 0, 1},
      {"1796004944123456", -3, 1796004944123},
      {"-1", -3, -1},
      {"1796004944123456789", -6, 1796004944123},
      {"9223372036854775807", 0, INT64_MAX},
      {"-9223372036854775808", 0, INT64_MIN},
      {"0.000000000000000000000000000001", 0, 0},
      {"-0.000000000000000000000000000001", 0, -1},
      {"1e-99999999", 3, 0},
  };
  for (const Case& c : cases) {
    int64_t out = 12345;
    ASSERT_EQ(ScaledDecimalFloor(c.text, c.scale, false, &out), DecimalResult::kOk) << c.text;
    EXPECT_EQ(out, c.expected) << c.text;
  }
  int64_t out;
  EXPECT_EQ(ScaledDecimalFloor("+5", 0, true, &out), DecimalResult::kOk);
  EXPECT_EQ(out, 5);
  for (const char* bad : {"", "-", "+5", ".", "e5", "1e", "1.2.3", "12a", " 1", "0x10"}) {
    EXPECT_EQ(ScaledDecimalFloor(bad, 0, false, &out), DecimalResult::kNotANumber) << bad;
  }
  for (const char* big : {"9223372036854775808", "-9223372036854775809", "1e19", "1e99999999",
                          "99999999999999999999999"}) {
    EXPECT_EQ(ScaledDecimalFloor(big, 0, false, &out), DecimalResult::kOutOfRange) << big;
  }
}

TEST(Timestamp, EveryFormat) {
  struct Case {
    TimestampFormat format;
    bool is_string;
    const char* text;
    int64_t ms;
  } cases[] = {
      {TimestampFormat::kIso, true, "2026-11-30T02:15:44.123Z", 1796004944123},
      {TimestampFormat::kIso, true, "2026-11-30T03:15:44.123456+01:00", 1796004944123},
      {TimestampFormat::kIso, true, "2026-11-30", 1795996800000},
      {TimestampFormat::kAuto, true, "2026-11-30T02:15:44.123Z", 1796004944123},
      {TimestampFormat::kAuto, false, "1796004944123", 1796004944123},
      {TimestampFormat::kAuto, false, "1796004944", 1796004944000},
      {TimestampFormat::kAuto, false, "1796004944.5", 1796004944500},
      {TimestampFormat::kAuto, true, "1796004944123", 1796004944123},
      {TimestampFormat::kAuto, true, "1796004944", 1796004944000},
      {TimestampFormat::kMillis, false, "1796004944123", 1796004944123},
      {TimestampFormat::kMillis, true, "1796004944123", 1796004944123},
      {TimestampFormat::kMillis, false, "-1", -1},
      {TimestampFormat::kPosix, false, "1796004944", 1796004944000},
      {TimestampFormat::kPosix, false, "1796004944.123", 1796004944123},
      {TimestampFormat::kPosix, true, "1796004944.999", 1796004944999},
      {TimestampFormat::kPosix, false, "0", 0},
      {TimestampFormat::kMicros, false, "1796004944123456", 1796004944123},
      {TimestampFormat::kNanos, false, "1796004944123456789", 1796004944123},
      {TimestampFormat::kNanos, true, "1796004944123456789", 1796004944123},
  };
  for (const Case& c : cases) {
    absl::StatusOr<int64_t> ms = c.is_string ? TimestampFromString(c.text, c.format)
                                             : TimestampFromNumber(c.text, c.format);
    ASSERT_TRUE(ms.ok()) << TimestampFormatName(c.format) << " " << c.text << ": " << ms.status();
    EXPECT_EQ(*ms, c.ms) << TimestampFormatName(c.format) << " " << c.text;
  }
}

TEST(Timestamp, RejectsWithAReason) {
  struct Case {
    TimestampFormat format;
    bool is_string;
    const char* text;
    const char* reason;
  } cases[] = {
      {TimestampFormat::kIso, false, "1796004944123", "expected an ISO-8601 string"},
      {TimestampFormat::kIso, true, "2026-13-01", "month"},
      {TimestampFormat::kIso, true, "1796004944123", "ISO-8601"},
      {TimestampFormat::kAuto, true, "yesterday", "ISO-8601"},
      {TimestampFormat::kAuto, true, "", "empty"},
      {TimestampFormat::kMillis, true, "12:00", "expected a number (millis)"},
      {TimestampFormat::kPosix, true, "abc", "expected a number (posix)"},
      {TimestampFormat::kMillis, false, "1e300", "outside the years"},
      {TimestampFormat::kPosix, false, "253402300800", "outside the years"},
      {TimestampFormat::kAuto, false, "-9999999999999999", "outside the years"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<int64_t> ms = c.is_string ? TimestampFromString(c.text, c.format)
                                             : TimestampFromNumber(c.text, c.format);
    ASSERT_FALSE(ms.ok()) << c.text;
    EXPECT_EQ(ms.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(ms.status().message().find(c.reason), absl::string_view::npos)
        << c.text << ": " << ms.status();
  }
}

// A Kafka timestamp is read as a number: value and error must be what its
// decimal text gives, in every format, across the edges of each.
TEST(Timestamp, FromIntegerIsFromNumberOfItsText) {
  const int64_t values[] = {0, 1, -1, 999, -999, 1000, -1000, 1001, -1001, 1796004944123,
                            -1796004944123, 99999999999, -99999999999, 100000000000,
                            -100000000000, kMaxTimestampMs, kMaxTimestampMs + 1, kMinTimestampMs,
                            kMinTimestampMs - 1, 253402300799, 253402300800, -377705116800,
                            -377705116801, 253402300799999999, 253402300800000000,
                            9223372036854775, 9223372036854776, -9223372036854776,
                            INT64_MAX, INT64_MIN, INT64_MIN + 1};
  for (TimestampFormat format : {TimestampFormat::kAuto, TimestampFormat::kIso,
                                 TimestampFormat::kMillis, TimestampFormat::kPosix,
                                 TimestampFormat::kMicros, TimestampFormat::kNanos}) {
    for (int64_t n : values) {
      const std::string text = std::to_string(n);
      absl::StatusOr<int64_t> want = TimestampFromNumber(text, format);
      absl::StatusOr<int64_t> got = TimestampFromInteger(n, format);
      ASSERT_EQ(got.ok(), want.ok()) << text << " " << static_cast<int>(format);
      if (want.ok()) {
        EXPECT_EQ(*got, *want) << text << " " << static_cast<int>(format);
      } else {
        EXPECT_EQ(got.status(), want.status()) << text << " " << static_cast<int>(format);
      }
    }
  }
}

}  // namespace
}  // namespace segment
}  // namespace sluice
