#include "common/kafka/property_policy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

namespace sluice::kafka {
namespace {

absl::StatusCode Check(KafkaProperties props, const PropertyPolicyOptions& options = {}) {
  props.emplace("bootstrap.servers", "127.0.0.1:9092");
  return CheckProperties(props, options).code();
}

TEST(PropertyPolicyTest, RefusesWhatRunsCommandsOrLoadsCode) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"sasl.kerberos.kinit.cmd", "sh x.sh"},
           {"plugin.library.paths", "evil"},
           {"ssl.engine.location", "/tmp/engine.so"},
           {"ssl.providers", "legacy"},
           {"ssl.keylog.filename", "/tmp/keys"},
           {"sasl.kerberos.principal", "x; touch /tmp/pwned"},
           {"sasl.mechanisms", "GSSAPI"},
           {"interceptor.test.config1", "x"},
           {"oauthbearer_token_refresh_cb", "x"},
           {"sasl.oauthbearer.token.endpoint.url", "http://evil/token"},
       }) {
    absl::Status status = CheckProperties({{"bootstrap.servers", "b:1"}, {name, value}}, {});
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(status.message().find(name), std::string::npos) << status;
  }
}

TEST(PropertyPolicyTest, LibrdkafkaJudgesTheRest) {
  EXPECT_EQ(Check({{"fetch.wait.max.ms", "50"}}), absl::StatusCode::kOk);
  absl::Status typo = CheckProperties({{"bootstrap.servers", "b:1"}, {"fetch.wait.max.msx", "5"}}, {});
  EXPECT_EQ(typo.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(typo.message().find("fetch.wait.max.msx"), std::string::npos) << typo;
  EXPECT_EQ(Check({{"fetch.wait.max.ms", "soon"}}), absl::StatusCode::kInvalidArgument);
}

TEST(PropertyPolicyTest, OperatorCanDenyMore) {
  PropertyPolicyOptions options;
  options.denied = {"client.rack"};
  EXPECT_EQ(Check({{"client.rack", "a"}}, options), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Check({{"client.rack", "a"}}), absl::StatusCode::kOk);
}

class FilesDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(std::getenv("TEST_TMPDIR"));
    dir_ = root_ + "/kafka-files";
    mkdir(dir_.c_str(), 0700);
    std::ofstream(dir_ + "/ca.pem") << "not really a cert\n";
    std::ofstream(dir_ + "/password.txt") << "hunter2\n";
    std::ofstream(root_ + "/outside.txt") << "x\n";
    options_.files_dir = dir_;
  }
  std::string root_, dir_;
  PropertyPolicyOptions options_;
};

TEST_F(FilesDirTest, PathsOnlyInsideTheOperatorsDirectory) {
  EXPECT_EQ(Check({{"ssl.ca.location", dir_ + "/ca.pem"}}, options_), absl::StatusCode::kOk);
  EXPECT_EQ(Check({{"ssl.ca.location", dir_ + "/../outside.txt"}}, options_),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Check({{"ssl.ca.location", "/etc/passwd"}}, options_),
            absl::StatusCode::kInvalidArgument);
  // No directory set: no file at all.
  EXPECT_EQ(Check({{"ssl.ca.location", dir_ + "/ca.pem"}}), absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(symlink((root_ + "/outside.txt").c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_EQ(Check({{"ssl.ca.location", dir_ + "/link"}}, options_),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FilesDirTest, SecretReferences) {
  setenv("SLUICE_SECRET_KAFKA", "from-env", 1);
  setenv("HOME_SECRET", "nope", 1);
  KafkaProperties props{{"sasl.password", "${env:SLUICE_SECRET_KAFKA}"},
                        {"ssl.key.password", "${file:" + dir_ + "/password.txt}"},
                        {"bootstrap.servers", "b:1"}};
  EXPECT_TRUE(CheckProperties(props, options_).ok());
  auto resolved = ResolveSecretReferences(props, options_);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->at("sasl.password"), "from-env");
  EXPECT_EQ(resolved->at("ssl.key.password"), "hunter2");

  EXPECT_EQ(Check({{"sasl.password", "${env:HOME_SECRET}"}}, options_),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Check({{"sasl.password", "${file:/etc/shadow}"}}, options_),
            absl::StatusCode::kInvalidArgument);
  // References are for secrets only.
  EXPECT_EQ(Check({{"client.id", "${env:SLUICE_SECRET_KAFKA}"}}, options_),
            absl::StatusCode::kInvalidArgument);
  auto unset = ResolveSecretReferences({{"sasl.password", "${env:SLUICE_SECRET_NOPE}"}}, options_);
  EXPECT_EQ(unset.status().code(), absl::StatusCode::kNotFound);
}

TEST(RedactedTest, SecretsOnly) {
  KafkaProperties shown = Redacted({{"sasl.password", "p"},
                                    {"sasl.username", "u"},
                                    {"sasl.oauthbearer.client.secret", "s"}});
  EXPECT_EQ(shown.at("sasl.password"), kRedacted);
  EXPECT_EQ(shown.at("sasl.username"), "u");
  EXPECT_EQ(shown.at("sasl.oauthbearer.client.secret"), kRedacted);
}

}  // namespace
}  // namespace sluice::kafka
