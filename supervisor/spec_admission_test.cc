#include "supervisor/spec_admission.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "supervisor/testing/test_util.h"

namespace sluice::supervisor {
namespace {

TEST(AdmitSpecTest, NormalizesAValidSpec) {
  v1::SupervisorSpec submitted = testing::TestSpec("ds");
  absl::StatusOr<v1::SupervisorSpec> spec = AdmitSpec(submitted, nullptr, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->datasource(), "ds");
  EXPECT_EQ(spec->io_config().topic(), "events");
}

TEST(AdmitSpecTest, KeepsAStoredSecretAndRefusesOneWithoutAStoredValue) {
  v1::SupervisorSpec stored = testing::TestSpec("ds");
  (*stored.mutable_io_config()->mutable_consumer_properties())["sasl.password"] = "hunter2";
  v1::SupervisorSpec submitted = stored;
  (*submitted.mutable_io_config()->mutable_consumer_properties())["sasl.password"] = "***";
  absl::StatusOr<v1::SupervisorSpec> spec = AdmitSpec(submitted, &stored, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->io_config().consumer_properties().at("sasl.password"), "hunter2");
  EXPECT_EQ(AdmitSpec(submitted, nullptr, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AdmitSpecTest, AnIcebergColumnKeepsItsType) {
  v1::SupervisorSpec stored = testing::TestSpec("ds");
  stored.mutable_iceberg_table();
  stored.mutable_data_schema()->mutable_dimensions_spec()->add_dimensions("page");
  v1::MetricSpec* added = stored.mutable_data_schema()->add_metrics_spec();
  added->set_type("longSum");
  added->set_name("added");
  stored = *AdmitSpec(stored, nullptr, {});
  const int added_index = stored.data_schema().metrics_spec_size() - 1;

  v1::SupervisorSpec doubled = stored;
  doubled.mutable_data_schema()->mutable_metrics_spec(added_index)->set_type("doubleSum");
  absl::Status status = AdmitSpec(doubled, &stored, {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(
      status.message(), absl::StrCat("dataSchema.metricsSpec[", added_index, "].type")))
      << status;
  // A dimension cannot become a metric of the same name either.
  v1::SupervisorSpec moved = stored;
  moved.mutable_data_schema()->mutable_dimensions_spec()->clear_dimensions();
  v1::MetricSpec* page = moved.mutable_data_schema()->add_metrics_spec();
  page->set_type("count");
  page->set_name("page");
  EXPECT_EQ(AdmitSpec(moved, &stored, {}).status().code(), absl::StatusCode::kInvalidArgument);
  // Fine: without a table, into another table, or under a new name.
  v1::SupervisorSpec native = doubled;
  native.clear_iceberg_table();
  EXPECT_TRUE(AdmitSpec(native, &stored, {}).ok());
  v1::SupervisorSpec other = doubled;
  other.mutable_iceberg_table()->set_table_name("ds_v2");
  EXPECT_TRUE(AdmitSpec(other, &stored, {}).ok());
  v1::SupervisorSpec renamed = doubled;
  renamed.mutable_data_schema()->mutable_metrics_spec(added_index)->set_name("added_d");
  EXPECT_TRUE(AdmitSpec(renamed, &stored, {}).ok());
}

TEST(AdmitSpecTest, RefusesPropertiesThePolicyForbids) {
  v1::SupervisorSpec submitted = testing::TestSpec("ds");
  (*submitted.mutable_io_config()->mutable_consumer_properties())["plugin.library.paths"] = "x.so";
  absl::Status status = AdmitSpec(submitted, nullptr, {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "plugin.library.paths")) << status;
}

TEST(AdmitSpecTest, RefusesAnInvalidSpec) {
  v1::SupervisorSpec submitted = testing::TestSpec("ds");
  submitted.mutable_io_config()->clear_topic();
  EXPECT_EQ(AdmitSpec(submitted, nullptr, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckTopicSwitchTest, OnlyStoredOffsetsOfAnotherTopicBlock) {
  EXPECT_TRUE(CheckTopicSwitch("ds", std::nullopt, {{0, 5}}, "b").ok());
  EXPECT_TRUE(CheckTopicSwitch("ds", "a", {{0, 5}}, "a").ok());
  EXPECT_TRUE(CheckTopicSwitch("ds", "a", {}, "b").ok());  // nothing stored
  absl::Status blocked = CheckTopicSwitch("ds", "a", {{0, 5}}, "b");
  EXPECT_EQ(blocked.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(blocked.message(),
            "datasource ds has stored offsets for topic \"a\", not \"b\"; reset the supervisor "
            "before switching topics");
}

TEST(CheckPartitionsExistTest, UnknownPartitionsAndUnknownTopic) {
  v1::SupervisorStatus status;
  status.set_topic("events");
  google::protobuf::Map<int32_t, int64_t> offsets;
  offsets[1] = 10;
  EXPECT_EQ(CheckPartitionsExist(status, offsets).code(), absl::StatusCode::kUnavailable);
  (*status.mutable_latest_offsets())[0] = 100;
  (*status.mutable_latest_offsets())[1] = 100;
  EXPECT_TRUE(CheckPartitionsExist(status, offsets).ok());
  offsets[5] = 1;
  offsets[3] = 1;
  absl::Status bad = CheckPartitionsExist(status, offsets);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(),
            "topic \"events\" has no partition 3, 5 (it has 2: 0 to 1); nothing was reset");
}

// A Druid spec goes through the same admission as sluice's form: a property
// that runs a command is refused either way.
TEST(SpecOfSubmitRequestTest, ADruidSpecIsConvertedThenAdmittedLikeAnyOther) {
  const std::string druid = R"({"type": "kafka", "spec": {
    "dataSchema": {"dataSource": "ds", "timestampSpec": {"column": "ts", "format": "millis"},
                   "dimensionsSpec": {"dimensions": ["page"]}},
    "ioConfig": {"topic": "events", "consumerProperties": {"bootstrap.servers": "k:9092",
                 "sasl.kerberos.kinit.cmd": "touch /tmp/owned"}},
    "tuningConfig": {"type": "kafka", "indexSpec": {"bitmap": {"type": "roaring"}}}}})";
  v1::SubmitSupervisorRequest request;
  request.set_druid_spec_json(druid);
  absl::StatusOr<SubmittedSpec> refused = SpecOfSubmitRequest(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.status().message(),
                                "druid_spec_json: the Druid spec cannot be taken as it is:\n"
                                "  spec.tuningConfig.indexSpec is not supported by sluice"))
      << refused.status();

  request.set_allow_unsupported(true);
  absl::StatusOr<SubmittedSpec> submitted = SpecOfSubmitRequest(request);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  ASSERT_EQ(submitted->warnings.size(), 1u);
  EXPECT_EQ(submitted->warnings[0], "spec.tuningConfig.indexSpec is not supported by sluice; ignored");
  EXPECT_EQ(submitted->spec.datasource(), "ds");
  absl::StatusOr<v1::SupervisorSpec> admitted = AdmitSpec(submitted->spec, nullptr, {});
  ASSERT_FALSE(admitted.ok());
  EXPECT_TRUE(absl::StrContains(admitted.status().message(), "sasl.kerberos.kinit.cmd"))
      << admitted.status();
}

TEST(SpecOfSubmitRequestTest, OneFormAtATime) {
  v1::SubmitSupervisorRequest request;
  *request.mutable_spec() = testing::TestSpec("ds");
  absl::StatusOr<SubmittedSpec> native = SpecOfSubmitRequest(request);
  ASSERT_TRUE(native.ok()) << native.status();
  EXPECT_EQ(native->spec.datasource(), "ds");
  EXPECT_TRUE(native->warnings.empty());

  request.set_allow_unsupported(true);
  EXPECT_EQ(SpecOfSubmitRequest(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_allow_unsupported(false);
  request.set_druid_spec_json("{}");
  absl::StatusOr<SubmittedSpec> both = SpecOfSubmitRequest(request);
  EXPECT_EQ(both.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(both.status().message(), "not both")) << both.status();
}

}  // namespace
}  // namespace sluice::supervisor
