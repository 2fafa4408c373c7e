// Process-level fault scenarios of the task workers: kill -9 while reading,
// crashes at the persist, push and publish boundaries (fault points armed
// while ingesting), each followed by a restart on the same port and data dir;
// a worker killed for good, whose replicas are replaced elsewhere, and one
// that comes back without its disk. Every scenario ends with everything
// produced committed and the exactly-once audit.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
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
  absl::StatusOr<int> worker = s->WaitForWorkerWithTasks();
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
  absl::StatusOr<int> worker = s->WaitForWorkerWithTasks();
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
  absl::StatusOr<int> worker = s->WaitForWorkerWithTasks();
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
            live += t.state() == v1::TASK_STATE_READING || t.state() == v1::TASK_STATE_PAUSED ? 1 : 0;
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
  absl::StatusOr<int> worker = s->WaitForWorkerWithTasks();
  ASSERT_TRUE(worker.ok()) << worker.status() << "\n" << s->Context();
  const std::string victim = cluster::WorkerName(*worker);
  ASSERT_OK(s->cluster().Kill(victim, SIGKILL));
  ASSERT_OK(s->DeleteWorkerData(*worker));
  ASSERT_OK(s->RestartAndWait(victim));
  ASSERT_OK(s->Finish());
}

// Issue 12, point 8: a frozen worker (SIGSTOP) does not stall placement.
// Four workers, one group of two replicas (on the two smallest worker ids).
// An idle worker is frozen, the one a replacement would go to first (the
// most free slots, the smallest id), and at once one replica's worker is
// killed for good. Its replica is given up at the next checkpoint round;
// the replacement must run on the other idle worker within 5 s of the kill.
// Before, RunTask went to the frozen worker on the datasource's loop (two
// attempts of the chat timeout, every checkpoint round waiting behind
// them), and only then elsewhere.
TEST(WorkerFaults, AFrozenWorkerDoesNotTakeTheReplacementReplica) {
  ScenarioOptions options;
  options.name = "frozen_worker_replacement";
  options.seed = 17;
  options.workers = 4;
  options.task_count = 1;
  options.replicas = 2;
  // Lost after 8 s of silence (the cluster's default is 3 s): the frozen
  // worker stays alive, to the registry, for the whole replacement.
  options.extra_flags[cluster::kSupervisor] = {"--min_worker_lost_timeout_ms=8000"};
  std::unique_ptr<FaultScenario> s = StartScenario(options);
  ASSERT_NE(s, nullptr);
  s->StartProducing(kRecords, kProduceFor);
  ASSERT_OK(s->WaitUntilCommittedSequences(1));

  auto live_workers = [&]() -> absl::StatusOr<std::set<std::string>> {
    absl::StatusOr<v1::SupervisorStatus> status = s->Status();
    if (!status.ok()) return status.status();
    std::set<std::string> out;
    for (const v1::TaskGroupStatus& g : status->active_groups()) {
      for (const v1::TaskSummary& t : g.tasks()) {
        if (t.state() != v1::TASK_STATE_SUCCESS && t.state() != v1::TASK_STATE_FAILED && t.state() != v1::TASK_STATE_STOPPED) {
          out.insert(t.worker_id());
        }
      }
    }
    return out;
  };
  absl::StatusOr<std::set<std::string>> holders = live_workers();
  ASSERT_TRUE(holders.ok()) << holders.status();
  ASSERT_EQ(holders->size(), 2u) << s->Context();
  const std::string victim = *holders->begin();
  std::vector<std::string> idle;
  for (int i = 0; i < options.workers; ++i) {
    if (!holders->count(cluster::WorkerName(i))) idle.push_back(cluster::WorkerName(i));
  }
  ASSERT_EQ(idle.size(), 2u);
  const std::string frozen = idle[0];
  const std::string healthy = idle[1];
  ASSERT_OK(s->cluster().Kill(frozen, SIGSTOP));
  ASSERT_OK(s->cluster().Kill(victim, SIGKILL));
  const absl::Time killed = absl::Now();

  absl::Time running;
  const absl::Status replaced = s->WaitUntil(
      absl::StrCat("the replacement of ", victim, "'s replica reading on ", healthy),
      absl::Seconds(30), [&]() -> absl::StatusOr<bool> {
        absl::StatusOr<v1::SupervisorStatus> status = s->Status();
        if (!status.ok()) return status.status();
        running = absl::Now();
        for (const v1::TaskGroupStatus& g : status->active_groups()) {
          for (const v1::TaskSummary& t : g.tasks()) {
            if (t.worker_id() == healthy && (t.state() == v1::TASK_STATE_READING || t.state() == v1::TASK_STATE_PAUSED)) {
              return true;
            }
          }
        }
        return false;
      });
  ASSERT_OK(s->cluster().Kill(frozen, SIGCONT));
  ASSERT_OK(replaced);
  const absl::Duration took = running - killed;
  std::printf("[frozen worker] %s frozen, %s killed: the replacement ran on %s %s after the kill\n",
              frozen.c_str(), victim.c_str(), healthy.c_str(), absl::FormatDuration(took).c_str());
  std::fflush(stdout);
  // The issue asks for 5 s. The code before this change took 4.9 s here
  // (RunTask to the frozen worker on the loop: 2 attempts, then elsewhere)
  // and about 1.2 s after it; 3.5 s tells the two apart with room for a
  // loaded machine.
  EXPECT_LT(took, absl::Milliseconds(3500)) << s->Context();
  ASSERT_OK(s->Finish());
}

}  // namespace
}  // namespace sluice::fault
