// Parses the PostgreSQL form of --metadata_store:
//
//   postgresql://user@host:port/dbname?sslmode=verify-full&password_file=/path
//
// Every libpq URI parameter is accepted (sslmode, sslrootcert, passfile,
// connect_timeout, options, ...), plus `password_file`: a file whose first
// line is the password (a mounted Kubernetes secret). Without it libpq finds
// the password itself, in PGPASSFILE / `passfile` / ~/.pgpass, or uses a
// certificate. A password written in the URL (user:secret@, ?password= or
// the client key's ?sslpassword=) is refused, and no message repeats it.
#ifndef SLUICE_SUPERVISOR_STORE_POSTGRES_URL_H_
#define SLUICE_SUPERVISOR_STORE_POSTGRES_URL_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice::supervisor {

struct PostgresConnectOptions {
  // libpq keyword/value pairs, from the URL; never "password".
  std::vector<std::pair<std::string, std::string>> params;
  // The password_file= parameter ("" when absent).
  std::string password_file;
  // The URL as given (it holds no password), for messages.
  std::string url;
  // SET lock_timeout for the session.
  int lock_timeout_ms = 5000;
};

// INVALID_ARGUMENT for a URL that is not postgresql:// or postgres://, that
// libpq cannot parse, or that carries a password.
absl::StatusOr<PostgresConnectOptions> ParsePostgresUrl(absl::string_view url);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_POSTGRES_URL_H_
