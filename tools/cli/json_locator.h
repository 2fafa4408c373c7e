// Where things are in a JSON text, for error messages that point at a line:
// a strict syntax check (RFC 8259: no trailing commas, no comments) that says
// line and column of the first problem, and the position of every object key.
#ifndef SLUICE_TOOLS_SLUICECTL_JSON_LOCATOR_H_
#define SLUICE_TOOLS_SLUICECTL_JSON_LOCATOR_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace sluicectl {

// 1-based line and column (in bytes).
struct TextPosition {
  int line = 0;
  int column = 0;
};

// A path to a value: object keys and array indexes, e.g. ioConfig.taskCount
// is {"ioConfig", "taskCount"}; metricsSpec[1] is {"metricsSpec", "1"}.
using JsonPath = std::vector<std::string>;

enum class JsonKind { kObject, kArray, kString, kNumber, kBool, kNull };

struct JsonLayout {
  // Position of each key (for a path ending in a key) and of each array
  // element (for a path ending in an index).
  std::map<JsonPath, TextPosition> positions;
  // What kind of value sits at each path (the root is the empty path).
  std::map<JsonPath, JsonKind> kinds;
  // The keys of each object, in the order they appear.
  std::map<JsonPath, std::vector<std::string>> object_keys;
};

// Parses `text` as one JSON value. INVALID_ARGUMENT "LINE:COLUMN: what was
// expected" for the first syntax error.
absl::StatusOr<JsonLayout> LocateJson(absl::string_view text);

}  // namespace sluicectl
}  // namespace sluice

#endif  // SLUICE_TOOLS_SLUICECTL_JSON_LOCATOR_H_
