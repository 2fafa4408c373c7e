// gflags keeps only the last value of a flag given twice; the dev broker's
// --topic is repeatable. This pulls every occurrence out of argv before
// gflags sees it.
#ifndef SLUICE_TOOLS_DEVBROKER_REPEATED_FLAG_H_
#define SLUICE_TOOLS_DEVBROKER_REPEATED_FLAG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace devbroker {

// Removes every "--NAME=V", "-NAME=V", "--NAME V" and "-NAME V" from `args`
// (stopping at "--") and returns the values in order; a value containing
// commas counts as several ("a:1,b:2"). INVALID_ARGUMENT when the flag is
// last with no value.
absl::StatusOr<std::vector<std::string>> ExtractRepeatedFlag(std::vector<std::string>& args,
                                                             absl::string_view name);

}  // namespace devbroker
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEVBROKER_REPEATED_FLAG_H_
