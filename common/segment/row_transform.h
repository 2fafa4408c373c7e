// A compiled transformSpec (sluice.v1.TransformSpec): the expressions that
// derive fields of a row and the filter that keeps or throws away the row.
// RowParser::Create takes one and applies it to every record it parses.
//
//   SLUICE_ASSIGN_OR_RETURN(RowTransform transform,
//       RowTransform::Create(data_schema.transform_spec(), "dataSchema.transformSpec",
//                            timestamp_column));
//
// Where it runs (Druid's order): the record is parsed, the transforms are
// evaluated on the record's fields (a transform never reads another
// transform's output), each output replaces the record field of its name (as
// dimension, metric input or timestamp column), then the filter runs on the
// transformed row: a dimension named like a transform reads its output, any
// other name the record's field, "__time" the row's timestamp in millis.
//
// Copyable and movable.
#ifndef SLUICE_COMMON_SEGMENT_ROW_TRANSFORM_H_
#define SLUICE_COMMON_SEGMENT_ROW_TRANSFORM_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/dim_filter.h"
#include "common/segment/expression.h"
#include "sluice/v1/spec.pb.h"

namespace sluice {
namespace segment {

// At most this many transforms (the proto's bound).
inline constexpr int kMaxTransforms = 256;

class RowTransform {
 public:
  struct Named {
    std::string name;
    Expression expression;
  };

  // No transforms, no filter.
  RowTransform() = default;

  // INVALID_ARGUMENT naming the field under `path`
  // ("dataSchema.transformSpec.transforms[0].expression: ... at column 7"):
  // more than 256 transforms, a type other than "expression", an empty or
  // repeated name, an expression that does not compile, one that reads
  // __time while a transform replaces the timestamp column (named
  // `timestamp_column` or "__time"), a filter that does not compile.
  // Column-name rules (UTF-8, no control characters) are the spec's.
  static absl::StatusOr<RowTransform> Create(const sluice::v1::TransformSpec& spec,
                                             absl::string_view path,
                                             absl::string_view timestamp_column);

  bool empty() const { return transforms_.empty() && !filter_.has_value(); }
  const std::vector<Named>& transforms() const { return transforms_; }
  const std::optional<DimFilterMatcher>& filter() const { return filter_; }

 private:
  std::vector<Named> transforms_;
  std::optional<DimFilterMatcher> filter_;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_ROW_TRANSFORM_H_
