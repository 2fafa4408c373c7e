// What every fault-scenario test file needs: ASSERT_OK for absl::Status and
// starting a scenario (a failure to start fails the test with the reason).
#ifndef SLUICE_TESTS_FAULT_SCENARIO_TEST_UTIL_H_
#define SLUICE_TESTS_FAULT_SCENARIO_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "tests/fault/fault_scenario.h"

#define ASSERT_OK(expr)                              \
  do {                                               \
    const absl::Status _status = (expr);             \
    ASSERT_TRUE(_status.ok()) << _status.ToString(); \
  } while (0)

namespace sluice::fault {

// Records each scenario produces, and over how long.
inline constexpr int64_t kRecords = 20000;
inline constexpr absl::Duration kProduceFor = absl::Seconds(8);

// The started scenario, or null after recording the failure.
inline std::unique_ptr<FaultScenario> StartScenario(ScenarioOptions options) {
  absl::StatusOr<std::unique_ptr<FaultScenario>> scenario = FaultScenario::Start(options);
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return scenario.ok() ? std::move(*scenario) : nullptr;
}

// How many lines of the current log of `process` contain `text` (0 when the
// log cannot be read).
inline int CountInLog(FaultScenario& s, const std::string& process, const std::string& text) {
  absl::StatusOr<std::string> log = ReadFile(s.cluster().log_path(process));
  if (!log.ok()) return 0;
  int n = 0;
  for (absl::string_view line : absl::StrSplit(*log, '\n')) n += absl::StrContains(line, text);
  return n;
}

inline std::unique_ptr<FaultScenario> StartScenario(const std::string& name, uint64_t seed) {
  ScenarioOptions options;
  options.name = name;
  options.seed = seed;
  return StartScenario(options);
}

}  // namespace sluice::fault

#endif  // SLUICE_TESTS_FAULT_SCENARIO_TEST_UTIL_H_
