#include "supervisor/testing/test_store.h"

#include <stdlib.h>

#include <map>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace sluice::supervisor::testing {
namespace {

struct Shared {
  absl::Mutex mu;
  std::unique_ptr<sluice::testing::PostgresServer> server ABSL_GUARDED_BY(mu);
  absl::Status start_error ABSL_GUARDED_BY(mu);
  bool started ABSL_GUARDED_BY(mu) = false;
  // Store directory -> its database's URL.
  std::map<std::string, std::string> databases ABSL_GUARDED_BY(mu);
};

// Destroyed at exit, which stops the server and removes its directory.
Shared& GetShared() {
  static Shared shared;
  return shared;
}

absl::StatusOr<sluice::testing::PostgresServer*> ServerLocked(Shared& shared)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(shared.mu) {
  if (!shared.started) {
    shared.started = true;
    auto server = sluice::testing::PostgresServer::Start();
    if (server.ok()) {
      shared.server = std::move(*server);
    } else {
      shared.start_error = server.status();
    }
  }
  if (!shared.start_error.ok()) return shared.start_error;
  return shared.server.get();
}

}  // namespace

std::string BackendName(TestBackend backend) {
  return backend == TestBackend::kSqlite ? "sqlite" : "postgresql";
}

TestBackend TestStoreBackend() {
  const char* value = getenv("SLUICE_TEST_METADATA_STORE");
  return value != nullptr && std::string(value) == "postgresql" ? TestBackend::kPostgres
                                                                : TestBackend::kSqlite;
}

std::vector<TestBackend> TestBackends() {
  if (TestStoreBackend() == TestBackend::kPostgres) {
    return {TestBackend::kSqlite, TestBackend::kPostgres};
  }
  return {TestBackend::kSqlite};
}

absl::StatusOr<sluice::testing::PostgresServer*> SharedTestPostgres() {
  Shared& shared = GetShared();
  absl::MutexLock lock(&shared.mu);
  return ServerLocked(shared);
}

absl::StatusOr<MetadataStoreOptions> TestStoreOptions(TestBackend backend,
                                                      const std::string& dir) {
  MetadataStoreOptions options;
  if (backend == TestBackend::kSqlite) {
    options.path = dir + "/metadata.db";
    return options;
  }
  Shared& shared = GetShared();
  absl::MutexLock lock(&shared.mu);
  auto it = shared.databases.find(dir);
  if (it == shared.databases.end()) {
    absl::StatusOr<sluice::testing::PostgresServer*> server = ServerLocked(shared);
    if (!server.ok()) return server.status();
    absl::StatusOr<std::string> url =
        (*server)->CreateDatabase(absl::StrCat("store_", shared.databases.size()));
    if (!url.ok()) return url.status();
    it = shared.databases.emplace(dir, *url).first;
  }
  options.postgres_url = it->second;
  return options;
}

}  // namespace sluice::supervisor::testing
