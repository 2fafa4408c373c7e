// The randomized soak's plan: for each iteration, how many records to
// produce and which faults to inject when, all drawn from one seed. The same
// seed gives the same plan (the processes' own timing still varies, so a
// replay hits the same faults at the same moments of the run, not
// necessarily the same interleaving inside the processes).
//
//   SoakPlanOptions options;
//   options.workers = 3;
//   std::vector<SoakIteration> plan = MakeSoakPlan(seed, /*iterations=*/20, options);
//   for (const SoakIteration& it : plan) std::cout << Describe(it) << "\n";
#ifndef SLUICE_TESTS_FAULT_SOAK_PLAN_H_
#define SLUICE_TESTS_FAULT_SOAK_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace sluice::fault {

enum class FaultKind {
  // kill -9 a worker, restart it after `down_for` (same port and data dir).
  kKillWorker,
  // kill -9 a worker and restart it only at the end of the iteration: its
  // replicas are replaced elsewhere meanwhile.
  kKillWorkerForGood,
  // kill -9 the supervisor, restart it after `down_for`.
  kKillSupervisor,
  // Restart a worker with `fault_point`=crash: it crashes at the next hit of
  // that point (or is restarted cleanly after `down_for` if it never gets
  // there), then comes back without it.
  kCrashWorkerAtPoint,
  // The same for the supervisor.
  kCrashSupervisorAtPoint,
  // SIGSTOP a worker (a hung process) and SIGCONT it after `down_for`.
  kFreezeWorker,
  // The dev broker's broker 1 down for `down_for`, then up.
  kBrokerOutage,
  // Deep storage refuses every push for `down_for`.
  kDeepStorageOutage,
  // Suspend the supervisor, resume it after `down_for`.
  kSuspendResume,
  // kill -9 a worker and delete its data directory (a pod that lost its
  // volume); it comes back empty after `down_for`.
  kLoseWorkerDisk,
  // Submit the spec again with another maxRowsPerSegment (a new spec
  // version: the running groups finish and publish, new ones start).
  kChangeSpec,
};

const char* FaultKindName(FaultKind kind);

struct FaultStep {
  // From the start of the iteration's produce phase.
  absl::Duration at;
  FaultKind kind;
  // Worker index for the worker faults.
  int worker = 0;
  absl::Duration down_for;
  // For kCrash*AtPoint: the fault point's name.
  std::string fault_point;
};

struct SoakIteration {
  int index = 0;
  // Records produced during the iteration, spread evenly over `produce_for`
  // (a fraction of them malformed).
  int64_t records = 0;
  absl::Duration produce_for;
  // Sorted by `at`.
  std::vector<FaultStep> steps;
};

struct SoakPlanOptions {
  int workers = 3;
  int64_t min_records = 2000;
  int64_t max_records = 10000;
  absl::Duration min_produce_for = absl::Seconds(3);
  absl::Duration max_produce_for = absl::Seconds(10);
  int max_faults_per_iteration = 3;
  // Longest outage of any kind.
  absl::Duration max_down_for = absl::Seconds(6);
  // Which kinds may be drawn (default: all).
  std::vector<FaultKind> kinds;
};

// Fault points the kCrash*AtPoint steps choose from.
const std::vector<std::string>& WorkerCrashPoints();
const std::vector<std::string>& SupervisorCrashPoints();

// The plan of `iterations` iterations drawn from `seed`. Deterministic.
std::vector<SoakIteration> MakeSoakPlan(uint64_t seed, int iterations,
                                        const SoakPlanOptions& options);

// One line per step, e.g.
// "iteration 3: 5120 records over 6.2s; +1.5s kill -9 worker-2 (back after 2.1s); ...".
std::string Describe(const SoakIteration& iteration);

}  // namespace sluice::fault

#endif  // SLUICE_TESTS_FAULT_SOAK_PLAN_H_
