#include "common/proto_json.h"

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/spec.pb.h"

namespace sluice {
namespace {

v1::SegmentDescriptor Segment() {
  v1::SegmentDescriptor segment;
  segment.set_id("wiki_2026-12-01_0");
  segment.set_num_rows(12);
  return segment;
}

TEST(ProtoJsonTest, CompactAndPrettyRoundTrip) {
  absl::StatusOr<std::string> compact = ProtoToJson(Segment());
  ASSERT_TRUE(compact.ok()) << compact.status();
  EXPECT_FALSE(absl::StrContains(*compact, "\n"));
  EXPECT_TRUE(absl::StrContains(*compact, "\"id\":\"wiki_2026-12-01_0\""));
  absl::StatusOr<std::string> pretty = ProtoToJson(Segment(), {.pretty = true});
  ASSERT_TRUE(pretty.ok());
  EXPECT_TRUE(absl::StrContains(*pretty, "\n"));
  v1::SegmentDescriptor back;
  ASSERT_TRUE(ProtoFromJson(*pretty, &back, "test").ok());
  EXPECT_EQ(back.SerializeAsString(), Segment().SerializeAsString());
}

TEST(ProtoJsonTest, DefaultsPrintedOnlyWhenAsked) {
  v1::SegmentDescriptor empty;
  EXPECT_EQ(*ProtoToJson(empty), "{}");
  EXPECT_TRUE(absl::StrContains(*ProtoToJson(empty, {.print_defaults = true}), "\"id\""));
}

TEST(ProtoJsonTest, ParseErrorsNameTheInputAndCarryTheCallersCode) {
  v1::SegmentDescriptor message;
  absl::Status bad = ProtoFromJson("{\"id\": 3", &message, "request body");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(bad.message(), "request body is not a valid sluice.v1.SegmentDescriptor"))
      << bad;
  absl::Status unknown = ProtoFromJson("{\"noSuchField\": 1}", &message, "stored row",
                                       {.error_code = absl::StatusCode::kDataLoss});
  EXPECT_EQ(unknown.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(ProtoFromJson("{\"noSuchField\": 1, \"id\": \"x\"}", &message, "stored row",
                            {.ignore_unknown_fields = true})
                  .ok());
  EXPECT_EQ(message.id(), "x");
}

std::string NestedObjects(int depth) {
  std::string json;
  for (int i = 0; i < depth; ++i) json += "{\"a\":";
  json += "1";
  json.append(depth, '}');
  return json;
}

TEST(ProtoJsonTest, DeeplyNestedInputIsRefusedNamingItsDepth) {
  v1::SupervisorSpec spec;
  for (const std::string& json : {std::string(100000, '[') + std::string(100000, ']'),
                                  NestedObjects(100000)}) {
    absl::Status deep = ProtoFromJson(json, &spec, "spec");
    EXPECT_EQ(deep.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(deep.message(), "100000 levels deep; at most 64")) << deep;
  }
  // The caller's code, as for any parse failure.
  EXPECT_EQ(ProtoFromJson(NestedObjects(100), &spec, "stored spec",
                          {.error_code = absl::StatusCode::kDataLoss})
                .code(),
            absl::StatusCode::kDataLoss);
  // A normal spec, with a string full of brackets, still parses.
  ASSERT_TRUE(ProtoFromJson(R"({"datasource": "wiki",
                                "ioConfig": {"topic": "wiki[{\"", "taskCount": 2}})",
                            &spec, "spec")
                  .ok());
  EXPECT_EQ(spec.io_config().topic(), "wiki[{\"");
  EXPECT_EQ(spec.io_config().task_count(), 2);
}

TEST(ProtoJsonTest, FilesSaveAtomicallyAndLoadBack) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/json");
  ASSERT_TRUE(MakeDirs(dir).ok());
  const std::string path = dir + "/segment.json";
  ASSERT_TRUE(SaveProtoJson(path, Segment()).ok());
  v1::SegmentDescriptor loaded;
  ASSERT_TRUE(LoadProtoJson(path, &loaded).ok());
  EXPECT_EQ(loaded.id(), "wiki_2026-12-01_0");
  EXPECT_EQ(LoadProtoJson(dir + "/missing.json", &loaded).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(WriteFileAtomically(path, "not json").ok());
  const absl::Status corrupt = LoadProtoJson(path, &loaded);
  EXPECT_EQ(corrupt.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(corrupt.message(), path)) << corrupt;
}

}  // namespace
}  // namespace sluice
