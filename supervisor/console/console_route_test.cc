#include "supervisor/console/console_route.h"

#include <gtest/gtest.h>

namespace sluice::supervisor::console {
namespace {

TEST(ConsoleRouteTest, ReadsAreGets) {
  auto status = MatchConsoleRoute("GET", "/console/api/datasources/wiki", "");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->call, ConsoleCall::kStatus);
  EXPECT_EQ(status->datasource, "wiki");
  auto log = MatchConsoleRoute("HEAD", "/console/api/datasources/wiki/commit-log", "");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->call, ConsoleCall::kCommitLog);
  EXPECT_FALSE(IsAction(log->call));
  auto workers = MatchConsoleRoute("GET", "/console/api/workers", "");
  ASSERT_TRUE(workers.ok());
  EXPECT_EQ(workers->call, ConsoleCall::kWorkers);
  EXPECT_TRUE(workers->datasource.empty());
  EXPECT_EQ(MatchConsoleRoute("POST", "/console/api/datasources/wiki/spec", "").status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(ConsoleRouteTest, ActionsArePostsOnly) {
  auto suspend = MatchConsoleRoute("POST", "/console/api/datasources/wiki/suspend", "");
  ASSERT_TRUE(suspend.ok());
  EXPECT_EQ(suspend->call, ConsoleCall::kSuspend);
  EXPECT_TRUE(IsAction(suspend->call));
  // A link or an <img> cannot act: GET of an action is refused.
  for (const char* method : {"GET", "HEAD", "PUT", "DELETE"}) {
    EXPECT_EQ(MatchConsoleRoute(method, "/console/api/datasources/wiki/terminate", "")
                  .status()
                  .code(),
              absl::StatusCode::kUnimplemented)
        << method;
  }
}

TEST(ConsoleRouteTest, ResetOffsetsTakesPartitionOffsetPairs) {
  auto reset = MatchConsoleRoute("POST", "/console/api/datasources/wiki/reset-offsets", "0=10&3=7");
  ASSERT_TRUE(reset.ok()) << reset.status();
  EXPECT_EQ(reset->offsets, (std::map<int32_t, int64_t>{{0, 10}, {3, 7}}));
  for (const char* bad : {"", "0", "0=-1", "x=1", "0=1&0=2", "-1=3", "0=1e3"}) {
    EXPECT_EQ(MatchConsoleRoute("POST", "/console/api/datasources/wiki/reset-offsets", bad)
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ConsoleRouteTest, UnknownPathsAreNotFound) {
  for (const char* path :
       {"/console/api/", "/console/api/datasources/", "/console/api/datasources//spec",
        "/console/api/datasources/wiki/nope", "/console/api/datasources/wiki/spec/x",
        "/console/x", "/console/api/secrets"}) {
    EXPECT_EQ(MatchConsoleRoute("GET", path, "").status().code(), absl::StatusCode::kNotFound)
        << path;
  }
}

}  // namespace
}  // namespace sluice::supervisor::console
