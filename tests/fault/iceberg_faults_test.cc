// Process-level fault scenarios of an Iceberg datasource (spec icebergTable,
// docs/iceberg.md) on the SQLite store: the supervisor killed between a
// snapshot staged in deep storage and its commit transaction, a worker
// killed between its push and its publish, and two replicas racing to
// publish the same sequence. Each ends with everything produced committed,
// the exactly-once audit of the native segments, and the table read by
// pyiceberg and DuckDB (iceberg_table_check.h): the segments' rows, every
// record once, one snapshot per committed sequence with contiguous Kafka
// ranges, every referenced file present.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/iceberg_table_check.h"
#include "tests/fault/scenario_test_util.h"

namespace sluice::fault {
namespace {

// Fewer records than the other suites: each publish also writes Parquet.
constexpr int64_t kIcebergRecords = 6000;
constexpr absl::Duration kIcebergProduceFor = absl::Seconds(6);

ScenarioOptions IcebergOptions(const std::string& name, uint64_t seed) {
  ScenarioOptions options;
  options.name = name;
  options.seed = seed;
  options.iceberg_table = true;
  return options;
}


// The supervisor dies with a snapshot staged (data files, manifest, list,
// metadata document written) and its transaction not run: the catalog and
// the offsets still point before it. The restarted supervisor stages the
// sequence again when a task retries its publish and commits it once; the
// document staged before the crash stays unreferenced.
TEST(IcebergFaults, KillSupervisorBetweenStageAndCommit) {
  std::unique_ptr<FaultScenario> s =
      StartScenario(IcebergOptions("iceberg_kill_supervisor_after_stage", 61));
  ASSERT_NE(s, nullptr);
  s->StartProducing(kIcebergRecords, kIcebergProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(1));
  ASSERT_OK(s->Arm(cluster::kSupervisor, kAfterIcebergStage));
  ASSERT_OK(s->WaitForInjectedCrash(cluster::kSupervisor, kAfterIcebergStage));
  std::vector<StagedMetadata> staged;
  ASSERT_OK(CopyNewestMetadata(*s, &staged));
  ASSERT_OK(s->RestartAndWait(cluster::kSupervisor));
  ASSERT_OK(s->Finish());
  ASSERT_OK(CheckIcebergTable(*s, {.staged_at_fault = staged, .min_restaged_sequences = 1}));
}

// Segments pushed, the publish not sent: the replica publishes the sequence
// (one snapshot), the restarted worker pushes again and is told it is
// committed; the table has its records once.
TEST(IcebergFaults, CrashWorkerBetweenPushAndPublish) {
  std::unique_ptr<FaultScenario> s =
      StartScenario(IcebergOptions("iceberg_crash_worker_after_push", 62));
  ASSERT_NE(s, nullptr);
  s->StartProducing(kIcebergRecords, kIcebergProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(1));
  absl::StatusOr<int> worker = s->WaitForWorkerWithTasks();
  ASSERT_TRUE(worker.ok()) << worker.status() << "\n" << s->Context();
  const std::string victim = cluster::WorkerName(*worker);
  ASSERT_OK(s->Arm(victim, "task.after_push"));
  ASSERT_OK(s->WaitForInjectedCrash(victim, "task.after_push"));
  ASSERT_OK(s->RestartAndWait(victim));
  ASSERT_OK(s->Finish());
  ASSERT_OK(CheckIcebergTable(*s));
}

// One group of two replicas; every staged snapshot waits 1.5 s before its
// transaction, so both replicas' publishes of a sequence stage it (two
// metadata documents for the same sequence in deep storage): one commits,
// the other is refused as already committed and its document stays
// unreferenced. The table has each sequence once.
TEST(IcebergFaults, TwoReplicasRaceToPublishTheSameSequence) {
  ScenarioOptions options = IcebergOptions("iceberg_replica_race", 63);
  options.task_count = 1;
  options.replicas = 2;
  options.extra_flags[cluster::kSupervisor] = {
      absl::StrCat("--fault_points=", kAfterIcebergStage, "=delay:1500@*")};
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kIcebergRecords, kIcebergProduceFor);
  ASSERT_OK(s->Finish());
  absl::StatusOr<v1::GetCommitLogResponse> log = s->CommitLog();
  ASSERT_TRUE(log.ok()) << log.status();
  const int stagings =
      CountInLog(*s, cluster::kSupervisor, absl::StrCat("[fault] ", kAfterIcebergStage));
  std::printf("[replica race] %d stagings for %d committed sequences\n", stagings,
              log->sequences_size());
  EXPECT_GT(stagings, log->sequences_size());
  ASSERT_OK(CheckIcebergTable(*s, {.min_restaged_sequences = 1}));
}

}  // namespace
}  // namespace sluice::fault
