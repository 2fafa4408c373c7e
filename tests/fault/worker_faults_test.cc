// Process-level fault scenarios of the task workers: kill -9 while reading,
// crashes at the persist, push and publish boundaries (fault points armed
// while ingesting), each followed by a restart on the same port and data dir;
// a worker killed for good, whose replicas are replaced elsewhere, and one
// that comes back without its disk. Every scenario ends with everything
// produced committed and the exactly-once audit.
#include <gtest/gtest.h>
#include <signal.h>

#include "absl/strings/str_cat.h"
#include "tests/fault/fault_scenario.h"
#include "tests/fault/scenario_test_util.h"

namespace sluice::fault {
namespace {

// Arms `point` on a worker that is reading once ingestion is under way,
// waits for the crash, restarts the worker and lets the scenario finish.
void CrashWorkerAtPointAndRestart(const ScenarioOptions& options, const std::string& point) {
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(1));
  absl::StatusOr<int> worker = s->WorkerWithTasks();
  ASSERT_TRUE(worker.ok()) << worker.status() << "\n" << s->Context();
  const std::string victim = cluster::WorkerName(*worker);
  ASSERT_OK(s->Arm(victim, point));
  ASSERT_OK(s->WaitForInjectedCrash(victim, point));
  ASSERT_OK(s->RestartAndWait(victim));
  ASSERT_OK(s->Finish());
}

TEST(WorkerFaults, KillWhileReadingAndRestart) {
  std::unique_ptr<FaultScenario> s = StartScenario("kill_worker_while_reading", 11);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  absl::StatusOr<int> worker = s->WorkerWithTasks();
  ASSERT_TRUE(worker.ok()) << worker.status() << "\n" << s->Context();
  const std::string victim = cluster::WorkerName(*worker);
  ASSERT_OK(s->cluster().Kill(victim, SIGKILL));
  ASSERT_OK(s->RestartAndWait(victim));
  ASSERT_OK(s->Finish());
}

void CrashWorkerAtPointAndRestart(const std::string& name, const std::string& point,
                                  uint64_t seed) {
  ScenarioOptions options;
  options.name = name;
  options.seed = seed;
  CrashWorkerAtPointAndRestart(options, point);
}

// Spills written, restore point not yet: the restart deletes the orphan
// spills and re-reads from the previous restore point. With 15-minute
// segments (several per sequence) and rows before a rejection window (thrown
// away, counted in the restore point too).
TEST(WorkerFaults, CrashWhilePersistingAndRestart) {
  ScenarioOptions options;
  options.name = "crash_worker_while_persisting";
  options.seed = 12;
  options.segment_granularity = "FIFTEEN_MINUTE";
  options.late_message_rejection_start = "2026-11-30T02:20:00Z";
  CrashWorkerAtPointAndRestart(options, "task.persist.after_spills");
}

// Segments pushed to deep storage, not published: the restart pushes a new
// copy under the next attempt key and publishes (or finds a replica did).
TEST(WorkerFaults, CrashBetweenPushAndPublishAndRestart) {
  CrashWorkerAtPointAndRestart("crash_worker_between_push_and_publish", "task.after_push", 13);
}

// The commit is done, the sequence list not rewritten: the restart must find
// the sequence committed and not publish it again.
TEST(WorkerFaults, CrashRightAfterPublishAndRestart) {
  CrashWorkerAtPointAndRestart("crash_worker_right_after_publish", "task.after_publish", 14);
}

// A worker gone for good: the supervisor sees it lost and replaces its
// replicas on the other workers; the replacements re-read from the first
// unpublished sequence.
TEST(WorkerFaults, KillOneReplicaForGoodAndTheReplacementTakesOver) {
  std::unique_ptr<FaultScenario> s = StartScenario("kill_worker_for_good", 15);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  absl::StatusOr<int> worker = s->WorkerWithTasks();
  ASSERT_TRUE(worker.ok()) << worker.status() << "\n" << s->Context();
  const std::string victim = cluster::WorkerName(*worker);
  ASSERT_OK(s->cluster().Kill(victim, SIGKILL));
  // Every group gets its replicas back on the two workers left.
  ASSERT_OK(s->WaitUntil(
      absl::StrCat("every group has 2 live replicas without ", victim), absl::Seconds(90),
      [&]() -> absl::StatusOr<bool> {
        absl::StatusOr<v1::SupervisorStatus> status = s->Status();
        if (!status.ok()) return status.status();
        if (status->active_groups_size() != 2) return false;
        for (const v1::TaskGroupStatus& g : status->active_groups()) {
          int live = 0;
          for (const v1::TaskSummary& t : g.tasks()) {
            if (t.worker_id() == victim) return false;
            live += t.state() == v1::READING || t.state() == v1::PAUSED ? 1 : 0;
          }
          if (live != 2) return false;
        }
        return true;
      }));
  ASSERT_OK(s->Finish());
}

// A worker comes back without its volume: it registers with no tasks, the
// supervisor kills the tasks it no longer reports and replaces them; the
// replacements re-read from the first unpublished sequence.
TEST(WorkerFaults, KillAndLoseTheDiskThenRestartEmpty) {
  std::unique_ptr<FaultScenario> s = StartScenario("kill_worker_lose_disk", 16);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(2));
  absl::StatusOr<int> worker = s->WorkerWithTasks();
  ASSERT_TRUE(worker.ok()) << worker.status() << "\n" << s->Context();
  const std::string victim = cluster::WorkerName(*worker);
  ASSERT_OK(s->cluster().Kill(victim, SIGKILL));
  ASSERT_OK(s->DeleteWorkerData(*worker));
  ASSERT_OK(s->RestartAndWait(victim));
  ASSERT_OK(s->Finish());
}

}  // namespace
}  // namespace sluice::fault
