#include "common/json_int64.h"

#include <string>

#include "common/proto_json.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/supervisor_service.pb.h"

namespace sluice {
namespace {

TEST(JsonInt64Test, SingularRepeatedAndMapValuesBecomeNumbers) {
  v1::ListSegmentsResponse response;
  for (int i = 0; i < 2; ++i) {
    v1::SegmentDescriptor* segment = response.add_segments();
    segment->set_id("123");  // a string of digits stays a string
    segment->set_num_rows(9000000000 + i);
  }
  absl::StatusOr<std::string> json = ProtoToJson(response, {.int64_as_numbers = true});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json,
            "{\"segments\":[{\"id\":\"123\",\"numRows\":9000000000},"
            "{\"id\":\"123\",\"numRows\":9000000001}]}");
  v1::ListSegmentsResponse back;
  ASSERT_TRUE(ProtoFromJson(*json, &back, "test").ok());
  EXPECT_EQ(back.SerializeAsString(), response.SerializeAsString());

  v1::GetCommitLogResponse log;
  (*log.mutable_committed_offsets())[7] = INT64_MAX;
  json = ProtoToJson(log, {.int64_as_numbers = true});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, "{\"committedOffsets\":{\"7\":9223372036854775807}}");
}

TEST(JsonInt64Test, PrettyLayoutIsKept) {
  v1::SegmentDescriptor segment;
  segment.set_id("a \"quoted\" \\ id");
  segment.set_num_rows(-5);
  const std::string strings = *ProtoToJson(segment, {.pretty = true});
  const std::string numbers = *ProtoToJson(segment, {.pretty = true, .int64_as_numbers = true});
  std::string expected = strings;
  expected.replace(expected.find("\"-5\""), 4, "-5");
  EXPECT_EQ(numbers, expected);
}

TEST(JsonInt64Test, WellKnownTypesAreCopiedAsPrinted) {
  google::protobuf::Struct s;
  (*s.mutable_fields())["numRows"].set_string_value("12");
  (*s.mutable_fields())["list"].mutable_list_value()->add_values()->set_string_value("7");
  const std::string printed = *ProtoToJson(s);
  EXPECT_EQ(*ProtoToJson(s, {.int64_as_numbers = true}), printed);
}

TEST(JsonInt64Test, MalformedInputIsAnError) {
  EXPECT_EQ(Int64FieldsAsNumbers("{\"numRows\": \"1\"", *v1::SegmentDescriptor::descriptor())
                .status()
                .code(),
            absl::StatusCode::kInternal);
  EXPECT_FALSE(Int64FieldsAsNumbers("{} x", *v1::SegmentDescriptor::descriptor()).ok());
}

}  // namespace
}  // namespace sluice
