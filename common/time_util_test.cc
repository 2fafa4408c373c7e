#include "common/time_util.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(ParseIsoInstant, Forms) {
  struct Case {
    const char* text;
    int64_t ms;
  } cases[] = {
      {"1970-01-01", 0},
      {"1970-01-01T00:00:00Z", 0},
      {"1970-01-01T00:00:01.5Z", 1500},
      {"1970-01-01T00:00:01.123456789Z", 1123},
      {"2026-11-30T02:15:44.123Z", 1796004944123},
      {"2026-11-30T02:15:44.123", 1796004944123},
      {"2026-11-30 02:15:44.123Z", 1796004944123},
      {"2026-11-30T03:15:44.123+01:00", 1796004944123},
      {"2026-11-30T03:15:44.123+0100", 1796004944123},
      {"2026-11-29T21:15:44.123-05", 1796004944123},
      {"2026-11-30T02:15Z", 1796004900000},
      {"2024-02-29T00:00:00Z", 1709164800000},
      {"1969-12-31T23:59:59.999Z", -1},
  };
  for (const Case& c : cases) {
    auto ms = ParseIsoInstantMillis(c.text);
    ASSERT_TRUE(ms.ok()) << c.text << ": " << ms.status();
    EXPECT_EQ(*ms, c.ms) << c.text;
  }
}

TEST(ParseIsoInstant, Rejects) {
  for (const char* bad : {"", "2026", "2026-13-01", "2026-02-30", "2023-02-29",
                          "2026-11-30T25:00", "2026-11-30T02:61", "2026-11-30T02:15:44.",
                          "2026-11-30T02:15:44Zjunk", "not a date", "2026-11-30T02:15:44+25:00"}) {
    auto ms = ParseIsoInstantMillis(bad);
    EXPECT_FALSE(ms.ok()) << bad;
    EXPECT_EQ(ms.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

// The fast path checks the canonical form a word at a time: any one byte
// changed must give what the general parser gives for the same text (the
// same instant with "+00:00" for "Z" goes through the general parser only).
TEST(ParseIsoInstant, CanonicalFastPathAgreesWithTheGeneralParserByteByByte) {
  const std::string canonical = "2026-11-30T02:15:44.123Z";
  const std::string replacements = std::string("0123456789-:.TZtz +/;") + '\x00' + '\x7f' +
                                   '\xfa' + '\xb0';
  int accepted = 0;
  for (size_t at = 0; at < canonical.size(); ++at) {
    for (char c : replacements) {
      std::string text = canonical;
      text[at] = c;
      absl::StatusOr<int64_t> fast = ParseIsoInstantMillis(text);
      absl::StatusOr<int64_t> general =
          text.back() == 'Z' ? ParseIsoInstantMillis(text.substr(0, 23) + "+00:00")
                             : ParseIsoInstantMillis(text);
      ASSERT_EQ(fast.ok(), general.ok()) << text;
      if (fast.ok()) {
        EXPECT_EQ(*fast, *general) << text;
        ++accepted;
      }
    }
  }
  EXPECT_GT(accepted, 100);
}

// The fast path reads only the seconds of an instant in the minute it read
// last: each byte of the seconds changed right after the unchanged instant
// gives what the general parser gives; so do instants in order across
// minutes, hours, days and a year end.
TEST(ParseIsoInstant, CanonicalFastPathAgreesInTheMinuteItReadLast) {
  const std::string canonical = "2026-11-30T02:15:44.123Z";
  const std::string replacements = std::string("0123456789-:.TZtz +/;") + '\x00' + '\x7f' +
                                   '\xfa' + '\xb0';
  int accepted = 0;
  for (size_t at = 16; at < canonical.size(); ++at) {
    for (char c : replacements) {
      ASSERT_EQ(*ParseIsoInstantMillis(canonical), 1796004944123);
      std::string text = canonical;
      text[at] = c;
      int64_t fast = 0;
      const bool fast_ok = ParseCanonicalIsoInstant(text, &fast);
      absl::StatusOr<int64_t> general =
          ParseIsoInstantMillis(text.substr(0, 23) + "+00:00");
      if (fast_ok) {
        ASSERT_TRUE(general.ok()) << text;
        EXPECT_EQ(fast, *general) << text;
        ++accepted;
      } else {
        // Declined: invalid, or a form (a leap second) the general parser takes.
        EXPECT_TRUE(!general.ok() || text.substr(17, 2) == "60" || text.back() != 'Z') << text;
      }
    }
  }
  EXPECT_GT(accepted, 40);
  for (int64_t ms = 1798761000000 - 86400000; ms < 1798761000000 + 86400000; ms += 7919) {
    int64_t fast = 0;
    ASSERT_TRUE(ParseCanonicalIsoInstant(FormatIsoInstant(ms), &fast)) << FormatIsoInstant(ms);
    ASSERT_EQ(fast, ms) << FormatIsoInstant(ms);
  }
}

TEST(FormatIsoInstant, RoundTrips) {
  for (int64_t ms : {int64_t{0}, int64_t{-1}, int64_t{1796004944123}, int64_t{951782400000},
                     int64_t{-62135596800000}}) {
    auto back = ParseIsoInstantMillis(FormatIsoInstant(ms));
    ASSERT_TRUE(back.ok()) << FormatIsoInstant(ms);
    EXPECT_EQ(*back, ms);
  }
  EXPECT_EQ(FormatIsoInstant(1796004944123), "2026-11-30T02:15:44.123Z");
}

// The canonical form YYYY-MM-DDTHH:MM:SS.sssZ has a fast path; what it
// declines (hour 24, a leap second, impossible dates) goes to the general
// parser, which must give the same answers as before.
TEST(ParseIsoInstant, CanonicalFormAndItsEdges) {
  // Every millisecond step across a leap day and a year end, in canonical form.
  for (int64_t ms = 1709164800000 - 86400000; ms < 1709164800000 + 2 * 86400000; ms += 997003) {
    auto back = ParseIsoInstantMillis(FormatIsoInstant(ms));
    ASSERT_TRUE(back.ok()) << FormatIsoInstant(ms);
    EXPECT_EQ(*back, ms) << FormatIsoInstant(ms);
  }
  EXPECT_EQ(*ParseIsoInstantMillis("2024-02-29T23:59:59.999Z"), 1709251199999);
  EXPECT_EQ(*ParseIsoInstantMillis("2026-11-30T24:00:00.000Z"), 1796083200000);
  EXPECT_EQ(*ParseIsoInstantMillis("2026-11-30T23:59:60.000Z"), 1796083200000);
  for (const char* bad : {"2023-02-29T00:00:00.000Z", "2026-00-10T00:00:00.000Z",
                          "2026-11-31T00:00:00.000Z", "2026-11-30T24:00:00.001Z",
                          "2026-11-30T23:60:00.000Z", "2026-11-30T23:59:61.000Z",
                          "2026-1a-30T23:59:59.000Z", "2026-11-30T23:59:59.00aZ"}) {
    EXPECT_EQ(ParseIsoInstantMillis(bad).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ParseIsoDuration, Forms) {
  EXPECT_EQ(*ParseIsoDuration("PT1H"), absl::Hours(1));
  EXPECT_EQ(*ParseIsoDuration("PT10M"), absl::Minutes(10));
  EXPECT_EQ(*ParseIsoDuration("PT0.5S"), absl::Milliseconds(500));
  EXPECT_EQ(*ParseIsoDuration("P1D"), absl::Hours(24));
  EXPECT_EQ(*ParseIsoDuration("P2W"), absl::Hours(24 * 14));
  EXPECT_EQ(*ParseIsoDuration("P1DT1H30M"), absl::Hours(25) + absl::Minutes(30));
  EXPECT_EQ(*ParseIsoDuration("PT0S"), absl::ZeroDuration());
}

TEST(ParseIsoDuration, Rejects) {
  for (const char* bad : {"", "1H", "P", "PT", "P1M", "P1Y", "PT1S1H", "PT1H1H", "PT-1S",
                          "PT1.5H30M", "PTxS", "PT5"}) {
    EXPECT_FALSE(ParseIsoDuration(bad).ok()) << bad;
  }
}

TEST(FormatIsoDuration, Shortest) {
  EXPECT_EQ(FormatIsoDuration(absl::Hours(1)), "PT1H");
  EXPECT_EQ(FormatIsoDuration(absl::Minutes(90)), "PT1H30M");
  EXPECT_EQ(FormatIsoDuration(absl::Milliseconds(250)), "PT0.25S");
  EXPECT_EQ(FormatIsoDuration(absl::Hours(48)), "P2D");
  EXPECT_EQ(FormatIsoDuration(absl::ZeroDuration()), "PT0S");
  for (const char* text : {"PT1H", "PT10M", "PT0.5S", "P1D", "P1DT2H3M4.005S"}) {
    EXPECT_EQ(*ParseIsoDuration(FormatIsoDuration(*ParseIsoDuration(text))),
              *ParseIsoDuration(text));
  }
}

}  // namespace
}  // namespace sluice
