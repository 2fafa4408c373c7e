// A parsed record: the row the incremental index takes.
#ifndef SLUICE_COMMON_SEGMENT_INPUT_ROW_H_
#define SLUICE_COMMON_SEGMENT_INPUT_ROW_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

// One dimension value; absent means null (missing field or JSON null).
struct DimValue {
  absl::string_view text;
  bool present = false;
};

// One metric's input; absent (missing field or JSON null) contributes nothing
// to sums and leaves min/max at their identity.
struct MetricInput {
  bool present = false;
  int64_t long_value = 0;   // for count/long* metrics
  double double_value = 0;  // for double* metrics
};

// The string views point into the RowParser that filled the row (valid until
// its next Parse) or, when a caller builds rows itself, into storage that must
// outlive IncrementalIndex::Add.
struct InputRow {
  // Set by a RowParser with a transformSpec whose filter rejected the row:
  // the row must not be indexed, and counts as thrown away.
  bool thrown_away = false;
  // Not truncated: the index applies the query granularity.
  int64_t timestamp_ms = 0;
  // Listed dimensions: one value per Schema::dimensions entry, in order.
  std::vector<DimValue> dims;
  // Discovered dimensions (Schema::dimensions empty): (field name, value) of
  // every non-null candidate field, in record order; a repeated name keeps
  // its last value.
  std::vector<std::pair<absl::string_view, absl::string_view>> discovered;
  // One per Schema::metrics entry, in order (ignored for count).
  std::vector<MetricInput> metrics;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_INPUT_ROW_H_
