#include "common/spec_secrets.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sluice
