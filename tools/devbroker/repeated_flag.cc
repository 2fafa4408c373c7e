#include "tools/devbroker/repeated_flag.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sluice {
namespace devbroker {

absl::StatusOr<std::vector<std::string>> ExtractRepeatedFlag(std::vector<std::string>& args,
                                                             absl::string_view name) {
  std::vector<std::string> values;
  std::vector<std::string> kept;
  const std::string long_eq = absl::StrCat("--", name, "=");
  const std::string short_eq = absl::StrCat("-", name, "=");
  const std::string long_flag = absl::StrCat("--", name);
  const std::string short_flag = absl::StrCat("-", name);
  bool rest = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string value;
    bool matched = false;
    if (rest || i == 0) {
      // Program name, or after "--".
    } else if (arg == "--") {
      rest = true;
    } else if (absl::StartsWith(arg, long_eq)) {
      value = arg.substr(long_eq.size());
      matched = true;
    } else if (absl::StartsWith(arg, short_eq)) {
      value = arg.substr(short_eq.size());
      matched = true;
    } else if (arg == long_flag || arg == short_flag) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
      value = args[++i];
      matched = true;
    }
    if (!matched) {
      kept.push_back(arg);
      continue;
    }
    for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      values.emplace_back(part);
    }
  }
  args = std::move(kept);
  return values;
}

}  // namespace devbroker
}  // namespace sluice
