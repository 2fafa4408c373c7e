#include "common/names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice {

absl::Status ValidateName(absl::string_view what, absl::string_view name,
                          size_t max_length) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must not be empty"));
  }
  if (name.size() > max_length) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is %d characters long; at most %d are allowed", what, name.size(),
        max_length));
  }
  if (!absl::ascii_isalnum(static_cast<unsigned char>(name[0]))) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " \"", absl::CEscape(name),
                     "\" must start with a letter or digit"));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.') continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s \"%s\" has a character that is not allowed ('%s' at position %d); "
        "use letters, digits, '.', '_' and '-'",
        what, absl::CEscape(name), absl::CEscape(name.substr(i, 1)), i));
  }
  return absl::OkStatus();
}

}  // namespace sluice
