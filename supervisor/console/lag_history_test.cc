#include "supervisor/console/lag_history.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace sluice::supervisor::console {
namespace {

v1::SupervisorStatus Status(const std::string& datasource, int64_t lag0, int64_t lag1) {
  v1::SupervisorStatus status;
  status.set_datasource(datasource);
  (*status.mutable_lag())[0] = lag0;
  (*status.mutable_lag())[1] = lag1;
  (*status.mutable_time_lag_ms())[1] = 1500;
  (*status.mutable_current_offsets())[0] = 40;
  (*status.mutable_current_offsets())[1] = 2;
  return status;
}

TEST(LagHistoryTest, KeepsTheWindowAtMostOnePointPerStep) {
  LagHistory history(absl::Minutes(10), absl::Seconds(10));
  const absl::Time start = absl::FromUnixSeconds(1'800'000'000);
  for (int s = 0; s <= 1200; s += 5) {
    history.Record(start + absl::Seconds(s), {Status("wiki", s, 1)});
  }
  // 10 minutes at one point per 10 s: 61 points (both ends).
  EXPECT_EQ(history.size("wiki"), 61u);
  const std::string json = history.Json("wiki");
  EXPECT_TRUE(absl::StrContains(json, "\"lag\":1201")) << json;  // the newest: 1200 + 1
  EXPECT_FALSE(absl::StrContains(json, "\"lag\":591")) << "older than the window";
  EXPECT_TRUE(absl::StrContains(json, "\"timeLagMs\":1500")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"read\":42")) << json;
  // (JSON object keys come in any order.)
  EXPECT_TRUE(absl::StrContains(json, "\"0\":1200")) << json;
}

TEST(LagHistoryTest, NegativeLagDoesNotCountAndGoneDatasourcesAreDropped) {
  LagHistory history;
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  history.Record(t, {Status("a", -5, 7), Status("b", 1, 1)});
  EXPECT_TRUE(absl::StrContains(history.Json("a"), "\"lag\":7")) << history.Json("a");
  history.Record(t + absl::Minutes(1), {Status("a", 0, 0)});
  EXPECT_EQ(history.size("a"), 2u);
  EXPECT_EQ(history.size("b"), 0u);
  EXPECT_TRUE(absl::StrContains(history.Json("nope"), "\"points\":[]")) << history.Json("nope");
}

}  // namespace
}  // namespace sluice::supervisor::console
