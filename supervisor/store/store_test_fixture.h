// The fixtures of the store's beside-tests (test-only): a fresh directory
// per test, the store opened in it (SQLite, or on every backend the target
// covers: supervisor/testing/test_store.h), a plain connection for SQL the
// store would not run, and a spec to store.
#ifndef SLUICE_SUPERVISOR_STORE_STORE_TEST_FIXTURE_H_
#define SLUICE_SUPERVISOR_STORE_STORE_TEST_FIXTURE_H_

#include <stdlib.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "supervisor/store/metadata_store.h"
#include "supervisor/store/postgres.h"
#include "supervisor/store/postgres_url.h"
#include "supervisor/store/sqlite.h"
#include "supervisor/testing/test_store.h"

namespace sluice::supervisor::store_testing {

using testing::TestBackend;

// A store on SQLite in a fresh directory.
class MetadataStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
    std::string tmpl = base + "/store_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/metadata.db";
  }
  void TearDown() override { RemoveAll(dir_).IgnoreError(); }

  absl::StatusOr<std::unique_ptr<MetadataStore>> Open(int target_version = 0) {
    MetadataStoreOptions options;
    options.path = path_;
    options.target_schema_version = target_version;
    return MetadataStore::Open(options);
  }

  static v1::SupervisorSpec Spec(const std::string& topic) {
    v1::SupervisorSpec spec;
    spec.set_datasource("wiki");
    spec.mutable_io_config()->set_topic(topic);
    return spec;
  }

  std::string dir_;
  std::string path_;
};

// A store on each backend the test target covers (the tests every backend
// passes). Instantiate with INSTANTIATE_TEST_SUITE_P(Backends, <fixture>,
// ::testing::ValuesIn(testing::TestBackends()), BackendTestName).
class StoreTest : public MetadataStoreTest, public ::testing::WithParamInterface<TestBackend> {
 protected:
  absl::StatusOr<std::unique_ptr<MetadataStore>> Open(int target_version = 0) {
    SLUICE_ASSIGN_OR_RETURN(MetadataStoreOptions options,
                            testing::TestStoreOptions(GetParam(), dir_));
    options.target_schema_version = target_version;
    return MetadataStore::Open(options);
  }

  // A plain connection to the store's database, for SQL the store would not run.
  absl::StatusOr<std::unique_ptr<SqlConnection>> Raw() {
    SLUICE_ASSIGN_OR_RETURN(MetadataStoreOptions options,
                            testing::TestStoreOptions(GetParam(), dir_));
    if (GetParam() == TestBackend::kSqlite) {
      SLUICE_ASSIGN_OR_RETURN(auto db, SqliteDb::Open(options.path));
      return std::unique_ptr<SqlConnection>(std::move(db));
    }
    SLUICE_ASSIGN_OR_RETURN(PostgresConnectOptions connect, ParsePostgresUrl(options.postgres_url));
    SLUICE_ASSIGN_OR_RETURN(auto db, PostgresDb::Connect(connect));
    return std::unique_ptr<SqlConnection>(std::move(db));
  }
};

inline std::string BackendTestName(const ::testing::TestParamInfo<TestBackend>& info) {
  return testing::BackendName(info.param);
}

}  // namespace sluice::supervisor::store_testing

#endif  // SLUICE_SUPERVISOR_STORE_STORE_TEST_FIXTURE_H_
