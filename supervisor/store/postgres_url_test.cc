#include "supervisor/store/postgres_url.h"

#include <gtest/gtest.h>

#include "supervisor/store/metadata_store_url.h"
#include "supervisor/store/postgres.h"

namespace sluice::supervisor {
namespace {

std::string Param(const PostgresConnectOptions& options, const std::string& key) {
  for (const auto& [k, v] : options.params) {
    if (k == key) return v;
  }
  return "<absent>";
}

TEST(PostgresUrlTest, ParsesHostPortDatabaseAndLibpqParameters) {
  auto parsed = ParsePostgresUrl(
      "postgresql://sluice@db.example:6432/meta?sslmode=verify-full&password_file=/run/pw");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(Param(*parsed, "user"), "sluice");
  EXPECT_EQ(Param(*parsed, "host"), "db.example");
  EXPECT_EQ(Param(*parsed, "port"), "6432");
  EXPECT_EQ(Param(*parsed, "dbname"), "meta");
  EXPECT_EQ(Param(*parsed, "sslmode"), "verify-full");
  EXPECT_EQ(Param(*parsed, "password"), "<absent>");
  EXPECT_EQ(parsed->password_file, "/run/pw");
}

TEST(PostgresUrlTest, RefusesAnInlinePasswordWithoutRepeatingIt) {
  for (const char* url : {"postgresql://sluice:hunter2secret@db:5432/meta",
                          "postgres://sluice@db/meta?password=hunter2secret",
                          "postgresql://sluice@db/meta?sslmode=disable&password=hunter2secret",
                          "postgresql://sluice@db/meta?sslpassword=hunter2secret"}) {
    auto parsed = ParsePostgresUrl(url);
    ASSERT_FALSE(parsed.ok()) << url;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().ToString().find("hunter2secret"), std::string::npos)
        << parsed.status();
    EXPECT_NE(parsed.status().message().find("password_file"), std::string::npos);
    MetadataStoreOptions options;
    absl::Status applied = ApplyMetadataStoreUrl(url, "/data", &options);
    EXPECT_EQ(applied.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(applied.ToString().find("hunter2secret"), std::string::npos) << applied;
  }
}

TEST(PostgresUrlTest, RefusesOtherSchemesAndUnknownParameters) {
  EXPECT_FALSE(ParsePostgresUrl("mysql://u@h/db").ok());
  auto unknown = ParsePostgresUrl("postgresql://u@h/db?no_such_option=1");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MetadataStoreUrlTest, DefaultIsSqliteUnderTheDataDir) {
  MetadataStoreOptions options;
  ASSERT_TRUE(ApplyMetadataStoreUrl("", "/var/lib/sluice", &options).ok());
  EXPECT_EQ(options.path, "/var/lib/sluice/metadata.db");
  EXPECT_TRUE(options.postgres_url.empty());
  ASSERT_TRUE(ApplyMetadataStoreUrl("sqlite:///srv/meta.db", "/var/lib/sluice", &options).ok());
  EXPECT_EQ(options.path, "/srv/meta.db");
  EXPECT_FALSE(ApplyMetadataStoreUrl("sqlite://relative.db", "/d", &options).ok());
  EXPECT_FALSE(ApplyMetadataStoreUrl("/plain/path.db", "/d", &options).ok());
  ASSERT_TRUE(ApplyMetadataStoreUrl("postgresql://u@h:5432/db", "/d", &options).ok());
  EXPECT_EQ(options.postgres_url, "postgresql://u@h:5432/db");
  EXPECT_TRUE(options.path.empty());
}

TEST(PostgresPlaceholdersTest, NumbersPlaceholdersOutsideQuotes) {
  EXPECT_EQ(PostgresPlaceholders("SELECT a FROM t WHERE b = ? AND c = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $2");
  EXPECT_EQ(PostgresPlaceholders("UPDATE t SET x = ?1 WHERE ?1 = '' OR y = ?12"),
            "UPDATE t SET x = $1 WHERE $1 = '' OR y = $12");
  EXPECT_EQ(PostgresPlaceholders("SELECT '?', \"a?\" FROM t WHERE x = ?"),
            "SELECT '?', \"a?\" FROM t WHERE x = $1");
}

}  // namespace
}  // namespace sluice::supervisor
