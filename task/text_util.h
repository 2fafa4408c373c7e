// Text helpers for strings that end up in protobuf string fields (which must
// be valid UTF-8 on the wire) but come from arbitrary record bytes.
#ifndef SLUICE_TASK_TEXT_UTIL_H_
#define SLUICE_TASK_TEXT_UTIL_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace sluice::task {

// The first `max_bytes` bytes of `text` (or fewer, never cutting a
// character), with every byte that is not part of a valid UTF-8 sequence
// replaced by '?'.
std::string SanitizeUtf8(absl::string_view text, size_t max_bytes);

}  // namespace sluice::task

#endif  // SLUICE_TASK_TEXT_UTIL_H_
