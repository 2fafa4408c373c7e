#include "common/auth/token_store.h"

#include <openssl/evp.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace sluice::auth {

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

absl::StatusOr<TokenStore> TokenStore::Load(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  return Parse(contents, path);
}

absl::StatusOr<TokenStore> TokenStore::Parse(absl::string_view contents,
                                             absl::string_view origin) {
  TokenStore store;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("auth tokens file ", origin, " line ", line_number, ": ", why,
                       " (expected \"sha256:<64 hex digits> <principal>\")"));
    };
    if (fields.size() != 2) return bad("wrong number of fields");
    absl::string_view hash = fields[0];
    if (!absl::ConsumePrefix(&hash, "sha256:") || hash.size() != 64) {
      return bad("the hash is not sha256:<64 hex digits> (tokens are stored hashed, never plain)");
    }
    std::string lower = absl::AsciiStrToLower(hash);
    for (char c : lower) {
      if (!absl::ascii_isxdigit(c)) return bad("the hash has a non-hex digit");
    }
    if (!store.principal_by_hash_.emplace(lower, std::string(fields[1])).second) {
      return bad("the same token hash appears twice");
    }
  }
  if (store.principal_by_hash_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("auth tokens file ", origin, " has no token"));
  }
  return store;
}

std::optional<std::string> TokenStore::Lookup(absl::string_view token) const {
  if (token.empty()) return std::nullopt;
  auto it = principal_by_hash_.find(Sha256Hex(token));
  if (it == principal_by_hash_.end()) return std::nullopt;
  return it->second;
}

}  // namespace sluice::auth
