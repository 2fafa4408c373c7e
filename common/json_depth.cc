#include "common/json_depth.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sluice {

int JsonNestingDepth(absl::string_view json) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is (\" does not end the string)
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        deepest = std::max(deepest, ++depth);
        break;
      case ']':
      case '}':
        // Unbalanced closers are the parser's error to report; never below 0.
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return deepest;
}

absl::Status CheckJsonDepth(absl::string_view json, absl::string_view what, int max_depth,
                            absl::StatusCode code) {
  const int depth = JsonNestingDepth(json);
  if (depth <= max_depth) return absl::OkStatus();
  return absl::Status(code, absl::StrCat(what, " nests arrays and objects ", depth,
                                         " levels deep; at most ", max_depth));
}

}  // namespace sluice
