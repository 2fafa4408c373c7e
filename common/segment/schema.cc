#include "common/segment/schema.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace segment {
namespace {

struct FormatName {
  TimestampFormat format;
  const char* name;
};
constexpr FormatName kFormats[] = {
    {TimestampFormat::kAuto, "auto"},     {TimestampFormat::kIso, "iso"},
    {TimestampFormat::kMillis, "millis"}, {TimestampFormat::kPosix, "posix"},
    {TimestampFormat::kMicros, "micros"}, {TimestampFormat::kNanos, "nanos"},
};

struct MetricName {
  MetricType type;
  const char* name;
};
constexpr MetricName kMetrics[] = {
    {MetricType::kCount, "count"},         {MetricType::kLongSum, "longSum"},
    {MetricType::kDoubleSum, "doubleSum"}, {MetricType::kLongMin, "longMin"},
    {MetricType::kLongMax, "longMax"},     {MetricType::kDoubleMin, "doubleMin"},
    {MetricType::kDoubleMax, "doubleMax"},
};

}  // namespace

absl::StatusOr<TimestampFormat> ParseTimestampFormat(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (const FormatName& f : kFormats) {
    if (lower == f.name) return f.format;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown timestamp format \"", name,
                   "\"; use auto, iso, millis, posix, micros or nanos"));
}

const char* TimestampFormatName(TimestampFormat format) {
  for (const FormatName& f : kFormats) {
    if (f.format == format) return f.name;
  }
  return "unknown";
}

absl::StatusOr<MetricType> ParseMetricType(absl::string_view name) {
  for (const MetricName& m : kMetrics) {
    if (name == m.name) return m.type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown metric type \"", name,
                   "\"; use count, longSum, doubleSum, longMin, longMax, "
                   "doubleMin or doubleMax"));
}

const char* MetricTypeName(MetricType type) {
  for (const MetricName& m : kMetrics) {
    if (m.type == type) return m.name;
  }
  return "unknown";
}

bool IsLongMetric(MetricType type) {
  switch (type) {
    case MetricType::kCount:
    case MetricType::kLongSum:
    case MetricType::kLongMin:
    case MetricType::kLongMax:
      return true;
    default:
      return false;
  }
}

absl::Status ValidateSchema(const Schema& schema) {
  if (schema.timestamp_column.empty()) {
    return absl::InvalidArgumentError("timestamp column must not be empty");
  }
  absl::flat_hash_set<std::string> columns;
  for (const std::string& dim : schema.dimensions) {
    if (dim.empty()) return absl::InvalidArgumentError("a dimension name is empty");
    if (dim == kTimeColumn) {
      return absl::InvalidArgumentError("\"__time\" cannot be a dimension");
    }
    if (dim == schema.timestamp_column) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dimension \"", dim, "\" is the timestamp column"));
    }
    if (!columns.insert(dim).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension \"", dim, "\" is listed twice"));
    }
  }
  for (const MetricSpec& metric : schema.metrics) {
    if (metric.name.empty()) return absl::InvalidArgumentError("a metric name is empty");
    if (metric.name == kTimeColumn) {
      return absl::InvalidArgumentError("\"__time\" cannot be a metric name");
    }
    if (!columns.insert(metric.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric \"", metric.name, "\" has the name of another column"));
    }
    if (metric.type != MetricType::kCount && metric.field.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("metric \"", metric.name, "\" has no input field"));
    }
    if (metric.type != MetricType::kCount && metric.field == schema.timestamp_column) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric \"", metric.name, "\" reads the timestamp column"));
    }
  }
  return absl::OkStatus();
}

}  // namespace segment
}  // namespace sluice
