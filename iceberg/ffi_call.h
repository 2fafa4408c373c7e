// The C++ side of the C ABI in ffi/sluice_iceberg.h: owning wrappers for the
// byte buffers the library returns and the mapping of its status codes to
// absl::Status. Internal to //iceberg.
#ifndef SLUICE_ICEBERG_FFI_CALL_H_
#define SLUICE_ICEBERG_FFI_CALL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "iceberg/ffi/sluice_iceberg.h"

namespace sluice {
namespace iceberg {

// A SluiceIcebergBytes the library filled; freed on destruction.
class FfiBytes {
 public:
  FfiBytes() : bytes_{nullptr, 0} {}
  ~FfiBytes() { sluice_iceberg_bytes_free(bytes_); }
  FfiBytes(const FfiBytes&) = delete;
  FfiBytes& operator=(const FfiBytes&) = delete;

  SluiceIcebergBytes* out() { return &bytes_; }
  absl::string_view view() const {
    return absl::string_view(reinterpret_cast<const char*>(bytes_.data), bytes_.len);
  }
  std::string str() const { return std::string(view()); }

 private:
  SluiceIcebergBytes bytes_;
};

// OK for SLUICE_ICEBERG_OK; otherwise the code's absl counterpart
// (INVALID_ARGUMENT, RESOURCE_EXHAUSTED for a limit, ABORTED for a
// conflict, INTERNAL) with "<what>: <the library's message>".
absl::Status FfiStatus(int32_t code, const FfiBytes& error, absl::string_view what);

}  // namespace iceberg
}  // namespace sluice

#endif  // SLUICE_ICEBERG_FFI_CALL_H_
