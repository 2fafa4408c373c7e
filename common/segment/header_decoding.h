// Decodes Kafka header values to text per sluice.v1.HeaderFormat.encoding:
// "UTF-8" (the bytes as they are; invalid UTF-8 is refused), "ISO-8859-1"
// (each byte one character, re-encoded as UTF-8), "BASE64" (the bytes
// base64-encoded, standard alphabet with padding) or "HEX" (lower-case hex).
#ifndef SLUICE_COMMON_SEGMENT_HEADER_DECODING_H_
#define SLUICE_COMMON_SEGMENT_HEADER_DECODING_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace segment {

enum class HeaderEncoding : uint8_t { kUtf8 = 0, kIso88591 = 1, kBase64 = 2, kHex = 3 };

// Exact names as above, case-insensitive; "" is UTF-8. INVALID_ARGUMENT
// listing the known ones otherwise.
absl::StatusOr<HeaderEncoding> ParseHeaderEncoding(absl::string_view name);
// The canonical name ("UTF-8", "ISO-8859-1", "BASE64", "HEX").
const char* HeaderEncodingName(HeaderEncoding encoding);

// Sets *out to the text of `raw`: `raw` itself for valid UTF-8, else the
// decoded text in *scratch (whose capacity is reused). False only for UTF-8
// that is not valid.
bool DecodeHeader(HeaderEncoding encoding, absl::string_view raw, std::string* scratch,
                  absl::string_view* out);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_HEADER_DECODING_H_
