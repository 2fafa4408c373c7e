#include "supervisor/store/metadata_store_url.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "supervisor/store/postgres_url.h"

namespace sluice::supervisor {

absl::Status ApplyMetadataStoreUrl(absl::string_view url, const std::string& data_dir,
                                   MetadataStoreOptions* options) {
  options->path.clear();
  options->postgres_url.clear();
  if (url.empty()) {
    options->path = absl::StrCat(data_dir, "/metadata.db");
    return absl::OkStatus();
  }
  if (absl::StartsWith(url, "sqlite://")) {
    absl::string_view path = url.substr(9);
    if (path.empty() || path[0] != '/' || path == "/") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--metadata_store ", url, ": an SQLite store is sqlite:///absolute/path/metadata.db"));
    }
    options->path = std::string(path);
    return absl::OkStatus();
  }
  if (absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://")) {
    // Parsed now so a bad URL fails at startup, with a message that never
    // repeats a password.
    SLUICE_RETURN_IF_ERROR(ParsePostgresUrl(url).status());
    options->postgres_url = std::string(url);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      "--metadata_store is sqlite:///path/metadata.db or postgresql://user@host:port/db");
}

}  // namespace sluice::supervisor
