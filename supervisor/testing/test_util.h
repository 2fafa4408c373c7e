// Small helpers shared by the supervisor's tests.
#ifndef SLUICE_SUPERVISOR_TESTING_TEST_UTIL_H_
#define SLUICE_SUPERVISOR_TESTING_TEST_UTIL_H_

#include <memory>
#include <string>

#include "sluice/v1/spec.pb.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor::testing {

// A fresh directory under $TEST_TMPDIR, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A valid, normalized spec for `datasource` reading `topic`, with short
// periods suitable for tests.
v1::SupervisorSpec TestSpec(const std::string& datasource, const std::string& topic = "events",
                            int task_count = 1, int replicas = 1);

// Opens (creating) the store of `dir`: <dir>/metadata.db, or a database of
// its own on the test PostgreSQL server when SLUICE_TEST_METADATA_STORE=
// postgresql (supervisor/testing/test_store.h); CHECK-fails on error.
std::unique_ptr<MetadataStore> OpenTestStore(const std::string& dir);

}  // namespace sluice::supervisor::testing

#endif  // SLUICE_SUPERVISOR_TESTING_TEST_UTIL_H_
