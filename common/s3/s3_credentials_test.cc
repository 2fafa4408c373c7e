#include "common/s3/s3_credentials.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "common/file_util.h"

namespace sluice::s3 {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

TEST(LoadS3Credentials, EnvironmentFirst) {
  absl::StatusOr<S3Credentials> c = LoadS3Credentials(FakeEnv({{"AWS_ACCESS_KEY_ID", "AKID"},
                                                               {"AWS_SECRET_ACCESS_KEY", "s3cr3t"},
                                                               {"AWS_SESSION_TOKEN", "tok"},
                                                               {"HOME", "/nonexistent"}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->access_key_id, "AKID");
  EXPECT_EQ(c->secret_access_key, "s3cr3t");
  EXPECT_EQ(c->session_token, "tok");
}

TEST(LoadS3Credentials, HalfAPairIsAnErrorThatNamesNoValue) {
  absl::StatusOr<S3Credentials> c =
      LoadS3Credentials(FakeEnv({{"AWS_SECRET_ACCESS_KEY", "s3cr3t-value"}}));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c.status().message().find("s3cr3t-value"), std::string::npos);
}

TEST(LoadS3Credentials, SharedFileWithProfile) {
  const std::string path = TmpDir() + "/credentials";
  ASSERT_TRUE(WriteFileAtomically(path,
                                  "# comment\n[default]\naws_access_key_id = D\n"
                                  "aws_secret_access_key = dsecret\n\n"
                                  "[prod]\naws_access_key_id=P\naws_secret_access_key=psecret\n"
                                  "aws_session_token=ptok\n")
                  .ok());
  absl::StatusOr<S3Credentials> c =
      LoadS3Credentials(FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->access_key_id, "D");
  EXPECT_EQ(c->secret_access_key, "dsecret");
  c = LoadS3Credentials(FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}, {"AWS_PROFILE", "prod"}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->access_key_id, "P");
  EXPECT_EQ(c->session_token, "ptok");
  c = LoadS3Credentials(FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}, {"AWS_PROFILE", "dev"}}));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c.status().message().find("secret"), std::string::npos) << c.status();
}

TEST(LoadS3Credentials, HomeDefaultFile) {
  const std::string home = TmpDir() + "/home";
  ASSERT_TRUE(MakeDirs(home + "/.aws").ok());
  ASSERT_TRUE(WriteFileAtomically(home + "/.aws/credentials",
                                  "[default]\naws_access_key_id=H\naws_secret_access_key=h\n")
                  .ok());
  absl::StatusOr<S3Credentials> c = LoadS3Credentials(FakeEnv({{"HOME", home}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->access_key_id, "H");
  EXPECT_EQ(LoadS3Credentials(FakeEnv({{"HOME", TmpDir() + "/nohome"}})).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ParseSharedCredentials, ProfilePrefixAndMissingSection) {
  absl::StatusOr<S3Credentials> c =
      ParseSharedCredentials("[profile x]\naws_access_key_id=X\n", "x");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "X");
  EXPECT_TRUE(absl::IsNotFound(ParseSharedCredentials("[y]\n", "x").status()));
}

}  // namespace
}  // namespace sluice::s3
