#include "common/granularity.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/time_util.h"

namespace sluice {
namespace {

constexpr int64_t kSecondMs = 1000;
constexpr int64_t kMinuteMs = 60 * kSecondMs;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;
// 1970-01-05 was the first Monday after the epoch.
constexpr int64_t kFirstMondayMs = 4 * kDayMs;

struct NamedUnit {
  const char* name;
  Granularity::Unit unit;
  int64_t fixed_ms;  // 0 for calendar units
};

constexpr NamedUnit kUnits[] = {
    {"NONE", Granularity::Unit::kNone, 1},
    {"SECOND", Granularity::Unit::kSecond, kSecondMs},
    {"MINUTE", Granularity::Unit::kMinute, kMinuteMs},
    {"FIVE_MINUTE", Granularity::Unit::kFiveMinute, 5 * kMinuteMs},
    {"TEN_MINUTE", Granularity::Unit::kTenMinute, 10 * kMinuteMs},
    {"FIFTEEN_MINUTE", Granularity::Unit::kFifteenMinute, 15 * kMinuteMs},
    {"THIRTY_MINUTE", Granularity::Unit::kThirtyMinute, 30 * kMinuteMs},
    {"HOUR", Granularity::Unit::kHour, kHourMs},
    {"SIX_HOUR", Granularity::Unit::kSixHour, 6 * kHourMs},
    {"DAY", Granularity::Unit::kDay, kDayMs},
    {"WEEK", Granularity::Unit::kWeek, 7 * kDayMs},
    {"MONTH", Granularity::Unit::kMonth, 0},
    {"QUARTER", Granularity::Unit::kQuarter, 0},
    {"YEAR", Granularity::Unit::kYear, 0},
};

// kUnits is in Unit order: a unit's entry is at its number.
constexpr bool UnitsInOrder() {
  for (size_t i = 0; i < sizeof(kUnits) / sizeof(kUnits[0]); ++i) {
    if (static_cast<size_t>(kUnits[i].unit) != i) return false;
  }
  return true;
}
static_assert(UnitsInOrder(), "kUnits must list the units in enum order");
static_assert(static_cast<size_t>(Granularity::Unit::kYear) + 1 == sizeof(kUnits) / sizeof(kUnits[0]),
              "kUnits must list every unit");

const NamedUnit& Lookup(Granularity::Unit unit) { return kUnits[static_cast<size_t>(unit)]; }

int MonthsPerBucket(Granularity::Unit unit) {
  switch (unit) {
    case Granularity::Unit::kMonth: return 1;
    case Granularity::Unit::kQuarter: return 3;
    default: return 12;
  }
}

}  // namespace

absl::StatusOr<Granularity> Granularity::Parse(absl::string_view name) {
  const std::string upper = absl::AsciiStrToUpper(name);
  for (const NamedUnit& u : kUnits) {
    if (upper == u.name) return Granularity(u.unit);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown granularity \"", name,
      "\"; use NONE, SECOND, MINUTE, FIVE_MINUTE, TEN_MINUTE, FIFTEEN_MINUTE, "
      "THIRTY_MINUTE, HOUR, SIX_HOUR, DAY, WEEK, MONTH, QUARTER or YEAR"));
}

std::string Granularity::Name() const { return Lookup(unit_).name; }

int64_t Granularity::ApproximateMillis() const {
  const NamedUnit& u = Lookup(unit_);
  if (u.fixed_ms) return u.fixed_ms;
  return MonthsPerBucket(unit_) * 30 * kDayMs;
}

int64_t Granularity::TruncateUnit(int64_t ms) const {
  const NamedUnit& u = Lookup(unit_);
  if (unit_ == Unit::kWeek) {
    return FloorDiv(ms - kFirstMondayMs, u.fixed_ms) * u.fixed_ms + kFirstMondayMs;
  }
  if (u.fixed_ms) return FloorDiv(ms, u.fixed_ms) * u.fixed_ms;
  const CivilDate date = CivilFromDays(FloorDiv(ms, kDayMs));
  const int per = MonthsPerBucket(unit_);
  const int month0 = ((date.month - 1) / per) * per;  // 0-based first month of bucket
  return DaysFromCivil(date.year, month0 + 1, 1) * kDayMs;
}

int64_t Granularity::Next(int64_t bucket_start) const {
  const NamedUnit& u = Lookup(unit_);
  if (u.fixed_ms) return Truncate(bucket_start) + u.fixed_ms;
  const int64_t start = Truncate(bucket_start);
  const CivilDate date = CivilFromDays(FloorDiv(start, kDayMs));
  int64_t months = date.year * 12 + (date.month - 1) + MonthsPerBucket(unit_);
  const int64_t year = FloorDiv(months, 12);
  const int month = static_cast<int>(months - year * 12) + 1;
  return DaysFromCivil(year, month, 1) * kDayMs;
}

}  // namespace sluice
