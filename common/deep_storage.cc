#include "common/deep_storage.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice {

absl::StatusOr<std::string> ReadDeepStorageObject(DeepStorage& storage, const std::string& uri,
                                                  const std::string& scratch_dir) {
  SLUICE_ASSIGN_OR_RETURN(std::string local, storage.LocalPathForRead(uri, scratch_dir));
  const bool downloaded = absl::StartsWith(local, scratch_dir + "/") && local != uri &&
                          absl::StrCat("file://", local) != uri;
  absl::StatusOr<std::string> bytes = ReadFile(local);
  if (downloaded) RemoveAll(local).IgnoreError();
  return bytes;
}

absl::Status ValidateDeepStorageKey(absl::string_view key) {
  if (key.empty()) return absl::InvalidArgumentError("deep storage key is empty");
  if (key.size() > 1024) return absl::InvalidArgumentError("deep storage key is too long");
  for (absl::string_view part : absl::StrSplit(key, '/')) {
    if (part.empty() || part == "." || part == ".." || part.size() > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat("deep storage key \"", key, "\" has an empty, '.', '..' or overlong part"));
    }
    for (char c : part) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-' || c == ':' || c == '+';
      if (!ok) {
        return absl::InvalidArgumentError(
            absl::StrCat("deep storage key \"", key, "\" has a character that is not allowed"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
