#include "supervisor/idle_tracker.h"

#include <gtest/gtest.h>

namespace sluice::supervisor {
namespace {

using Change = IdleTracker::Change;

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);
const absl::Duration kAfter = absl::Seconds(10);

TEST(IdleTrackerTest, GoesIdleOnlyAfterTheStreamStayedStillAndReadToItsEnd) {
  IdleTracker t;
  const OffsetMap latest = {{0, 100}, {1, 50}};
  EXPECT_EQ(t.Observe(latest, latest, kT0, kAfter), Change::kNone);
  EXPECT_EQ(t.Observe(latest, latest, kT0 + absl::Seconds(9), kAfter), Change::kNone);
  EXPECT_FALSE(t.idle());
  EXPECT_EQ(t.Observe(latest, latest, kT0 + absl::Seconds(10), kAfter), Change::kWentIdle);
  EXPECT_TRUE(t.idle());
  EXPECT_EQ(t.state().latest, latest);
  EXPECT_EQ(t.state().since_ms, absl::ToUnixMillis(kT0 + absl::Seconds(10)));
  EXPECT_EQ(t.Observe(latest, latest, kT0 + absl::Seconds(60), kAfter), Change::kNone);
  EXPECT_TRUE(t.idle());
}

TEST(IdleTrackerTest, NewRecordsOrALaggingReaderRestartTheClock) {
  IdleTracker t;
  EXPECT_EQ(t.Observe({{0, 100}}, {{0, 100}}, kT0, kAfter), Change::kNone);
  // A record arrives at 8 s: still from there.
  EXPECT_EQ(t.Observe({{0, 101}}, {{0, 101}}, kT0 + absl::Seconds(8), kAfter), Change::kNone);
  EXPECT_EQ(t.Observe({{0, 101}}, {{0, 101}}, kT0 + absl::Seconds(17), kAfter), Change::kNone);
  // The stream is still but reading is behind: never idle while behind.
  IdleTracker behind;
  for (int s = 0; s <= 60; s += 10) {
    EXPECT_EQ(behind.Observe({{0, 100}}, {{0, 90}}, kT0 + absl::Seconds(s), kAfter),
              Change::kNone);
  }
  // A partition nobody read (no offset) is not caught up.
  EXPECT_EQ(behind.Observe({{0, 100}, {1, 5}}, {{0, 100}}, kT0 + absl::Seconds(80), kAfter),
            Change::kNone);
  // Caught up at 90 s: idle 10 s later.
  EXPECT_EQ(behind.Observe({{0, 100}, {1, 5}}, {{0, 100}, {1, 5}}, kT0 + absl::Seconds(90),
                           kAfter),
            Change::kNone);
  EXPECT_EQ(behind.Observe({{0, 100}, {1, 5}}, {{0, 100}, {1, 5}}, kT0 + absl::Seconds(100),
                           kAfter),
            Change::kWentIdle);
}

TEST(IdleTrackerTest, WakesWhenALatestOffsetMovesOrAPartitionAppears) {
  IdleTracker t;
  IdleState stored{{{0, 100}}, 5};
  t.Restore(&stored);
  EXPECT_TRUE(t.idle());
  EXPECT_EQ(t.Observe({}, {}, kT0, kAfter), Change::kNone);  // watermarks unknown
  EXPECT_EQ(t.Observe({{0, 100}}, {{0, 100}}, kT0, kAfter), Change::kNone);
  EXPECT_EQ(t.Observe({{0, 101}}, {{0, 100}}, kT0, kAfter), Change::kWoke);
  EXPECT_FALSE(t.idle());

  IdleTracker u;
  u.Restore(&stored);
  EXPECT_EQ(u.Observe({{0, 100}, {1, 0}}, {{0, 100}}, kT0, kAfter), Change::kWoke);
}

TEST(IdleTrackerTest, WakeTurnsIdlenessOffAndRestartsTheClock) {
  IdleTracker t;
  EXPECT_EQ(t.Wake(), Change::kNone);
  EXPECT_EQ(t.Observe({{0, 1}}, {{0, 1}}, kT0, kAfter), Change::kNone);
  EXPECT_EQ(t.Observe({{0, 1}}, {{0, 1}}, kT0 + kAfter, kAfter), Change::kWentIdle);
  EXPECT_EQ(t.Wake(), Change::kWoke);
  EXPECT_FALSE(t.idle());
  EXPECT_EQ(t.Observe({{0, 1}}, {{0, 1}}, kT0 + 2 * kAfter, kAfter), Change::kNone);
  EXPECT_EQ(t.Observe({{0, 1}}, {{0, 1}}, kT0 + 3 * kAfter, kAfter), Change::kWentIdle);
}

}  // namespace
}  // namespace sluice::supervisor
