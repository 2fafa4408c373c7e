#include "tests/fault/soak_plan.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"

namespace sluice::fault {
namespace {

// Draws written out (not std::uniform_*_distribution, whose algorithms are
// the library's choice) so a seed means the same plan everywhere.
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  // Uniform in [0, n).
  int64_t Below(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) { return lo + Below(hi - lo + 1); }
  absl::Duration Between(absl::Duration lo, absl::Duration hi) {
    return absl::Milliseconds(
        Between(absl::ToInt64Milliseconds(lo), absl::ToInt64Milliseconds(hi)));
  }

 private:
  std::mt19937_64 rng_;
};

const std::vector<FaultKind>& AllKinds() {
  static const auto* kinds = new std::vector<FaultKind>{
      FaultKind::kKillWorker,         FaultKind::kKillWorkerForGood,
      FaultKind::kKillSupervisor,     FaultKind::kCrashWorkerAtPoint,
      FaultKind::kCrashSupervisorAtPoint, FaultKind::kFreezeWorker,
      FaultKind::kBrokerOutage,       FaultKind::kDeepStorageOutage,
      FaultKind::kSuspendResume,      FaultKind::kLoseWorkerDisk,
      FaultKind::kChangeSpec,
  };
  return *kinds;
}

std::string Seconds(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Milliseconds(d) / 1000, ".",
                      (absl::ToInt64Milliseconds(d) % 1000) / 100, "s");
}

}  // namespace

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kKillWorker:
      return "kill-worker";
    case FaultKind::kKillWorkerForGood:
      return "kill-worker-for-good";
    case FaultKind::kKillSupervisor:
      return "kill-supervisor";
    case FaultKind::kCrashWorkerAtPoint:
      return "crash-worker-at-point";
    case FaultKind::kCrashSupervisorAtPoint:
      return "crash-supervisor-at-point";
    case FaultKind::kFreezeWorker:
      return "freeze-worker";
    case FaultKind::kBrokerOutage:
      return "broker-outage";
    case FaultKind::kDeepStorageOutage:
      return "deep-storage-outage";
    case FaultKind::kSuspendResume:
      return "suspend-resume";
    case FaultKind::kLoseWorkerDisk:
      return "lose-worker-disk";
    case FaultKind::kChangeSpec:
      return "change-spec";
  }
  return "?";
}

const std::vector<std::string>& WorkerCrashPoints() {
  static const auto* points = new std::vector<std::string>{
      "task.while_reading", "task.persist.after_spills", "task.after_persist",
      "task.after_push",    "task.after_publish",
  };
  return *points;
}

const std::vector<std::string>& SupervisorCrashPoints() {
  static const auto* points = new std::vector<std::string>{
      "supervisor.checkpoint.after_pause",
      "supervisor.checkpoint.before_set_end_offsets",
      "supervisor.publish.before_commit",
      "supervisor.publish.after_commit",
  };
  return *points;
}

std::vector<SoakIteration> MakeSoakPlan(uint64_t seed, int iterations,
                                        const SoakPlanOptions& options) {
  Draw draw(seed);
  const std::vector<FaultKind>& kinds = options.kinds.empty() ? AllKinds() : options.kinds;
  std::vector<SoakIteration> plan;
  for (int i = 0; i < iterations; ++i) {
    SoakIteration it;
    it.index = i;
    it.records = draw.Between(options.min_records, options.max_records);
    it.produce_for = draw.Between(options.min_produce_for, options.max_produce_for);
    const int faults = static_cast<int>(draw.Between(1, options.max_faults_per_iteration));
    for (int f = 0; f < faults; ++f) {
      FaultStep step;
      step.kind = kinds[draw.Below(static_cast<int64_t>(kinds.size()))];
      step.at = draw.Between(absl::ZeroDuration(), it.produce_for);
      step.worker = static_cast<int>(draw.Below(options.workers));
      step.down_for = draw.Between(absl::Milliseconds(200), options.max_down_for);
      if (step.kind == FaultKind::kCrashWorkerAtPoint) {
        const auto& points = WorkerCrashPoints();
        step.fault_point = points[draw.Below(static_cast<int64_t>(points.size()))];
      } else if (step.kind == FaultKind::kCrashSupervisorAtPoint) {
        const auto& points = SupervisorCrashPoints();
        step.fault_point = points[draw.Below(static_cast<int64_t>(points.size()))];
      }
      it.steps.push_back(std::move(step));
    }
    std::stable_sort(it.steps.begin(), it.steps.end(),
                     [](const FaultStep& a, const FaultStep& b) { return a.at < b.at; });
    plan.push_back(std::move(it));
  }
  return plan;
}

std::string Describe(const SoakIteration& iteration) {
  std::string out = absl::StrCat("iteration ", iteration.index, ": ", iteration.records,
                                 " records over ", Seconds(iteration.produce_for));
  for (const FaultStep& step : iteration.steps) {
    absl::StrAppend(&out, "; +", Seconds(step.at), " ");
    const std::string worker = absl::StrCat("worker-", step.worker);
    switch (step.kind) {
      case FaultKind::kKillWorker:
        absl::StrAppend(&out, "kill -9 ", worker, " (back after ", Seconds(step.down_for), ")");
        break;
      case FaultKind::kKillWorkerForGood:
        absl::StrAppend(&out, "kill -9 ", worker, " (back at the end of the iteration)");
        break;
      case FaultKind::kKillSupervisor:
        absl::StrAppend(&out, "kill -9 supervisor (back after ", Seconds(step.down_for), ")");
        break;
      case FaultKind::kCrashWorkerAtPoint:
        absl::StrAppend(&out, "crash ", worker, " at ", step.fault_point, " (clean restart after ",
                        Seconds(step.down_for), " if not hit)");
        break;
      case FaultKind::kCrashSupervisorAtPoint:
        absl::StrAppend(&out, "crash supervisor at ", step.fault_point, " (clean restart after ",
                        Seconds(step.down_for), " if not hit)");
        break;
      case FaultKind::kFreezeWorker:
        absl::StrAppend(&out, "SIGSTOP ", worker, " for ", Seconds(step.down_for));
        break;
      case FaultKind::kBrokerOutage:
        absl::StrAppend(&out, "broker down for ", Seconds(step.down_for));
        break;
      case FaultKind::kDeepStorageOutage:
        absl::StrAppend(&out, "deep storage refuses pushes for ", Seconds(step.down_for));
        break;
      case FaultKind::kSuspendResume:
        absl::StrAppend(&out, "suspend, resume after ", Seconds(step.down_for));
        break;
      case FaultKind::kLoseWorkerDisk:
        absl::StrAppend(&out, "kill -9 ", worker, " and delete its data (back empty after ",
                        Seconds(step.down_for), ")");
        break;
      case FaultKind::kChangeSpec:
        absl::StrAppend(&out, "submit a changed spec");
        break;
    }
  }
  return out;
}

}  // namespace sluice::fault
