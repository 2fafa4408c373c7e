// Validation of names that users type and that reach file paths: datasource
// (= supervisor id), task id, worker id, segment id.
#ifndef SLUICE_COMMON_NAMES_H_
#define SLUICE_COMMON_NAMES_H_

#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace sluice {

inline constexpr size_t kMaxDatasourceLength = 128;
inline constexpr size_t kMaxTaskIdLength = 200;

// 1..max_length characters of [A-Za-z0-9._-], first one a letter or digit
// (so never "", ".", ".." or a hidden file). INVALID_ARGUMENT naming `what`
// and the offending character otherwise.
absl::Status ValidateName(absl::string_view what, absl::string_view name,
                          size_t max_length);

inline absl::Status ValidateDatasource(absl::string_view name) {
  return ValidateName("datasource", name, kMaxDatasourceLength);
}
inline absl::Status ValidateTaskId(absl::string_view id) {
  return ValidateName("task id", id, kMaxTaskIdLength);
}
inline absl::Status ValidateWorkerId(absl::string_view id) {
  return ValidateName("worker id", id, kMaxTaskIdLength);
}

}  // namespace sluice

#endif  // SLUICE_COMMON_NAMES_H_
