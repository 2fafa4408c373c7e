#include "common/spec_secrets.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace sluice {
namespace {

v1::SupervisorSpec SpecWith(std::map<std::string, std::string> props) {
  v1::SupervisorSpec spec;
  for (auto& [k, v] : props) (*spec.mutable_io_config()->mutable_consumer_properties())[k] = v;
  return spec;
}

TEST(SpecSecretsTest, RedactsSecretsButNotReferencesOrOtherValues) {
  v1::SupervisorSpec shown = RedactedSpec(SpecWith({{"sasl.password", "hunter2"},
                                                    {"ssl.keystore.password", "k"},
                                                    {"my.client.secret", "s"},
                                                    {"ssl.key.password", "${env:SLUICE_SECRET_K}"},
                                                    {"bootstrap.servers", "b:9092"}}));
  const auto& p = shown.io_config().consumer_properties();
  EXPECT_EQ(p.at("sasl.password"), "***");
  EXPECT_EQ(p.at("ssl.keystore.password"), "***");
  EXPECT_EQ(p.at("my.client.secret"), "***");
  EXPECT_EQ(p.at("ssl.key.password"), "${env:SLUICE_SECRET_K}");
  EXPECT_EQ(p.at("bootstrap.servers"), "b:9092");
  EXPECT_EQ(shown.DebugString().find("hunter2"), std::string::npos);
}

TEST(SpecSecretsTest, TaskSpecToo) {
  v1::TaskSpec task;
  (*task.mutable_consumer_properties())["sasl.password"] = "hunter2";
  EXPECT_EQ(RedactedTaskSpec(task).consumer_properties().at("sasl.password"), "***");
}

TEST(SpecSecretsTest, ResubmittingStarsKeepsTheStoredValue) {
  v1::SupervisorSpec stored = SpecWith({{"sasl.password", "hunter2"}});
  v1::SupervisorSpec again = SpecWith({{"sasl.password", "***"}});
  ASSERT_TRUE(KeepStoredSecrets(&again, &stored).ok());
  EXPECT_EQ(again.io_config().consumer_properties().at("sasl.password"), "hunter2");

  v1::SupervisorSpec fresh = SpecWith({{"sasl.password", "***"}});
  absl::Status none = KeepStoredSecrets(&fresh, nullptr);
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.message().find("sasl.password"), std::string::npos);
}

// An admin cannot read a write-only secret by pointing the spec elsewhere and
// keeping "***": the stored password would go to that broker.
TEST(SpecSecretsTest, AStoredSecretIsKeptOnlyForItsBrokersAndSecuritySettings) {
  const v1::SupervisorSpec stored = SpecWith({{"bootstrap.servers", "kafka:9093"},
                                              {"security.protocol", "SASL_SSL"},
                                              {"sasl.mechanism", "SCRAM-SHA-512"},
                                              {"sasl.password", "hunter2"}});
  struct Case {
    std::string property;
    std::string value;  // "" removes it
  };
  for (const Case& c : std::vector<Case>{{"bootstrap.servers", "evil:9093"},
                                         {"security.protocol", "SASL_PLAINTEXT"},
                                         {"sasl.mechanism", "PLAIN"},
                                         {"ssl.ca.location", "/tmp/evil-ca.pem"},
                                         {"metadata.broker.list", "evil:9093"},
                                         {"security.protocol", ""}}) {
    v1::SupervisorSpec again = stored;
    auto* props = again.mutable_io_config()->mutable_consumer_properties();
    (*props)["sasl.password"] = "***";
    if (c.value.empty()) {
      props->erase(c.property);
    } else {
      (*props)[c.property] = c.value;
    }
    absl::Status kept = KeepStoredSecrets(&again, &stored);
    EXPECT_EQ(kept.code(), absl::StatusCode::kInvalidArgument) << c.property;
    EXPECT_NE(kept.message().find(c.property), std::string::npos) << kept.message();
    EXPECT_EQ(kept.message().find("hunter2"), std::string::npos);
    EXPECT_EQ(again.io_config().consumer_properties().at("sasl.password"), "***");
  }

  // Same destination, other settings changed: the secret is kept.
  v1::SupervisorSpec tuned = stored;
  (*tuned.mutable_io_config()->mutable_consumer_properties())["sasl.password"] = "***";
  (*tuned.mutable_io_config()->mutable_consumer_properties())["fetch.max.bytes"] = "1048576";
  ASSERT_TRUE(KeepStoredSecrets(&tuned, &stored).ok());
  EXPECT_EQ(tuned.io_config().consumer_properties().at("sasl.password"), "hunter2");

  // Given again, the new destination is fine.
  v1::SupervisorSpec moved = stored;
  (*moved.mutable_io_config()->mutable_consumer_properties())["bootstrap.servers"] = "new:9093";
  (*moved.mutable_io_config()->mutable_consumer_properties())["sasl.password"] = "new-secret";
  EXPECT_TRUE(KeepStoredSecrets(&moved, &stored).ok());
}

}  // namespace
}  // namespace sluice
