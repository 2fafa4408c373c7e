// Pieces of the Prometheus text exposition format, version 0.0.4: how names,
// label values, help text and sample values are written. The registry
// (registry.h) assembles whole families from these.
//
// Format reference: a family is
//   # HELP <name> <help, with \ and newline escaped>
//   # TYPE <name> counter|gauge|histogram
//   <name>{<label>="<value, with \ " and newline escaped>",...} <value>
// and values are Go-style floats: "+Inf", "-Inf", "NaN", or a number.
#ifndef SLUICE_COMMON_METRICS_TEXT_FORMAT_H_
#define SLUICE_COMMON_METRICS_TEXT_FORMAT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice {
namespace metrics {

// Label pairs of one series, e.g. {{"datasource", "wiki"}, {"partition", "3"}}.
using Labels = std::vector<std::pair<std::string, std::string>>;

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(absl::string_view name);

// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved by Prometheus).
bool IsValidLabelName(absl::string_view name);

// HELP text: backslash -> \\, newline -> \n.
std::string EscapeHelp(absl::string_view help);

// Label value: backslash -> \\, double quote -> \", newline -> \n.
std::string EscapeLabelValue(absl::string_view value);

// Shortest text that reads back as the same double; "+Inf", "-Inf", "NaN".
std::string FormatDouble(double value);

// `{a="x",b="y"}` for the given labels (already in the order to print), or ""
// when there are none. `extra`, when not empty, is appended as the last pair
// (the `le` of histogram buckets).
std::string FormatLabels(const Labels& labels,
                         const std::pair<std::string, std::string>* extra = nullptr);

}  // namespace metrics
}  // namespace sluice

#endif  // SLUICE_COMMON_METRICS_TEXT_FORMAT_H_
