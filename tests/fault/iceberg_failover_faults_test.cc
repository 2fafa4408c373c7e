// An Iceberg datasource (spec icebergTable) under a leader failover: two
// supervisors over one PostgreSQL metadata store, segments and table in
// file:// deep storage. The leader dies with a snapshot staged and its
// commit transaction not run; the standby takes the lease over, the tasks
// publish to it, and it stages the sequence again on the catalog's current
// document. Ends with the exactly-once audit and the table read by
// pyiceberg (its SqlCatalog on the PostgreSQL store) and DuckDB
// (iceberg_table_check.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/iceberg_table_check.h"
#include "tests/fault/scenario_test_util.h"
#include "tests/testing/postgres_server.h"

namespace sluice::fault {
namespace {

TEST(IcebergFailoverFaults, LeaderKilledBetweenStageAndCommit) {
  absl::StatusOr<std::unique_ptr<sluice::testing::PostgresServer>> postgres =
      sluice::testing::PostgresServer::Start();
  ASSERT_TRUE(postgres.ok()) << "PostgreSQL did not start: " << postgres.status();
  absl::StatusOr<std::string> url = (*postgres)->CreateDatabase("iceberg_failover");
  ASSERT_TRUE(url.ok()) << url.status();
  ScenarioOptions options;
  options.name = "iceberg_leader_killed_after_stage";
  options.seed = 64;
  options.supervisors = 2;
  options.workers = 3;
  options.metadata_store_url = *url;
  options.iceberg_table = true;
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  // Records still arrive after the standby took the lease (6 s) over.
  s->StartProducing(8000, absl::Seconds(12));
  ASSERT_OK(s->WaitUntilCommittedSequences(1));
  absl::StatusOr<std::string> leader = s->cluster().LeaderSupervisor(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();
  const std::string standby = *leader == cluster::SupervisorName(0)
                                  ? cluster::SupervisorName(1)
                                  : cluster::SupervisorName(0);
  ASSERT_OK(s->Arm(*leader, kAfterIcebergStage));
  ASSERT_OK(s->WaitForInjectedCrash(*leader, kAfterIcebergStage));
  // At once: the standby cannot lead (nor stage) before the lease runs out.
  std::vector<StagedMetadata> staged;
  ASSERT_OK(s->cluster().Running(standby) ? CopyNewestMetadata(*s, &staged)
                                          : absl::InternalError(standby + " is not running"));
  ASSERT_OK(s->WaitUntil(absl::StrCat(standby, " leads after ", *leader, " died"),
                         absl::Seconds(60),
                         [&]() -> absl::StatusOr<bool> { return s->cluster().Leads(standby); }));
  // The old leader comes back, as a standby.
  ASSERT_OK(s->RestartAndWait(*leader));
  ASSERT_OK(s->Finish());
  ASSERT_OK(CheckIcebergTable(*s, {.staged_at_fault = staged, .min_restaged_sequences = 1}));
}

}  // namespace
}  // namespace sluice::fault
