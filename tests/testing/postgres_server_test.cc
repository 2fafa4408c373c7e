#include "tests/testing/postgres_server.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

namespace sluice::testing {
namespace {

TEST(PostgresServerTest, StartsCreatesDatabasesAndStopsCleanly) {
  auto server = PostgresServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto url = (*server)->CreateDatabase("first");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(*url, (*server)->Url("first"));
  EXPECT_TRUE((*server)->Exec("first", "CREATE TABLE t (x BIGINT); INSERT INTO t VALUES (1)").ok());
  EXPECT_FALSE((*server)->CreateDatabase("first").ok());  // exists
  EXPECT_FALSE((*server)->CreateDatabase("bad; name").ok());
  const std::string dir = (*server)->dir();
  ASSERT_TRUE((*server)->Stop().ok());
  EXPECT_FALSE((*server)->Exec("first", "SELECT 1").ok());
  server->reset();
  struct stat st;
  EXPECT_NE(stat(dir.c_str(), &st), 0) << dir << " was not removed";
}

}  // namespace
}  // namespace sluice::testing
