// A compiled Druid dimension filter (sluice.v1.DimFilter): the row filter of
// a transformSpec, and the Kafka header filter.
//
//   SLUICE_ASSIGN_OR_RETURN(DimFilterMatcher matcher,
//       DimFilterMatcher::Create(spec.filter(), "dataSchema.transformSpec.filter"));
//   // Once per row: the value of each dimension the filter reads, in
//   // matcher.dimensions() order (nullopt when the field is absent or null).
//   std::vector<std::optional<absl::string_view>> values = ...;
//   if (!matcher.Matches(values)) { /* thrown away */ }
//
// Semantics (values are strings; a null never equals a string):
//   selector  dimension equals `value`; with no value set, the dimension is null.
//   in        dimension is one of `values` (null is never one of them).
//   bound     lower <= dimension <= upper (< with *_strict), either bound
//             optional; "lexicographic" compares UTF-8 bytes, "numeric"
//             compares as doubles and a value that is not a number (or a
//             null) never matches.
//   and/or    of `fields` (at least one); not: of `field`. Two-valued logic:
//             not(selector d = "a") matches a row where d is null.
//
// Limits (from the proto): nesting at most 16 levels, at most 10000 values in
// all (selector values, in values and bounds). Create refuses anything else
// with INVALID_ARGUMENT naming the field by its JSON path, including fields
// set that the filter's type does not use.
//
// Copyable and movable; const methods are safe from many threads.
#ifndef SLUICE_COMMON_SEGMENT_DIM_FILTER_H_
#define SLUICE_COMMON_SEGMENT_DIM_FILTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "sluice/v1/spec.pb.h"

namespace sluice {
namespace segment {

inline constexpr int kMaxDimFilterDepth = 16;
inline constexpr int kMaxDimFilterValues = 10000;

class DimFilterMatcher {
 public:
  // Validates and compiles `filter`; `path` is its JSON path, used in errors:
  // "dataSchema.transformSpec.filter.fields[1].type: unknown filter type \"regex\"".
  static absl::StatusOr<DimFilterMatcher> Create(const sluice::v1::DimFilter& filter,
                                                 absl::string_view path);

  // The distinct dimension names the filter reads, in first-use order.
  const std::vector<std::string>& dimensions() const { return dimensions_; }

  // values[i]: the value of dimensions()[i] in this row; nullopt = null or
  // absent. values.size() must equal dimensions().size().
  bool Matches(absl::Span<const std::optional<absl::string_view>> values) const;

 private:
  enum class Kind : uint8_t { kSelector, kIn, kLexBound, kNumericBound, kAnd, kOr, kNot };

  struct Node {
    Kind kind = Kind::kSelector;
    // selector, in, bound: index into dimensions_.
    int dimension = 0;
    // selector: the value; nullopt matches null.
    std::optional<std::string> value;
    // in: index into in_sets_.
    int in_set = 0;
    // bound.
    bool has_lower = false;
    bool has_upper = false;
    bool lower_strict = false;
    bool upper_strict = false;
    std::string lower;
    std::string upper;
    double lower_number = 0;
    double upper_number = 0;
    // and, or, not: indexes into children_ [first_child, first_child + num_children).
    int first_child = 0;
    int num_children = 0;
  };

  class Compiler;

  DimFilterMatcher() = default;

  bool Eval(int node, absl::Span<const std::optional<absl::string_view>> values) const;

  std::vector<std::string> dimensions_;
  // nodes_[0] is the root.
  std::vector<Node> nodes_;
  std::vector<int> children_;
  std::vector<absl::flat_hash_set<std::string>> in_sets_;
};

// A number as the numeric bound reads it: a decimal or exponent notation
// double ("12", "-0.5", "1e3"); no spaces, no NaN. nullopt otherwise.
std::optional<double> ParseFilterNumber(absl::string_view text);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_DIM_FILTER_H_
