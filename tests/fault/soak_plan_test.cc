#include "tests/fault/soak_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "absl/strings/match.h"

namespace sluice::fault {
namespace {

TEST(SoakPlan, SameSeedSamePlan) {
  SoakPlanOptions options;
  const std::vector<SoakIteration> a = MakeSoakPlan(42, 10, options);
  const std::vector<SoakIteration> b = MakeSoakPlan(42, 10, options);
  ASSERT_EQ(a.size(), 10u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(Describe(a[i]), Describe(b[i]));
  const std::vector<SoakIteration> c = MakeSoakPlan(43, 10, options);
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) differs = differs || Describe(a[i]) != Describe(c[i]);
  EXPECT_TRUE(differs);
}

TEST(SoakPlan, StaysWithinTheOptions) {
  SoakPlanOptions options;
  options.workers = 3;
  options.min_records = 100;
  options.max_records = 200;
  options.max_faults_per_iteration = 2;
  options.max_down_for = absl::Seconds(2);
  std::set<FaultKind> seen;
  for (const SoakIteration& it : MakeSoakPlan(7, 200, options)) {
    EXPECT_GE(it.records, 100);
    EXPECT_LE(it.records, 200);
    EXPECT_GE(it.produce_for, options.min_produce_for);
    EXPECT_LE(it.produce_for, options.max_produce_for);
    ASSERT_GE(it.steps.size(), 1u);
    ASSERT_LE(it.steps.size(), 2u);
    for (size_t i = 0; i < it.steps.size(); ++i) {
      const FaultStep& step = it.steps[i];
      seen.insert(step.kind);
      if (i > 0) {
        EXPECT_LE(it.steps[i - 1].at, step.at);
      }
      EXPECT_LE(step.at, it.produce_for);
      EXPECT_GE(step.worker, 0);
      EXPECT_LT(step.worker, 3);
      EXPECT_LE(step.down_for, absl::Seconds(2));
      const bool at_point = step.kind == FaultKind::kCrashWorkerAtPoint ||
                            step.kind == FaultKind::kCrashSupervisorAtPoint;
      EXPECT_EQ(at_point, !step.fault_point.empty()) << Describe(it);
    }
  }
  EXPECT_EQ(seen.size(), 11u);  // every kind comes up
}

TEST(SoakPlan, KindsCanBeRestricted) {
  SoakPlanOptions options;
  options.kinds = {FaultKind::kBrokerOutage};
  for (const SoakIteration& it : MakeSoakPlan(1, 20, options)) {
    for (const FaultStep& step : it.steps) EXPECT_EQ(step.kind, FaultKind::kBrokerOutage);
    EXPECT_TRUE(absl::StrContains(Describe(it), "broker down for")) << Describe(it);
  }
}

}  // namespace
}  // namespace sluice::fault
