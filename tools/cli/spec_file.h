// Reading a supervisor spec from JSON (the file given to `sluicectl submit`),
// with errors that point at the line and name the field:
//
//   spec.json:7:5: unknown field "taskCont" in ioConfig (IoConfig); known
//   fields: topic, consumerProperties, taskCount, ...
//   spec.json:3:18: ioConfig.taskCount: "two" is not an integer
//   spec.json:4:1: expected ',' or '}' after a value, found '"'
#ifndef SLUICE_TOOLS_SLUICECTL_SPEC_FILE_H_
#define SLUICE_TOOLS_SLUICECTL_SPEC_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sluice/v1/spec.pb.h"

namespace sluice {
namespace sluicectl {

// Parses `json` (a SupervisorSpec in its JSON form; camelCase or snake_case
// names) strictly: no unknown fields, no trailing commas. INVALID_ARGUMENT
// prefixed with "<source_name>:LINE:COLUMN: " when the position is known.
absl::StatusOr<v1::SupervisorSpec> ParseSpecJson(absl::string_view json,
                                                 absl::string_view source_name);

// The text of the file at `path` ("-" reads stdin). NOT_FOUND /
// PERMISSION_DENIED when it cannot be read.
absl::StatusOr<std::string> ReadSpecText(const std::string& path);

// Reads and parses the file at `path` ("-" reads stdin). NOT_FOUND /
// PERMISSION_DENIED when it cannot be read.
absl::StatusOr<v1::SupervisorSpec> ReadSpecFile(const std::string& path);

}  // namespace sluicectl
}  // namespace sluice

#endif  // SLUICE_TOOLS_SLUICECTL_SPEC_FILE_H_
