#include "supervisor/store/postgres_url.h"

#include <libpq-fe.h>

#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace sluice::supervisor {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() &&
        HexValue(text[i + 1]) >= 0 && HexValue(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

absl::Status InlinePassword(absl::string_view scheme) {
  // The URL itself is not repeated: it holds the secret.
  return absl::InvalidArgumentError(absl::StrCat(
      "the metadata store URL (", scheme,
      "//...) carries a password; it would end up in process listings and logs. "
      "Give it by reference instead: ?password_file=/path/to/file, a passfile "
      "(?passfile=... or PGPASSFILE), or a client certificate"));
}

}  // namespace

absl::StatusOr<PostgresConnectOptions> ParsePostgresUrl(absl::string_view url) {
  absl::string_view scheme;
  if (absl::StartsWith(url, "postgresql://")) {
    scheme = "postgresql:";
  } else if (absl::StartsWith(url, "postgres://")) {
    scheme = "postgres:";
  } else {
    return absl::InvalidArgumentError("a PostgreSQL metadata store URL starts with postgresql://");
  }
  absl::string_view rest = url.substr(scheme.size() + 2);
  const size_t authority_end = rest.find_first_of("/?");
  absl::string_view authority = rest.substr(0, authority_end);
  const size_t at = authority.rfind('@');
  if (at != absl::string_view::npos &&
      authority.substr(0, at).find(':') != absl::string_view::npos) {
    return InlinePassword(scheme);
  }

  PostgresConnectOptions out;
  out.url = std::string(url);
  std::string libpq_url(url.substr(0, url.find('?')));
  const size_t question = url.find('?');
  if (question != absl::string_view::npos) {
    std::vector<std::string> kept;
    for (absl::string_view pair : absl::StrSplit(url.substr(question + 1), '&')) {
      if (pair.empty()) continue;
      const size_t eq = pair.find('=');
      const std::string key = PercentDecode(pair.substr(0, eq));
      const std::string value =
          eq == absl::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
      // sslpassword: the passphrase of the client key, a secret as well.
      if (key == "password" || key == "sslpassword") return InlinePassword(scheme);
      if (key == "password_file") {
        if (value.empty()) return absl::InvalidArgumentError("password_file= names no file");
        out.password_file = value;
        continue;
      }
      kept.emplace_back(pair);
    }
    if (!kept.empty()) absl::StrAppend(&libpq_url, "?", absl::StrJoin(kept, "&"));
  }

  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(libpq_url.c_str(), &error);
  if (options == nullptr) {
    std::string message = error ? error : "out of memory";
    PQfreemem(error);
    while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) {
      message.pop_back();
    }
    return absl::InvalidArgumentError(
        absl::StrCat("metadata store URL ", url, ": ", message));
  }
  for (PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val == nullptr || option->val[0] == '\0') continue;
    if (std::string(option->keyword) == "password" ||
        std::string(option->keyword) == "sslpassword") {
      PQconninfoFree(options);
      return InlinePassword(scheme);
    }
    out.params.emplace_back(option->keyword, option->val);
  }
  PQconninfoFree(options);
  return out;
}

}  // namespace sluice::supervisor
