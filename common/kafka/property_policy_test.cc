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

TEST(PropertyPolicyTest, OnlyMechanismsLibrdkafkaOffers) {
  for (const char* m : {"PLAIN", "SCRAM-SHA-256", "scram-sha-512", "OAUTHBEARER"}) {
    EXPECT_EQ(Check({{"sasl.mechanism", m}}), absl::StatusCode::kOk) << m;
  }
  // librdkafka's configuration takes it; only creating the client fails.
  absl::Status unknown =
      CheckProperties({{"bootstrap.servers", "b:1"}, {"sasl.mechanism", "SCRAM-SHA-1"}}, {});
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("SCRAM-SHA-1"), std::string::npos) << unknown;
  EXPECT_NE(unknown.message().find("SCRAM-SHA-512"), std::string::npos) << unknown;
  EXPECT_EQ(Check({{"sasl.mechanisms", "AWS_MSK_IAM"}}), absl::StatusCode::kInvalidArgument);
}

// client.rack passes (KIP-392 follower fetching); the operator may refuse it.
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

// Binds the references the tests use to the broker "b:1" (and *.b:1).
std::shared_ptr<const SecretDestinations> Bound(const std::string& files_dir) {
  auto parsed = SecretDestinations::Parse(
      "${env:SLUICE_SECRET_KAFKA} b:1 *.b:1\n"
      "${env:SLUICE_SECRET_NOPE} b:1\n"
      "${env:HOME_SECRET} b:1\n"
      "${file:/etc/shadow} b:1\n"
      "${file:" + files_dir + "/password.txt} b:1\n",
      "test");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return std::make_shared<const SecretDestinations>(*std::move(parsed));
}

TEST_F(FilesDirTest, SecretReferences) {
  setenv("SLUICE_SECRET_KAFKA", "from-env", 1);
  setenv("HOME_SECRET", "nope", 1);
  options_.secret_destinations = Bound(dir_);
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
  auto unset = ResolveSecretReferences(
      {{"sasl.password", "${env:SLUICE_SECRET_NOPE}"}, {"bootstrap.servers", "b:1"}}, options_);
  EXPECT_EQ(unset.status().code(), absl::StatusCode::kNotFound);
}

// A bound reference goes only where it is bound: every bootstrap server (and
// the token endpoint) must be allowed for it, at submit and at connection.
TEST_F(FilesDirTest, ABoundReferenceGoesOnlyToItsServers) {
  setenv("SLUICE_SECRET_KAFKA", "from-env", 1);
  options_.secret_destinations = Bound(dir_);
  auto status_of = [&](KafkaProperties props) {
    props.emplace("sasl.password", "${env:SLUICE_SECRET_KAFKA}");
    absl::Status checked = CheckProperties(props, options_);
    absl::Status resolved = ResolveSecretReferences(props, options_).status();
    EXPECT_EQ(checked.code(), resolved.code()) << checked << " / " << resolved;
    EXPECT_EQ(resolved.message().find("from-env"), std::string::npos) << resolved;
    return resolved;
  };
  EXPECT_TRUE(status_of({{"bootstrap.servers", "b:1"}}).ok());
  EXPECT_TRUE(status_of({{"bootstrap.servers", "SASL_SSL://B:1, x.b:1"}}).ok());
  EXPECT_TRUE(status_of({{"metadata.broker.list", "x.b:1"}}).ok());
  for (const KafkaProperties& elsewhere : std::vector<KafkaProperties>{
           {{"bootstrap.servers", "attacker.example:9092"}},
           {{"bootstrap.servers", "b:1,attacker.example:1"}},
           {{"bootstrap.servers", "b:2"}},
           {{"bootstrap.servers", "b"}},  // port 9092
           {{"bootstrap.servers", "x.y.b:1"}},
           {{"bootstrap.servers", "b:1"}, {"metadata.broker.list", "attacker.example:1"}},
       }) {
    absl::Status status = status_of(elsewhere);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find("sasl.password"), std::string::npos) << status;
    EXPECT_NE(status.message().find("${env:SLUICE_SECRET_KAFKA}"), std::string::npos) << status;
    EXPECT_NE(status.message().find("may not be sent to"), std::string::npos) << status;
  }
  // No server at all: nothing to check against.
  EXPECT_EQ(ResolveSecretReferences({{"sasl.password", "${env:SLUICE_SECRET_KAFKA}"}}, options_)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // Another reference, bound nowhere, stays refused.
  absl::Status other = CheckProperties(
      {{"sasl.password", "${env:SLUICE_SECRET_OTHER}"}, {"bootstrap.servers", "b:1"}}, options_);
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(other.message().find("--kafka_secret_destinations_file"), std::string::npos) << other;
}

// A reference the operator has not bound to a destination is resolved
// nowhere: an admin could otherwise point bootstrap.servers at their own
// broker and receive the secret.
TEST_F(FilesDirTest, AnUndeclaredReferenceIsResolvedNowhere) {
  setenv("SLUICE_SECRET_KAFKA", "from-env", 1);
  for (const std::string& reference :
       {std::string("${env:SLUICE_SECRET_KAFKA}"), "${file:" + dir_ + "/password.txt}"}) {
    const KafkaProperties props{{"sasl.password", reference},
                                {"bootstrap.servers", "attacker.example:9092"}};
    for (const absl::Status& status :
         {CheckProperties(props, options_), ResolveSecretReferences(props, options_).status()}) {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << reference;
      EXPECT_NE(status.message().find("sasl.password"), std::string::npos) << status;
      EXPECT_NE(status.message().find(reference), std::string::npos) << status;
      EXPECT_NE(status.message().find("--kafka_secret_destinations_file"), std::string::npos)
          << status;
      EXPECT_EQ(status.message().find("from-env"), std::string::npos) << status;
      EXPECT_EQ(status.message().find("hunter2"), std::string::npos) << status;
    }
  }
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
