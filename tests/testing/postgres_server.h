// Test helper: a private PostgreSQL server from Debian's packages
// (postgresql-15), in a fresh directory, listening on a free loopback port
// and a unix socket in that directory, stopped and removed on destruction.
//
//   ASSERT_OK_AND_ASSIGN(auto server, PostgresServer::Start());
//   ASSERT_OK_AND_ASSIGN(std::string url, server->CreateDatabase("case_1"));
//   // url = "postgresql://postgres@127.0.0.1:<port>/case_1"
//
// initdb and postgres refuse to run as root. As root (Bazel here), both run
// as the dedicated system user `sluice-pg` (scripts/install_deps.sh creates
// it), switched to with setpriv(1); the directory is then under /tmp and
// owned by that user (TEST_TMPDIR is under root's home, which it cannot
// enter). As any other user they run as that user.
//
// The cluster is throwaway: trust authentication on loopback for the
// superuser `postgres`, fsync off, C locale.
//
// Start() fails (FAILED_PRECONDITION / NOT_FOUND, saying what to install)
// when PostgreSQL or the user is missing: tests using it fail, never skip.
#ifndef SLUICE_TESTS_TESTING_POSTGRES_SERVER_H_
#define SLUICE_TESTS_TESTING_POSTGRES_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/testing/subprocess.h"

namespace sluice::testing {

struct PostgresServerOptions {
  // Where initdb and postgres are; empty: the newest /usr/lib/postgresql/*/bin.
  std::string bin_dir;
  // The user the server runs as when this process is root.
  std::string os_user = "sluice-pg";
};

class PostgresServer {
 public:
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(PostgresServerOptions options = {});
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // postgresql://postgres@127.0.0.1:<port>/<database>
  std::string Url(const std::string& database) const;
  // CREATE DATABASE `name` (letters, digits, underscores) and its URL.
  absl::StatusOr<std::string> CreateDatabase(const std::string& name);
  // Runs `sql` (no parameters) in `database` as the superuser.
  absl::Status Exec(const std::string& database, const std::string& sql);

  // Fast shutdown (SIGINT) and wait; the destructor does it too.
  absl::Status Stop();

 private:
  PostgresServer() = default;

  std::string dir_;
  int port_ = 0;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_POSTGRES_SERVER_H_
