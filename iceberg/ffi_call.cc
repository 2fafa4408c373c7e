#include "iceberg/ffi_call.h"

#include "absl/strings/str_cat.h"

namespace sluice {
namespace iceberg {

absl::Status FfiStatus(int32_t code, const FfiBytes& error, absl::string_view what) {
  if (code == SLUICE_ICEBERG_OK) return absl::OkStatus();
  const std::string message = absl::StrCat(what, ": ", error.view());
  switch (code) {
    case SLUICE_ICEBERG_INVALID_ARGUMENT:
      return absl::InvalidArgumentError(message);
    case SLUICE_ICEBERG_LIMIT_EXCEEDED:
      return absl::ResourceExhaustedError(message);
    case SLUICE_ICEBERG_CONFLICT:
      return absl::AbortedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace iceberg
}  // namespace sluice
