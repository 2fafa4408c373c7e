// The randomized soak, on demand (not part of the test suite):
//
//   bazel run //tests/fault:soak -- --iterations=20            # a new seed, printed
//   bazel run //tests/fault:soak -- --iterations=20 --seed=42  # replay a run
//
// Exit code 0 when every iteration's exactly-once audit passed, 1 otherwise
// (the report, the seed and where the logs are on stderr), 2 for bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <iostream>
#include <random>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "tests/fault/soak_runner.h"

DEFINE_uint64(seed, 0, "seed of the plan (0: draw one and print it)");
DEFINE_int32(iterations, 10, "iterations (each: produce, inject, heal, audit)");
DEFINE_int32(workers, 3, "task workers");
DEFINE_int32(max_faults, 3, "most faults per iteration");
DEFINE_int64(min_records, 2000, "fewest records produced per iteration");
DEFINE_int64(max_records, 10000, "most records produced per iteration");
DEFINE_int32(max_down_seconds, 6, "longest outage of any kind");
DEFINE_string(kinds, "",
              "comma-separated fault kinds to draw from (default all): kill-worker, "
              "kill-worker-for-good, kill-supervisor, crash-worker-at-point, "
              "crash-supervisor-at-point, freeze-worker, broker-outage, deep-storage-outage, "
              "suspend-resume, lose-worker-disk, change-spec");
DEFINE_string(task_duration, "PT20S", "taskDuration of the spec (roll-overs during the soak)");
DEFINE_string(name, "", "directory name under $TEST_TMPDIR or /tmp (default soak-<seed>)");

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  // The soak's own lines on stdout; glog (the test producer's Kafka errors
  // during broker outages, ...) to its files only.
  FLAGS_logtostderr = false;
  FLAGS_stderrthreshold = google::FATAL;

  sluice::fault::SoakOptions options;
  options.seed = FLAGS_seed != 0 ? FLAGS_seed : std::random_device()();
  options.iterations = FLAGS_iterations;
  options.plan.workers = FLAGS_workers;
  options.plan.max_faults_per_iteration = FLAGS_max_faults;
  options.plan.min_records = FLAGS_min_records;
  options.plan.max_records = FLAGS_max_records;
  options.plan.max_down_for = absl::Seconds(FLAGS_max_down_seconds);
  options.task_duration = FLAGS_task_duration;
  options.name = FLAGS_name;
  if (options.iterations < 1 || options.plan.workers < 2 || options.plan.max_faults_per_iteration < 1 ||
      options.plan.min_records < 1 || options.plan.max_records < options.plan.min_records) {
    std::cerr << "soak: --iterations, --max_faults, --min_records >= 1, --workers >= 2 and "
                 "--max_records >= --min_records\n";
    return 2;
  }
  for (absl::string_view name : absl::StrSplit(FLAGS_kinds, ',', absl::SkipEmpty())) {
    bool known = false;
    for (int k = 0; k <= static_cast<int>(sluice::fault::FaultKind::kChangeSpec); ++k) {
      const auto kind = static_cast<sluice::fault::FaultKind>(k);
      if (name == sluice::fault::FaultKindName(kind)) {
        options.plan.kinds.push_back(kind);
        known = true;
      }
    }
    if (!known) {
      std::cerr << "soak: unknown fault kind \"" << name << "\" in --kinds\n";
      return 2;
    }
  }
  const absl::Status result = sluice::fault::RunSoak(options, &std::cout);
  if (!result.ok()) {
    std::cout.flush();
    std::cerr << "soak FAILED: " << result.message() << "\n";
    return 1;
  }
  return 0;
}
