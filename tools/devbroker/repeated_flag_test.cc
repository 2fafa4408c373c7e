#include "tools/devbroker/repeated_flag.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace devbroker {
namespace {

using ::testing::ElementsAre;

TEST(ExtractRepeatedFlagTest, CollectsEveryFormInOrder) {
  std::vector<std::string> args = {"prog",    "--topic=a:1", "--brokers=3", "-topic=b:2", "--topic",
                                   "c:3,d:4", "-topic",      "e:5",         "--topics=x"};
  auto values = ExtractRepeatedFlag(args, "topic");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(*values, ElementsAre("a:1", "b:2", "c:3", "d:4", "e:5"));
  EXPECT_THAT(args, ElementsAre("prog", "--brokers=3", "--topics=x"));
}

TEST(ExtractRepeatedFlagTest, StopsAtDoubleDash) {
  std::vector<std::string> args = {"prog", "--", "--topic=a:1"};
  auto values = ExtractRepeatedFlag(args, "topic");
  ASSERT_TRUE(values.ok());
  EXPECT_TRUE(values->empty());
  EXPECT_EQ(args.size(), 3u);
}

TEST(ExtractRepeatedFlagTest, MissingValueIsAnError) {
  std::vector<std::string> args = {"prog", "--topic"};
  EXPECT_EQ(ExtractRepeatedFlag(args, "topic").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace devbroker
}  // namespace sluice
