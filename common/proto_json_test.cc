#include "common/proto_json.h"

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "sluice/v1/common.pb.h"

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
