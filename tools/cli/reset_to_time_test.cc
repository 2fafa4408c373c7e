// The pure parts of reset-offsets --to_time: the time argument, the
// connection properties from the spec, the preview and the request's offsets.
#include "tools/cli/reset_to_time.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace sluicectl {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseResetTimeTest, IsoInstantsAndEpochMillis) {
  EXPECT_EQ(*ParseResetTime("2026-12-06T00:00:00Z"), 1796515200000);
  EXPECT_EQ(*ParseResetTime("2026-12-06T01:00:00+01:00"), 1796515200000);
  EXPECT_EQ(*ParseResetTime("2026-12-06"), 1796515200000);  // no zone: UTC
  EXPECT_EQ(*ParseResetTime("1796515200123"), 1796515200123);
  EXPECT_EQ(*ParseResetTime(" 0 "), 0);
  for (const char* bad : {"", "yesterday", "-5", "2026-13-01T00:00:00Z", "1969-12-31T23:59:59Z",
                          "99999999999999999999"}) {
    absl::StatusOr<int64_t> t = ParseResetTime(bad);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(t.status().message(), HasSubstr("--to_time")) << bad;
  }
}

TEST(SpecKafkaPropertiesTest, SpecPropertiesAddressOverrideAndSecrets) {
  v1::SupervisorSpec spec;
  spec.set_datasource("wiki");
  auto& props = *spec.mutable_io_config()->mutable_consumer_properties();
  props["bootstrap.servers"] = "kafka:9092";
  props["security.protocol"] = "SASL_SSL";
  props["sasl.password"] = kafka::kRedacted;
  props["group.id"] = "theirs";
  auto got = SpecKafkaProperties(spec, "", kafka::ClusterKind::kKafka, std::nullopt);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->at("bootstrap.servers"), "kafka:9092");
  EXPECT_EQ(got->at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(got->count("sasl.password"), 0u) << "a redacted value is never sent";
  EXPECT_NE((*got)["group.id"], "theirs") << "the lookup never uses the datasource's group";
  EXPECT_EQ(got->at("enable.auto.commit"), "false");  // the consumer defaults

  got = SpecKafkaProperties(spec, "other:9093", kafka::ClusterKind::kKafka, std::nullopt);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->at("bootstrap.servers"), "other:9093");

  props.erase("bootstrap.servers");
  EXPECT_EQ(SpecKafkaProperties(spec, "", kafka::ClusterKind::kKafka, std::nullopt).status().code(),
            absl::StatusCode::kFailedPrecondition);

  // A reference the policy refuses: no connection, and the reason.
  props["bootstrap.servers"] = "kafka:9092";
  props["sasl.password"] = "${env:NOT_ALLOWED}";
  kafka::PropertyPolicyOptions policy;
  policy.secret_env_prefix = "SLUICE_SECRET_";
  got = SpecKafkaProperties(spec, "", kafka::ClusterKind::kKafka, policy);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("cannot be resolved here"));
}

TEST(ResetPreviewTest, SkipsReadsAgainStartsAndPastTheEnd) {
  const std::vector<PartitionReset> plan = {
      {.partition = 0, .committed = 100, .new_offset = 40},
      {.partition = 1, .committed = 10, .new_offset = 25},
      {.partition = 2, .committed = 7, .new_offset = 7},
      {.partition = 3, .committed = std::nullopt, .new_offset = 3},
      {.partition = 4,
       .committed = 5,
       .new_offset = 9,
       .source = kafka::OffsetForTimeSource::kPastEnd},
  };
  const std::string text = FormatResetPreview("wiki", "edits", 1796515200000, plan);
  EXPECT_THAT(text, HasSubstr("topic edits, first records at or after 2026-12-06T00:00:00.000Z"));
  EXPECT_THAT(text, HasSubstr("PARTITION  COMMITTED  NEW  CHANGE"));
  EXPECT_THAT(text, HasSubstr("0        100   40  reads 60 again"));
  EXPECT_THAT(text, HasSubstr("1         10   25  skips 15"));
  EXPECT_THAT(text, HasSubstr("2          7    7  unchanged"));
  EXPECT_THAT(text, HasSubstr("3          -    3  starts there"));
  EXPECT_THAT(text, ContainsRegex("4 +5 +9 +skips 4 +no record that new: latest offset\n"));
  EXPECT_THAT(text, HasSubstr("past the end of some partitions"));
  EXPECT_THAT(FormatResetPreview("wiki", "edits", 0, {plan[0]}), Not(HasSubstr("past the end")));

  // The unchanged partition is left out of the request (its group keeps
  // reading); one without a committed offset is set.
  EXPECT_EQ(ChangedOffsets(plan),
            (std::map<int32_t, int64_t>{{0, 40}, {1, 25}, {3, 3}, {4, 9}}));
}

}  // namespace
}  // namespace sluicectl
}  // namespace sluice
