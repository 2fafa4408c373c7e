// Time granularities of a data schema: segment granularity (how time is cut
// into segment intervals) and query granularity (how row times are truncated
// before rollup). All computations are in UTC milliseconds.
#ifndef SLUICE_COMMON_GRANULARITY_H_
#define SLUICE_COMMON_GRANULARITY_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace sluice {

class Granularity {
 public:
  enum class Unit {
    kNone,  // no truncation (query granularity only)
    kSecond,
    kMinute,
    kFiveMinute,
    kTenMinute,
    kFifteenMinute,
    kThirtyMinute,
    kHour,
    kSixHour,
    kDay,
    kWeek,  // ISO weeks, starting Monday 00:00 UTC
    kMonth,
    kQuarter,
    kYear,
  };

  // Parses "NONE", "SECOND", "MINUTE", "FIVE_MINUTE", "TEN_MINUTE",
  // "FIFTEEN_MINUTE", "THIRTY_MINUTE", "HOUR", "SIX_HOUR", "DAY", "WEEK",
  // "MONTH", "QUARTER", "YEAR" (case-insensitive).
  static absl::StatusOr<Granularity> Parse(absl::string_view name);

  explicit Granularity(Unit unit) : unit_(unit) {}
  Granularity() : Granularity(Unit::kNone) {}

  Unit unit() const { return unit_; }
  std::string Name() const;

  // Start of the bucket holding `ms` (`ms` itself for NONE).
  int64_t Truncate(int64_t ms) const {
    return unit_ == Unit::kNone ? ms : TruncateUnit(ms);  // NONE: per record, inline
  }
  // Start of the bucket after the one starting at `bucket_start`
  // (bucket_start + 1 for NONE).
  int64_t Next(int64_t bucket_start) const;
  // Whether `ms` is a bucket boundary.
  bool IsAligned(int64_t ms) const { return Truncate(ms) == ms; }
  // A rough size of one bucket in milliseconds (for comparing granularities).
  int64_t ApproximateMillis() const;

  friend bool operator==(Granularity a, Granularity b) { return a.unit_ == b.unit_; }
  friend bool operator!=(Granularity a, Granularity b) { return a.unit_ != b.unit_; }

 private:
  int64_t TruncateUnit(int64_t ms) const;  // Truncate of a unit other than NONE
  Unit unit_;
};

}  // namespace sluice

#endif  // SLUICE_COMMON_GRANULARITY_H_
