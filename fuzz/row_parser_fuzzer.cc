// libFuzzer target: any bytes as a Kafka record value. The parser must never
// crash, and a row it accepts must be within the format's limits and go into
// an index (so it can never make a segment the reader refuses).
//
// The first byte picks the schema: listed dimensions or discovery, rollup,
// timestamp format.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "common/granularity.h"
#include "common/segment/format_limits.h"
#include "common/segment/incremental_index.h"
#include "common/segment/row_parser.h"

namespace {

using namespace sluice::segment;

Schema MakeSchema(uint8_t selector) {
  Schema s;
  if (selector & 1) s.dimensions = {"channel", "page", "user"};
  s.dimension_exclusions = {"ignored"};
  s.metrics = {{MetricType::kCount, "count", ""},
               {MetricType::kLongSum, "added", "added"},
               {MetricType::kDoubleSum, "delta", "delta"},
               {MetricType::kLongMax, "max_added", "added"},
               {MetricType::kDoubleMin, "min_delta", "delta"}};
  const TimestampFormat formats[] = {TimestampFormat::kAuto, TimestampFormat::kIso,
                                     TimestampFormat::kMillis, TimestampFormat::kPosix};
  s.timestamp_format = formats[(selector >> 1) & 3];
  s.rollup = (selector & 8) == 0;
  s.query_granularity = sluice::Granularity(sluice::Granularity::Unit::kMinute);
  return s;
}

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static std::unique_ptr<RowParser> parsers[16];
  const uint8_t selector = data[0] & 15;
  if (parsers[selector] == nullptr) {
    auto created = RowParser::Create(MakeSchema(selector));
    Check(created.ok());
    parsers[selector] = std::move(*created);
  }
  RowParser& parser = *parsers[selector];
  const absl::string_view value(reinterpret_cast<const char*>(data) + 1, size - 1);
  InputRow row;
  const ParseError error = parser.Parse(value, &row);
  if (!error.ok()) {
    Check(ParseErrorKindName(error.kind)[0] != '\0');
    Check(!error.message.empty());
    return 0;
  }
  size_t bytes = 0;
  for (const DimValue& d : row.dims) {
    if (!d.present) continue;
    Check(d.text.size() <= kMaxValueBytes);
    bytes += d.text.size();
  }
  Check(row.discovered.size() <= kMaxDiscoveredDimensions);
  for (const auto& [name, text] : row.discovered) {
    Check(!name.empty());
    Check(text.size() <= kMaxValueBytes);
    bytes += text.size();
  }
  Check(bytes <= kMaxRowValueBytes);
  // A parsed row always fits an index of the hour that holds it.
  const sluice::Granularity hour(sluice::Granularity::Unit::kHour);
  IndexOptions options;
  options.schema = parser.schema();
  options.interval.start_ms = hour.Truncate(row.timestamp_ms);
  options.interval.end_ms = hour.Next(options.interval.start_ms);
  auto index = IncrementalIndex::Create(options);
  Check(index.ok());
  Check((*index)->Add(row, 0, 0).ok());
  Check((*index)->rows() == 1);
  return 0;
}
