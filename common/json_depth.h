// A linear pre-scan of JSON text's nesting depth, run before a JSON parser
// sees text from a caller. protobuf's JSON parser spends time quadratic in the
// depth of nested arrays (a 1 MiB `[[[[...` costs hours of CPU), so anything
// deeper than kMaxJsonDepth is refused before it runs.
//
//   SLUICE_RETURN_IF_ERROR(CheckJsonDepth(text, "druid_spec_json"));
#ifndef SLUICE_COMMON_JSON_DEPTH_H_
#define SLUICE_COMMON_JSON_DEPTH_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sluice {

// Arrays and objects nested in one another, counting the outermost. A spec
// needs about 10; protobuf's own parser refuses messages nested much deeper
// than this anyway (its recursion limit of 100 messages: each JSON level of a
// google.protobuf.Value is two). docs/operations.md ("Request bounds").
inline constexpr int kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `json`, brackets inside
// strings (escapes included) not counted. Does not check that `json` is
// valid JSON: the parser that runs afterwards does.
int JsonNestingDepth(absl::string_view json);

// `code` (INVALID_ARGUMENT for input from a caller) "<what> nests arrays and
// objects <depth> levels deep; at most <max_depth>" when JsonNestingDepth
// passes `max_depth`; OK otherwise.
absl::Status CheckJsonDepth(absl::string_view json, absl::string_view what,
                            int max_depth = kMaxJsonDepth,
                            absl::StatusCode code = absl::StatusCode::kInvalidArgument);

}  // namespace sluice

#endif  // SLUICE_COMMON_JSON_DEPTH_H_
