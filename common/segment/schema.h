// The data schema the segment library works with: how a record value becomes
// a row (timestamp, dimensions, metric inputs) and how rows roll up.
//
// A plain struct, independent of the wire contract; schema_proto.h converts a
// sluice.v1.DataSchema into it (filling the defaults).
#ifndef SLUICE_COMMON_SEGMENT_SCHEMA_H_
#define SLUICE_COMMON_SEGMENT_SCHEMA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/granularity.h"

namespace sluice {
namespace segment {

// The name of the time column in segment files (and of nothing else).
inline constexpr char kTimeColumn[] = "__time";

enum class TimestampFormat : uint8_t {
  // An ISO-8601 string, or an epoch number (string or JSON number): millis
  // when |n| >= 10^11, else seconds.
  kAuto = 0,
  kIso = 1,     // ISO-8601 string only
  kMillis = 2,  // epoch milliseconds (JSON number or numeric string)
  kPosix = 3,   // epoch seconds, fractions allowed
  kMicros = 4,  // epoch microseconds
  kNanos = 5,   // epoch nanoseconds
};

// "auto", "iso", "millis", "posix", "micros", "nanos" (case-insensitive).
absl::StatusOr<TimestampFormat> ParseTimestampFormat(absl::string_view name);
const char* TimestampFormatName(TimestampFormat format);

enum class MetricType : uint8_t {
  kCount = 0,      // input rows merged into the row (no input field)
  kLongSum = 1,    // int64, wraps around in two's complement
  kDoubleSum = 2,  // exact sum, rounded once to the nearest double
  kLongMin = 3,
  kLongMax = 4,
  kDoubleMin = 5,  // IEEE 754 totalOrder: -NaN < -inf < -0.0 < +0.0 < +inf < +NaN
  kDoubleMax = 6,
};

// "count", "longSum", "doubleSum", "longMin", "longMax", "doubleMin",
// "doubleMax" (case-sensitive, as in Druid).
absl::StatusOr<MetricType> ParseMetricType(absl::string_view name);
const char* MetricTypeName(MetricType type);
// Whether the metric's value is an int64 (count, long*) or a double.
bool IsLongMetric(MetricType type);

struct MetricSpec {
  MetricType type = MetricType::kCount;
  // Output column name.
  std::string name;
  // Input field; unused by count.
  std::string field;
};

struct Schema {
  std::string timestamp_column = "timestamp";
  TimestampFormat timestamp_format = TimestampFormat::kAuto;
  // String dimensions in this order. Empty: discover them (every field that
  // is not the timestamp, a metric input, an exclusion or "__time"), in
  // order of name.
  std::vector<std::string> dimensions;
  std::vector<std::string> dimension_exclusions;
  std::vector<MetricSpec> metrics;
  // Row times are truncated to this before rollup (Druid's queryGranularity).
  Granularity query_granularity;
  // Merge rows with equal truncated time and dimension values.
  bool rollup = true;

  bool discover_dimensions() const { return dimensions.empty(); }
};

// INVALID_ARGUMENT naming the problem: empty or duplicate names, a dimension
// or metric called "__time" or named like the timestamp column, a metric
// named like a dimension, a non-count metric without an input field.
absl::Status ValidateSchema(const Schema& schema);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SCHEMA_H_
