// Bearer tokens, stored hashed. The file named by --auth_tokens_file has one
// token per line, as the SHA-256 of the token (hex) and the principal it
// authenticates:
//
//   # sha256 of the token                                                principal
//   sha256:5f2b...e1c0                                                    ops-admin
//
// `printf %s "$TOKEN" | sha256sum` prints the hash.
// Tokens themselves never reach the server's disk or logs. Several hashes may
// map to one principal (rotation: add the new token, move clients, delete the
// old line, restart the server; the files are read at start: see
// docs/operations.md).
#ifndef SLUICE_COMMON_AUTH_TOKEN_STORE_H_
#define SLUICE_COMMON_AUTH_TOKEN_STORE_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice::auth {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(absl::string_view data);

class TokenStore {
 public:
  // INVALID_ARGUMENT naming the file and line for a malformed line (not
  // "sha256:<64 hex> <principal>"), a duplicate hash, or a file with no token;
  // NOT_FOUND / PERMISSION_DENIED when it cannot be read.
  static absl::StatusOr<TokenStore> Load(const std::string& path);
  // Same, from the file's contents (`origin` names it in errors).
  static absl::StatusOr<TokenStore> Parse(absl::string_view contents, absl::string_view origin);

  // The principal a presented token authenticates, if any.
  std::optional<std::string> Lookup(absl::string_view token) const;

  size_t size() const { return principal_by_hash_.size(); }

 private:
  std::map<std::string, std::string> principal_by_hash_;
};

}  // namespace sluice::auth

#endif  // SLUICE_COMMON_AUTH_TOKEN_STORE_H_
