// Time helpers shared by the spec, the row parser and the supervisor:
// ISO-8601 instants (fast, exact, no time-zone database needed) and ISO-8601
// durations ("PT1H", "PT0.5S", "P1D").
#ifndef SLUICE_COMMON_TIME_UTIL_H_
#define SLUICE_COMMON_TIME_UTIL_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sluice {

// Days since 1970-01-01 of a proleptic Gregorian date (month 1-12).
int64_t DaysFromCivil(int64_t year, int month, int day);

struct CivilDate {
  int64_t year;
  int month;  // 1-12
  int day;    // 1-31
};
CivilDate CivilFromDays(int64_t days);

// Floor division that rounds towards negative infinity.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Parses an ISO-8601 instant into milliseconds since the epoch (UTC):
//   2026-11-30, 2026-11-30T02:15, 2026-11-30T02:15:44, 2026-11-30T02:15:44.123,
//   with optional fraction (1-9 digits, truncated to millis), 'T' or ' ' as
//   separator, and zone "Z", "+05:30", "+0530", "-07" (no zone = UTC).
// INVALID_ARGUMENT with the reason otherwise. Runs in ~20 ns.
absl::StatusOr<int64_t> ParseIsoInstantMillis(absl::string_view text);

// The canonical form only, YYYY-MM-DDTHH:MM:SS.sssZ (what FormatIsoInstant
// writes and most producers send), without a Status: true with *out set for
// a valid instant in that form (the value ParseIsoInstantMillis gives), false
// for anything else, including what ParseIsoInstantMillis accepts in another
// form or handles specially (hour 24, a leap second); callers then run
// ParseIsoInstantMillis.
bool ParseCanonicalIsoInstant(absl::string_view text, int64_t* out);

// "2026-11-30T02:15:44.123Z".
std::string FormatIsoInstant(int64_t epoch_ms);

// Parses an ISO-8601 duration: P[nW][nD][T[nH][nM][n[.f]S]], e.g. "PT1H",
// "PT10M", "PT0.5S", "P1D", "P2W". Years and months are refused (not a fixed
// length). INVALID_ARGUMENT with the reason otherwise.
absl::StatusOr<absl::Duration> ParseIsoDuration(absl::string_view text);

// The shortest ISO-8601 form: "PT1H", "PT1H30M", "PT0.25S", "P1D", "PT0S".
std::string FormatIsoDuration(absl::Duration d);

// Milliseconds since the epoch of the wall clock.
inline int64_t NowMillis() { return absl::ToUnixMillis(absl::Now()); }

}  // namespace sluice

#endif  // SLUICE_COMMON_TIME_UTIL_H_
