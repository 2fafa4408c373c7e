#include "common/segment/header_decoding.h"

#include <simdjson.h>

#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace segment {

absl::StatusOr<HeaderEncoding> ParseHeaderEncoding(absl::string_view name) {
  if (name.empty() || absl::EqualsIgnoreCase(name, "UTF-8")) return HeaderEncoding::kUtf8;
  if (absl::EqualsIgnoreCase(name, "ISO-8859-1")) return HeaderEncoding::kIso88591;
  if (absl::EqualsIgnoreCase(name, "BASE64")) return HeaderEncoding::kBase64;
  if (absl::EqualsIgnoreCase(name, "HEX")) return HeaderEncoding::kHex;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown encoding \"", name.substr(0, 64),
                   "\"; known: UTF-8, ISO-8859-1, BASE64, HEX"));
}

const char* HeaderEncodingName(HeaderEncoding encoding) {
  switch (encoding) {
    case HeaderEncoding::kUtf8: return "UTF-8";
    case HeaderEncoding::kIso88591: return "ISO-8859-1";
    case HeaderEncoding::kBase64: return "BASE64";
    case HeaderEncoding::kHex: return "HEX";
  }
  return "UTF-8";
}

bool DecodeHeader(HeaderEncoding encoding, absl::string_view raw, std::string* scratch,
                  absl::string_view* out) {
  switch (encoding) {
    case HeaderEncoding::kUtf8:
      if (!simdjson::validate_utf8(raw.data(), raw.size())) return false;
      *out = raw;
      return true;
    case HeaderEncoding::kIso88591: {
      scratch->clear();
      for (const char c : raw) {
        const unsigned char b = static_cast<unsigned char>(c);
        if (b < 0x80) {
          scratch->push_back(c);
        } else {
          scratch->push_back(static_cast<char>(0xc0 | (b >> 6)));
          scratch->push_back(static_cast<char>(0x80 | (b & 0x3f)));
        }
      }
      break;
    }
    case HeaderEncoding::kBase64:
      // absl::Base64Escape builds a new string; the scratch keeps the buffer.
      scratch->clear();
      absl::Base64Escape(raw, scratch);
      break;
    case HeaderEncoding::kHex: {
      static constexpr char kDigits[] = "0123456789abcdef";
      scratch->resize(raw.size() * 2);
      for (size_t i = 0; i < raw.size(); ++i) {
        const unsigned char b = static_cast<unsigned char>(raw[i]);
        (*scratch)[2 * i] = kDigits[b >> 4];
        (*scratch)[2 * i + 1] = kDigits[b & 0xf];
      }
      break;
    }
  }
  *out = *scratch;
  return true;
}

}  // namespace segment
}  // namespace sluice
