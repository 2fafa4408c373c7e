#include "common/segment/schema_proto.h"

#include "absl/strings/str_cat.h"

namespace sluice {
namespace segment {
namespace {

// INVALID_ARGUMENT "dataSchema.<field>: <message>" ("dataSchema: <message>"
// for the schema as a whole).
absl::Status Field(absl::string_view field, const absl::Status& status) {
  return absl::InvalidArgumentError(
      absl::StrCat("dataSchema", field.empty() ? "" : ".", field, ": ", status.message()));
}

}  // namespace

absl::StatusOr<Schema> SchemaFromProto(const sluice::v1::DataSchema& proto) {
  Schema schema;
  const sluice::v1::TimestampSpec& ts = proto.timestamp_spec();
  schema.timestamp_column = ts.column().empty() ? "timestamp" : ts.column();
  if (!ts.format().empty()) {
    absl::StatusOr<TimestampFormat> format = ParseTimestampFormat(ts.format());
    if (!format.ok()) return Field("timestampSpec.format", format.status());
    schema.timestamp_format = *format;
  }
  const sluice::v1::DimensionsSpec& dims = proto.dimensions_spec();
  schema.dimensions.assign(dims.dimensions().begin(), dims.dimensions().end());
  schema.dimension_exclusions.assign(dims.dimension_exclusions().begin(),
                                     dims.dimension_exclusions().end());
  for (int i = 0; i < proto.metrics_spec_size(); ++i) {
    const sluice::v1::MetricSpec& m = proto.metrics_spec(i);
    absl::StatusOr<MetricType> type = ParseMetricType(m.type());
    if (!type.ok()) return Field(absl::StrCat("metricsSpec[", i, "].type"), type.status());
    MetricSpec metric;
    metric.type = *type;
    metric.name = m.name();
    if (*type != MetricType::kCount) metric.field = m.field_name().empty() ? m.name() : m.field_name();
    schema.metrics.push_back(std::move(metric));
  }
  const sluice::v1::GranularitySpec& g = proto.granularity_spec();
  if (!g.query_granularity().empty()) {
    absl::StatusOr<Granularity> granularity = Granularity::Parse(g.query_granularity());
    if (!granularity.ok()) return Field("granularitySpec.queryGranularity", granularity.status());
    schema.query_granularity = *granularity;
  }
  schema.rollup = g.has_rollup() ? g.rollup() : true;
  if (absl::Status s = ValidateSchema(schema); !s.ok()) return Field("", s);
  return schema;
}

}  // namespace segment
}  // namespace sluice
