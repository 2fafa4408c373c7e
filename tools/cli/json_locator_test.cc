#include "tools/cli/json_locator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace sluicectl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(absl::string_view text) {
  auto layout = LocateJson(text);
  EXPECT_FALSE(layout.ok()) << text;
  return std::string(layout.status().message());
}

TEST(LocateJsonTest, RecordsKeyAndElementPositions) {
  auto layout = LocateJson("{\n  \"a\": {\"b\": 1},\n  \"list\": [\n    {\"x\": true}\n  ]\n}");
  ASSERT_TRUE(layout.ok()) << layout.status();
  const auto& pos = layout->positions;
  EXPECT_EQ(pos.at({"a"}).line, 2);
  EXPECT_EQ(pos.at({"a"}).column, 3);
  EXPECT_EQ(pos.at({"a", "b"}).line, 2);
  EXPECT_EQ(pos.at({"a", "b"}).column, 9);
  EXPECT_EQ(pos.at({"list", "0"}).line, 4);
  EXPECT_EQ(pos.at({"list", "0", "x"}).column, 6);
  EXPECT_THAT(layout->object_keys.at({}), ElementsAre("a", "list"));
  EXPECT_EQ(layout->kinds.at({}), JsonKind::kObject);
  EXPECT_EQ(layout->kinds.at({"list"}), JsonKind::kArray);
  EXPECT_EQ(layout->kinds.at({"list", "0", "x"}), JsonKind::kBool);
  EXPECT_EQ(layout->kinds.at({"a", "b"}), JsonKind::kNumber);
}

TEST(LocateJsonTest, AcceptsEveryKindOfValue) {
  EXPECT_TRUE(LocateJson(R"({"s": "a\"\\\u00e9", "n": -1.5e3, "t": true, "f": false,
                             "z": null, "e": {}, "l": []})")
                  .ok());
  EXPECT_TRUE(LocateJson("  42  ").ok());
}

TEST(LocateJsonTest, SyntaxErrorsSayLineAndColumn) {
  EXPECT_EQ(ErrorOf("{\n  \"a\": 1\n  \"b\": 2\n}"),
            "3:3: expected ',' or '}' after a value, found '\"'");
  EXPECT_EQ(ErrorOf("{\"a\": 1,}"), "1:9: trailing comma before '}'");
  EXPECT_EQ(ErrorOf("[1, 2,]"), "1:7: trailing comma before ']'");
  EXPECT_THAT(ErrorOf("{\"a\" 1}"), HasSubstr("1:6: expected ':' after key \"a\""));
  EXPECT_THAT(ErrorOf("{\"a\": tru}"), HasSubstr("1:7: expected a value"));
  EXPECT_THAT(ErrorOf("{\"a\": \"unterminated"), HasSubstr("unterminated string"));
  EXPECT_THAT(ErrorOf("{\"a\": 01}"), HasSubstr("1:8: expected ',' or '}'"));
  EXPECT_THAT(ErrorOf("{} {}"), HasSubstr("1:4: unexpected text after the JSON value"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("1:1: expected a value, found the end of the file"));
  EXPECT_THAT(ErrorOf("{a: 1}"), HasSubstr("1:2: expected a quoted key"));
  EXPECT_THAT(ErrorOf(std::string(500, '[')), HasSubstr("nested too deeply"));
}

}  // namespace
}  // namespace sluicectl
}  // namespace sluice
