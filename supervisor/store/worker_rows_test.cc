// Tests of worker_rows.h, the worker rows: a registration again replaces
// the worker's row, and the workers list by id; on SQLite, and on
// PostgreSQL in the _postgresql_test target.
#include "supervisor/store/worker_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/status_macros.h"
#include "supervisor/store/store_test_fixture.h"

namespace sluice::supervisor {
namespace {

using store_testing::TestBackend;
using WorkerRowsTest = store_testing::StoreTest;

WorkerRecord Worker(const std::string& id, const std::string& address, int32_t capacity,
                    int64_t registered_at_ms, int64_t last_seen_ms) {
  WorkerRecord w;
  w.worker_id = id;
  w.address = address;
  w.capacity = capacity;
  w.registered_at_ms = registered_at_ms;
  w.last_seen_ms = last_seen_ms;
  return w;
}

TEST_P(WorkerRowsTest, ARegistrationAgainReplacesTheRowAndWorkersListById) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    WorkerRows& workers = txn;
                    SLUICE_RETURN_IF_ERROR(workers.UpsertWorker(Worker("w2", "h2:1", 4, 10, 10)));
                    SLUICE_RETURN_IF_ERROR(workers.UpsertWorker(Worker("w1", "h1:1", 2, 20, 25)));
                    // w2 restarted elsewhere with more slots.
                    return workers.UpsertWorker(Worker("w2", "h3:7", 8, 30, 31));
                  })
                  .ok());
  std::vector<WorkerRecord> listed;
  ASSERT_TRUE((*store)
                  ->InTransaction([&](StoreTxn& txn) -> absl::Status {
                    SLUICE_ASSIGN_OR_RETURN(listed, txn.ListWorkerRecords());
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].worker_id, "w1");
  EXPECT_EQ(listed[0].address, "h1:1");
  EXPECT_EQ(listed[0].capacity, 2);
  EXPECT_EQ(listed[0].registered_at_ms, 20);
  EXPECT_EQ(listed[0].last_seen_ms, 25);
  EXPECT_EQ(listed[1].worker_id, "w2");
  EXPECT_EQ(listed[1].address, "h3:7");
  EXPECT_EQ(listed[1].capacity, 8);
  EXPECT_EQ(listed[1].registered_at_ms, 30);
  EXPECT_EQ(listed[1].last_seen_ms, 31);
}

INSTANTIATE_TEST_SUITE_P(Backends, WorkerRowsTest, ::testing::ValuesIn(testing::TestBackends()),
                         store_testing::BackendTestName);

}  // namespace
}  // namespace sluice::supervisor
