#include "common/topic_pattern.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

TEST(TopicPatternTest, MatchesWholeNamesOnly) {
  absl::StatusOr<TopicPattern> pattern = TopicPattern::Create("clicks-.*");
  ASSERT_TRUE(pattern.ok()) << pattern.status();
  EXPECT_TRUE(pattern->Matches("clicks-eu"));
  EXPECT_TRUE(pattern->Matches("clicks-"));
  EXPECT_FALSE(pattern->Matches("old-clicks-eu")) << "anchored at the start";
  EXPECT_FALSE(pattern->Matches("clicks")) << "the dash is required";
  EXPECT_EQ(pattern->Filter({"a", "clicks-us", "clicks-eu", "views-eu"}),
            (std::vector<std::string>{"clicks-us", "clicks-eu"}));
  absl::StatusOr<TopicPattern> alternatives = TopicPattern::Create("a|b");
  ASSERT_TRUE(alternatives.ok());
  EXPECT_TRUE(alternatives->Matches("b"));
  EXPECT_FALSE(alternatives->Matches("ab"));
}

TEST(TopicPatternTest, RefusesWhatRe2CannotRunInLinearTimeAndOversizedPatterns) {
  for (const char* bad : {"", "(a", "(a)\\1", "(?=x)y", "a{2000}"}) {
    absl::Status status = ValidateTopicPattern(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("ioConfig.topicPattern"), std::string::npos) << status;
  }
  EXPECT_FALSE(ValidateTopicPattern(std::string(1025, 'a')).ok());
  EXPECT_TRUE(ValidateTopicPattern(std::string(1024, 'a')).ok());
}

TEST(TopicPatternTest, PathologicalBacktrackingPatternsRunInLinearTime) {
  // (a+)+$ backtracks exponentially in a backtracking engine on a^n b.
  absl::StatusOr<TopicPattern> pattern = TopicPattern::Create("(a+)+");
  ASSERT_TRUE(pattern.ok());
  EXPECT_FALSE(pattern->Matches(std::string(249, 'a') + "b"));
  EXPECT_TRUE(pattern->Matches(std::string(249, 'a')));
}

}  // namespace
}  // namespace sluice
