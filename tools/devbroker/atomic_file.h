// Writing a small file so that readers see either nothing or all of it.
#ifndef SLUICE_TOOLS_DEVBROKER_ATOMIC_FILE_H_
#define SLUICE_TOOLS_DEVBROKER_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace devbroker {

// Writes `contents` to a temporary file beside `path`, fsyncs it and renames
// it over `path` (then fsyncs the directory). A reader polling for `path`
// never sees a partial file. Errors name the path and the failing call.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_ATOMIC_FILE_H_
