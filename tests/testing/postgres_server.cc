#include "tests/testing/postgres_server.h"

#include <dirent.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace sluice::testing {
namespace {

absl::StatusOr<std::string> FindBinDir() {
  constexpr char kRoot[] = "/usr/lib/postgresql";
  std::vector<int> versions;
  if (DIR* dir = opendir(kRoot)) {
    while (dirent* entry = readdir(dir)) {
      const int version = std::atoi(entry->d_name);
      const std::string initdb = absl::StrCat(kRoot, "/", entry->d_name, "/bin/initdb");
      if (version > 0 && access(initdb.c_str(), X_OK) == 0) versions.push_back(version);
    }
    closedir(dir);
  }
  if (versions.empty()) {
    return absl::NotFoundError(
        "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run "
        "scripts/install_deps.sh (Debian packages postgresql-15, libpq-dev)");
  }
  return absl::StrCat(kRoot, "/", *std::max_element(versions.begin(), versions.end()), "/bin");
}

// `binary args...`, as `user` when root (setpriv execs it, so signals reach
// the server itself).
SubprocessOptions AsUser(bool root, uid_t uid, gid_t gid, const std::string& setpriv,
                         const std::string& binary, std::vector<std::string> args) {
  SubprocessOptions options;
  if (root) {
    options.binary = setpriv;
    options.args = {absl::StrCat("--reuid=", uid), absl::StrCat("--regid=", gid),
                    "--clear-groups", "--", binary};
    options.args.insert(options.args.end(), args.begin(), args.end());
  } else {
    options.binary = binary;
    options.args = std::move(args);
  }
  return options;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    PostgresServerOptions options) {
  std::string bin_dir = options.bin_dir;
  if (bin_dir.empty()) {
    absl::StatusOr<std::string> found = FindBinDir();
    if (!found.ok()) return found.status();
    bin_dir = *found;
  }
  const bool root = geteuid() == 0;
  uid_t uid = geteuid();
  gid_t gid = getegid();
  std::string setpriv;
  if (root) {
    const passwd* user = getpwnam(options.os_user.c_str());
    if (user == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "running as root, and initdb refuses root: the system user ", options.os_user,
          " the test server runs as does not exist (scripts/install_deps.sh creates it: "
          "useradd --system ", options.os_user, ")"));
    }
    uid = user->pw_uid;
    gid = user->pw_gid;
    absl::StatusOr<std::string> found = FindInPath("setpriv");
    if (!found.ok()) return absl::FailedPreconditionError("setpriv (util-linux) is missing");
    setpriv = *found;
  }

  std::unique_ptr<PostgresServer> server(new PostgresServer());
  std::string tmpl = root ? std::string("/tmp/sluice-pg.XXXXXX")
                          : absl::StrCat(TestTmpDir(), "/sluice-pg.XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", tmpl, " failed"));
  }
  server->dir_ = tmpl;
  if (root && chown(server->dir_.c_str(), uid, gid) != 0) {
    return absl::InternalError(absl::StrCat("chown ", server->dir_, " failed"));
  }
  const std::string data = server->dir_ + "/data";

  SubprocessOptions initdb =
      AsUser(root, uid, gid, setpriv, bin_dir + "/initdb",
             {"-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale",
              "--no-sync", "--no-instructions"});
  initdb.working_dir = server->dir_;
  initdb.env["LC_ALL"] = "C";
  CapturedRun ran = RunToCompletion(initdb, absl::Seconds(120));
  if (!ran.ok()) {
    return absl::InternalError(absl::StrCat("initdb failed: ", ran.Describe()));
  }

  absl::StatusOr<int> port = PickFreePort();
  if (!port.ok()) return port.status();
  server->port_ = *port;
  SubprocessOptions postgres = AsUser(
      root, uid, gid, setpriv, bin_dir + "/postgres",
      {"-D", data, "-h", "127.0.0.1", "-p", std::to_string(server->port_), "-k", server->dir_,
       "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c",
       "max_connections=200", "-c", "shared_buffers=32MB", "-c", "max_pred_locks_per_transaction=256"});
  postgres.working_dir = server->dir_;
  postgres.name = "postgres";
  postgres.env["LC_ALL"] = "C";
  absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(postgres);
  if (!process.ok()) return process.status();
  server->process_ = std::move(*process);

  // Accepting connections, not only listening (it listens while starting up).
  const std::string conninfo =
      absl::StrCat("host=127.0.0.1 port=", server->port_, " user=postgres dbname=postgres");
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (PQping(conninfo.c_str()) != PQPING_OK) {
    if (!server->process_->Running()) {
      return absl::InternalError(absl::StrCat("postgres exited while starting: ",
                                              server->process_->StderrTail()));
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("postgres did not accept connections: ",
                                                      server->process_->StderrTail()));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return server;
}

PostgresServer::~PostgresServer() {
  Stop().IgnoreError();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

absl::Status PostgresServer::Stop() {
  if (process_ == nullptr || !process_->Running()) return absl::OkStatus();
  // SIGINT: fast shutdown (disconnect clients, then stop).
  if (absl::Status s = process_->Signal(SIGINT); !s.ok()) return s;
  absl::StatusOr<ExitStatus> exit = process_->Wait(absl::Seconds(30));
  if (!exit.ok()) return process_->Kill().status();
  return absl::OkStatus();
}

std::string PostgresServer::Url(const std::string& database) const {
  return absl::StrCat("postgresql://postgres@127.0.0.1:", port_, "/", database);
}

absl::Status PostgresServer::Exec(const std::string& database, const std::string& sql) {
  const std::string conninfo =
      absl::StrCat("host=127.0.0.1 port=", port_, " user=postgres dbname=", database);
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("connect to the test PostgreSQL: ", Trimmed(PQerrorMessage(conn))));
    PQfinish(conn);
    return status;
  }
  PGresult* result = PQexec(conn, sql.c_str());
  absl::Status status = absl::OkStatus();
  const ExecStatusType rc = PQresultStatus(result);
  if (rc != PGRES_COMMAND_OK && rc != PGRES_TUPLES_OK) {
    status = absl::InternalError(absl::StrCat(sql, ": ", Trimmed(PQerrorMessage(conn))));
  }
  PQclear(result);
  PQfinish(conn);
  return status;
}

absl::StatusOr<std::string> PostgresServer::CreateDatabase(const std::string& name) {
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return absl::InvalidArgumentError(absl::StrCat("database name ", name));
    }
  }
  if (absl::Status s = Exec("postgres", absl::StrCat("CREATE DATABASE ", name)); !s.ok()) {
    return s;
  }
  return Url(name);
}

}  // namespace sluice::testing
