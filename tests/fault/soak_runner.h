// The randomized soak: one process cluster, one datasource, N iterations;
// each produces a batch of records while random faults (soak_plan.h) hit at
// random times, then heals everything, waits until every record is committed
// and runs the exactly-once audit over everything ingested so far. The seed
// is printed first; the same seed replays the same plan.
//
//   SoakOptions options;
//   options.seed = 42;
//   options.iterations = 20;
//   absl::Status result = RunSoak(options, &std::cout);
#ifndef SLUICE_TESTS_FAULT_SOAK_RUNNER_H_
#define SLUICE_TESTS_FAULT_SOAK_RUNNER_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tests/fault/soak_plan.h"

namespace sluice::fault {

struct SoakOptions {
  uint64_t seed = 1;
  int iterations = 10;
  SoakPlanOptions plan;
  int partitions = 4;
  int task_count = 2;
  int replicas = 2;
  // Task duration of the groups: short enough that roll-overs happen during
  // the soak too.
  std::string task_duration = "PT20S";
  // Longest wait for an iteration's records to be committed once healed.
  absl::Duration commit_timeout = absl::Minutes(5);
  // Name of the scenario directory under $TEST_TMPDIR (or /tmp).
  std::string name;
};

// Runs the soak, writing progress to `out`. OK when every iteration's audit
// passed; otherwise the first failure (with the audit report, the seed, the
// iteration and where the logs are).
absl::Status RunSoak(const SoakOptions& options, std::ostream* out);

}  // namespace sluice::fault

#endif  // SLUICE_TESTS_FAULT_SOAK_RUNNER_H_
