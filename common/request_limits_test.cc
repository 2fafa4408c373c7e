#include "common/request_limits.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/segment/format_limits.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "sluice/v1/limits.pb.h"
#include "sluice/v1/spec.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "sluice/v1/task_service.pb.h"

namespace sluice {
namespace {

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(RequestLimitsTest, AnEmptyOrSmallRequestPasses) {
  EXPECT_TRUE(CheckMessageLimits(v1::SubmitSupervisorRequest()).ok());
  v1::AllocateSegmentRequest request;
  request.set_datasource("wiki");
  request.set_sequence_name("index_kafka_wiki_0_abc_3");
  EXPECT_TRUE(CheckMessageLimits(request).ok());
}

TEST(RequestLimitsTest, ExplicitZeroTaskCountIsAnErrorNamingTheField) {
  v1::SubmitSupervisorRequest request;
  request.mutable_spec()->mutable_io_config()->set_task_count(0);
  absl::Status status = CheckMessageLimits(request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(status), "spec.ioConfig.taskCount must be at least 1 (got 0)");
}

TEST(RequestLimitsTest, UpperBoundsOfIntegers) {
  v1::SupervisorSpec spec;
  spec.mutable_io_config()->set_replicas(2147483647);
  EXPECT_EQ(Message(CheckMessageLimits(spec)),
            "ioConfig.replicas must be at most 16 (got 2147483647)");
  spec = v1::SupervisorSpec();
  spec.mutable_tuning_config()->set_max_bytes_in_memory(INT64_MAX);
  EXPECT_EQ(CheckMessageLimits(spec).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RequestLimitsTest, UnknownEnumValuesAreRefused) {
  v1::SupervisorSpec spec;
  spec.mutable_tuning_config()->set_handoff_mode(static_cast<v1::HandoffMode>(99));
  EXPECT_EQ(Message(CheckMessageLimits(spec)),
            "tuningConfig.handoffMode 99 is not one of HANDOFF_MODE_DEEP_STORAGE, HANDOFF_MODE_LOADER");
}

TEST(RequestLimitsTest, StringsAreBoundedByTheirOptionOrTheDefault) {
  v1::AllocateSegmentRequest request;
  request.set_sequence_name(std::string(1 << 20, 's'));
  EXPECT_EQ(Message(CheckMessageLimits(request)),
            "sequenceName is 1048576 bytes long; at most 512");
  v1::ListTasksRequest list;
  list.set_datasource(std::string(5 << 20, 'd'));
  EXPECT_EQ(Message(CheckMessageLimits(list)), "datasource is 5242880 bytes long; at most 128");
  // A field without an option: the default bound.
  v1::StopTaskRequest stop;
  stop.set_reason(std::string(kDefaultMaxBytes + 1, 'r'));
  EXPECT_EQ(CheckMessageLimits(stop).code(), absl::StatusCode::kInvalidArgument);
  stop.set_reason(std::string(kDefaultMaxBytes, 'r'));
  EXPECT_TRUE(CheckMessageLimits(stop).ok());
}

TEST(RequestLimitsTest, MapsAreBoundedInEntriesKeysAndValues) {
  v1::SupervisorSpec spec;
  auto* props = spec.mutable_io_config()->mutable_consumer_properties();
  (*props)["ssl.ca.pem"] = std::string(1 << 20, 'x');
  EXPECT_EQ(Message(CheckMessageLimits(spec)),
            "ioConfig.consumerProperties[\"ssl.ca.pem\"] is 1048576 bytes long; at most 65536");
  // (A Map pointer held across a reflection read goes stale: fetch it again.)
  props = spec.mutable_io_config()->mutable_consumer_properties();
  props->clear();
  for (int i = 0; i < 1001; ++i) (*props)[std::to_string(i)] = "v";
  EXPECT_EQ(Message(CheckMessageLimits(spec)),
            "ioConfig.consumerProperties has 1001 entries; at most 1000");
  props = spec.mutable_io_config()->mutable_consumer_properties();
  props->clear();
  (*props)[std::string(300, 'k')] = "v";
  EXPECT_EQ(Message(CheckMessageLimits(spec)),
            "ioConfig.consumerProperties key is 300 bytes long; at most 256");
}

TEST(RequestLimitsTest, OffsetMapsRefuseNegativePartitionsAndOffsets) {
  v1::ResetOffsetsRequest request;
  (*request.mutable_offsets())[-1] = 5;
  EXPECT_EQ(Message(CheckMessageLimits(request)), "offsets key must be at least 0 (got -1)");
  request.clear_offsets();
  (*request.mutable_offsets())[1] = -5;
  EXPECT_EQ(Message(CheckMessageLimits(request)),
            "offsets[\"1\"] must be at least 0 (got -5)");
}

TEST(RequestLimitsTest, RepeatedFieldsAreBounded) {
  v1::SupervisorSpec spec;
  auto* dims = spec.mutable_data_schema()->mutable_dimensions_spec();
  for (size_t i = 0; i < segment::kMaxDimensions + 1; ++i) dims->add_dimensions("d");
  EXPECT_EQ(Message(CheckMessageLimits(spec)),
            "dataSchema.dimensionsSpec.dimensions has 65537 elements; at most 65536");
}

TEST(RequestLimitsTest, TheSpecsBoundsMatchTheSegmentFormat) {
  const auto* dims = v1::DimensionsSpec::descriptor()->FindFieldByName("dimensions");
  EXPECT_EQ(dims->options().GetExtension(v1::limits).max_items(), segment::kMaxDimensions);
  const auto* metrics = v1::DataSchema::descriptor()->FindFieldByName("metrics_spec");
  EXPECT_EQ(metrics->options().GetExtension(v1::limits).max_items(), segment::kMaxMetrics);
}

TEST(RequestLimitsTest, EveryMethodBoundsItsRequestAndTheServerLimitCoversTheLargest) {
  // Links both services' files into the generated pool.
  (void)v1::PublishSegmentsRequest::descriptor();
  (void)v1::RunTaskRequest::descriptor();
  for (const char* name : {"sluice.v1.SupervisorService", "sluice.v1.TaskService"}) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    size_t largest = 0;
    for (int i = 0; i < service->method_count(); ++i) {
      const size_t bound = MaxRequestBytes(service->method(i)->full_name());
      EXPECT_GE(bound, kDefaultMaxRequestBytes) << service->method(i)->full_name();
      largest = std::max(largest, bound);
    }
    EXPECT_EQ(MaxRequestBytesOfService(service->full_name()), largest);
  }
  EXPECT_EQ(MaxRequestBytes("/sluice.v1.SupervisorService/ListSegments"), kDefaultMaxRequestBytes);
  EXPECT_EQ(MaxRequestBytes("sluice.v1.SupervisorService.PublishSegments"), 4u << 20);
  EXPECT_EQ(MaxRequestBytes("/sluice.v1.TaskService/RunTask"), 2u << 20);
  EXPECT_EQ(MaxRequestBytes("/sluice.v1.Nope/Nothing"), 0u);
  EXPECT_EQ(MaxRequestBytesOfService("sluice.v1.SupervisorService"), 4u << 20);
}

TEST(RequestLimitsTest, ARequestOverItsMethodsBoundIsResourceExhausted) {
  v1::GetCheckpointsRequest small;
  small.set_task_id(std::string(60000, 't'));
  EXPECT_TRUE(CheckRequestSize(small, "/sluice.v1.TaskService/GetCheckpoints").ok());
  v1::GetCheckpointsRequest large;
  large.set_task_id(std::string(70000, 't'));
  absl::Status status = CheckRequestSize(large, "/sluice.v1.TaskService/GetCheckpoints");
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Message(status), absl::StrCat("GetCheckpoints requests are bounded to 65536 bytes (got ",
                                         large.ByteSizeLong(), ")"));
  // The same size fits a method with a larger bound.
  v1::RunTaskRequest run;
  run.mutable_spec()->set_task_id(std::string(70000, 't'));
  EXPECT_TRUE(CheckRequestSize(run, "/sluice.v1.TaskService/RunTask").ok());
  EXPECT_EQ(CheckRequestSize(large, "/sluice.v1.TaskService/Unknown").code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace sluice
