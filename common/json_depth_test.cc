#include "common/json_depth.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(JsonDepthTest, CountsArraysAndObjectsNotBracketsInStrings) {
  EXPECT_EQ(JsonNestingDepth("42"), 0);
  EXPECT_EQ(JsonNestingDepth("{}"), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": []}], "c": {}})"), 4);
  EXPECT_EQ(JsonNestingDepth(R"({"[[[[": "{{{{"})"), 1);
  // An escaped quote does not end the string; an escaped backslash does not
  // escape the quote after it.
  EXPECT_EQ(JsonNestingDepth(R"({"a\"[[[": 1})"), 1);
  EXPECT_EQ(JsonNestingDepth(R"(["\\", [[]]])"), 3);
  EXPECT_EQ(JsonNestingDepth("]]]}}[["), 2);
}

TEST(JsonDepthTest, DeepInputIsRefusedNamingItsDepth) {
  const std::string arrays = std::string(100000, '[') + std::string(100000, ']');
  const absl::Status status = CheckJsonDepth(arrays, "druid_spec_json");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "druid_spec_json nests arrays and objects 100000 levels deep; at most 64");
  EXPECT_EQ(CheckJsonDepth(arrays, "stored row", 64, absl::StatusCode::kDataLoss).code(),
            absl::StatusCode::kDataLoss);
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(CheckJsonDepth(at_limit, "x").ok());
  EXPECT_FALSE(CheckJsonDepth("[" + at_limit + "]", "x").ok());
}

}  // namespace
}  // namespace sluice
