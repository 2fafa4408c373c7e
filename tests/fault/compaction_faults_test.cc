// Process-level scenarios of compaction while ingesting (docs/compaction.md):
// the supervisor, which runs the compactions, killed between a compaction's
// push and its commit; compactions whose commit keeps losing the race to the
// appends of ingestion (the table moved: staged again on top); an interval
// compacted while a reset re-ingests records into it. Each ends with
// everything produced committed and the exactly-once audit (a compacted
// segment accounts for the ranges it merged, once), and for an Iceberg
// datasource the table read by pyiceberg and DuckDB, every replace snapshot
// keeping its parent's sum(count).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/iceberg_table_check.h"
#include "tests/fault/scenario_test_util.h"

namespace sluice::fault {
namespace {

constexpr int64_t kCompactionRecords = 6000;

// Every interval is eligible at once (the records are hours old), looked at
// every second: compactions run while the same intervals are appended to.
ScenarioOptions CompactionOptions(const std::string& name, uint64_t seed, bool iceberg) {
  ScenarioOptions options;
  options.name = name;
  options.seed = seed;
  options.iceberg_table = iceberg;
  v1::CompactionConfig compaction;
  compaction.set_skip_offset_from_latest("PT0S");
  compaction.set_period("PT1S");
  compaction.set_target_rows_per_segment(1000000);
  options.compaction = compaction;
  return options;
}

absl::Status WaitForCompactions(FaultScenario& s, int64_t n) {
  return s.WaitUntil(absl::StrCat(n, " compaction(s) committed"), absl::Seconds(90),
                     [&]() -> absl::StatusOr<bool> {
                       absl::StatusOr<v1::SupervisorStatus> status = s.Status();
                       if (!status.ok()) return status.status();
                       return status->compaction().compactions() >= n;
                     });
}


// Nothing left to compact and the table unmoved since the previous poll
// (compactions go on after everything is committed: the table is read once
// they are done).
absl::Status WaitForCompactionToSettle(FaultScenario& s) {
  std::string previous;
  return s.WaitUntil("compaction settled", absl::Seconds(90), [&]() -> absl::StatusOr<bool> {
    absl::StatusOr<v1::SupervisorStatus> status = s.Status();
    if (!status.ok()) return status.status();
    const std::string location = status->iceberg_table().metadata_location();
    bool settled = !status->compaction().has_running() && location == previous;
    for (const v1::PendingCompaction& pending : status->compaction().pending()) {
      settled = settled && pending.reason() != "queued" &&
                !absl::StartsWith(pending.reason(), "waiting for handoff");
    }
    previous = location;
    if (!settled) absl::SleepFor(absl::Seconds(2));
    return settled;
  });
}

// The compacted segments are in deep storage, nothing is committed: the
// inputs stay used. The restarted supervisor compacts again and commits; the
// table and the segments hold every record once.
TEST(CompactionFaults, KillSupervisorBetweenCompactionPushAndCommit) {
  std::unique_ptr<FaultScenario> s =
      StartScenario(CompactionOptions("compaction_kill_supervisor_after_push", 71, true));
  ASSERT_NE(s, nullptr);
  s->StartProducing(kCompactionRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(3));
  ASSERT_OK(s->Arm(cluster::kSupervisor, kCompactionAfterPush));
  ASSERT_OK(s->WaitForInjectedCrash(cluster::kSupervisor, kCompactionAfterPush));
  ASSERT_OK(s->RestartAndWait(cluster::kSupervisor));
  ASSERT_OK(WaitForCompactions(*s, 1));
  ASSERT_OK(s->Finish());
  ASSERT_OK(WaitForCompactionToSettle(*s));
  ASSERT_OK(CheckIcebergTable(*s, {.min_replace_snapshots = 1}));
}

// Every staged compaction waits 1.5 s before its commit while the groups
// keep publishing: appends win the swap, the compaction stages its replace
// again on top of them (keeping their files) and commits.
TEST(CompactionFaults, CompactionsLoseTheRaceToAppendsAndStageAgain) {
  ScenarioOptions options = CompactionOptions("compaction_race_with_appends", 72, true);
  options.extra_flags[cluster::kSupervisor] = {
      absl::StrCat("--fault_points=", kCompactionBeforeCommit, "=delay:1500@*")};
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kCompactionRecords, kProduceFor);
  ASSERT_OK(WaitForCompactions(*s, 1));
  ASSERT_OK(s->Finish());
  absl::StatusOr<v1::SupervisorStatus> status = s->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  const int attempts =
      CountInLog(*s, cluster::kSupervisor, absl::StrCat("[fault] ", kCompactionBeforeCommit));
  std::printf("[compaction race] %d commit attempts for %lld compactions\n", attempts,
              static_cast<long long>(status->compaction().compactions()));
  EXPECT_GT(attempts, status->compaction().compactions()) << "no compaction lost a race";
  ASSERT_OK(WaitForCompactionToSettle(*s));
  ASSERT_OK(CheckIcebergTable(*s, {.min_replace_snapshots = 1}));
}

// Partition 0 rewound to 0 after intervals were compacted: its records are
// ingested a second time into the same intervals, beside the compacted
// segments that already hold them once; compaction goes on, and the audit
// across the reset finds each range exactly as often as it was committed.
TEST(CompactionFaults, CompactionAcrossAResetThatReingestsAnInterval) {
  std::unique_ptr<FaultScenario> s =
      StartScenario(CompactionOptions("compaction_across_reset", 73, false));
  ASSERT_NE(s, nullptr);
  s->StartProducing(kCompactionRecords, kProduceFor);
  ASSERT_OK(WaitForCompactions(*s, 1));
  const PartitionOffsets reset = {{0, 0}};
  ASSERT_OK(s->ResetOffsets(reset));
  ASSERT_OK(s->Finish(reset));
  absl::StatusOr<v1::SupervisorStatus> status = s->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->compaction().last_error(), "") << s->Context();
}

}  // namespace
}  // namespace sluice::fault
