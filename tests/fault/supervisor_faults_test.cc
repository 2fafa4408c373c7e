// Process-level fault scenarios of the supervisor: kill -9 mid-run, crashes
// inside a checkpoint round (replicas paused; checkpoint recorded but not yet
// sent) and right after a publish commit, each restarted on the same port and
// metadata store while the workers keep running. Every scenario ends with
// everything produced committed and the exactly-once audit.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/fault/fault_scenario.h"
#include "tests/fault/scenario_test_util.h"

namespace sluice::fault {
namespace {

void CrashSupervisorAtPointAndRestart(const std::string& name, const std::string& point,
                                      uint64_t seed) {
  std::unique_ptr<FaultScenario> s = StartScenario(name, seed);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(1));
  ASSERT_OK(s->Arm(cluster::kSupervisor, point));
  ASSERT_OK(s->WaitForInjectedCrash(cluster::kSupervisor, point));
  ASSERT_OK(s->RestartAndWait(cluster::kSupervisor));
  ASSERT_OK(s->Finish());
}

// Down for a few seconds while the tasks read: their checkpoint requests and
// publishes fail and are retried; the restarted supervisor adopts the tasks.
TEST(SupervisorFaults, KillMidRunAndRestart) {
  std::unique_ptr<FaultScenario> s = StartScenario("kill_supervisor_mid_run", 21);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  ASSERT_OK(s->cluster().Kill(cluster::kSupervisor, SIGKILL));
  absl::SleepFor(absl::Seconds(3));  // the outage (nothing is asserted meanwhile)
  ASSERT_OK(s->RestartAndWait(cluster::kSupervisor));
  ASSERT_OK(s->Finish());
}

// Every replica paused, nothing recorded: the tasks resume by themselves (a
// pause without follow-up ends) or are resumed when adopted.
TEST(SupervisorFaults, CrashDuringACheckpointRoundWithReplicasPaused) {
  CrashSupervisorAtPointAndRestart("crash_supervisor_replicas_paused",
                                   "supervisor.checkpoint.after_pause", 22);
}

// The checkpoint is in the metadata store, no replica knows it: the restarted
// supervisor sends the end offsets they missed when it adopts them.
TEST(SupervisorFaults, CrashDuringACheckpointRoundAfterRecordingIt) {
  CrashSupervisorAtPointAndRestart("crash_supervisor_checkpoint_recorded",
                                   "supervisor.checkpoint.before_set_end_offsets", 23);
}

// The publish is committed, its answer lost: the task's retry is told the
// sequence is committed with its segments.
TEST(SupervisorFaults, CrashRightAfterAPublishCommit) {
  CrashSupervisorAtPointAndRestart("crash_supervisor_after_publish_commit",
                                   "supervisor.publish.after_commit", 24);
}

}  // namespace
}  // namespace sluice::fault
