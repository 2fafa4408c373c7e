// Which metadata-store backend a supervisor test runs against.
//
// The environment variable SLUICE_TEST_METADATA_STORE=postgresql (set by the
// test targets tagged `postgresql`) selects PostgreSQL: the test process then
// starts one private server (tests/testing/postgres_server.h) on first use
// and gives every store directory its own fresh database. Unset or "sqlite":
// <dir>/metadata.db.
#ifndef SLUICE_SUPERVISOR_TESTING_TEST_STORE_H_
#define SLUICE_SUPERVISOR_TESTING_TEST_STORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "supervisor/store/metadata_store.h"
#include "tests/testing/postgres_server.h"

namespace sluice::supervisor::testing {

enum class TestBackend { kSqlite, kPostgres };

// "sqlite" or "postgresql" (test names).
std::string BackendName(TestBackend backend);

// From SLUICE_TEST_METADATA_STORE.
TestBackend TestStoreBackend();

// The backends a parameterized store test covers in this target: SQLite,
// plus PostgreSQL when selected.
std::vector<TestBackend> TestBackends();

// Options of the store for `dir` on `backend`: the same `dir` gives the same
// store (a second connection), a new one an empty store.
absl::StatusOr<MetadataStoreOptions> TestStoreOptions(TestBackend backend, const std::string& dir);

// The process's PostgreSQL test server, started on first use.
absl::StatusOr<sluice::testing::PostgresServer*> SharedTestPostgres();

}  // namespace sluice::supervisor::testing

#endif  // SLUICE_SUPERVISOR_TESTING_TEST_STORE_H_
