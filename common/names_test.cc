#include "common/names.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

TEST(ValidateName, AcceptsOrdinaryNames) {
  for (const char* ok : {"wiki", "wiki-edits_2026.v2", "0day", "A"}) {
    EXPECT_TRUE(ValidateDatasource(ok).ok()) << ok;
  }
}

TEST(ValidateName, RejectsPathsAndOddCharacters) {
  for (const char* bad : {"", ".", "..", "../etc", "a/b", "a\\b", ".hidden", "-x", "has space",
                          "tab\t", "naïve", "a\nb", "x:y"}) {
    auto s = ValidateDatasource(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("datasource"), std::string::npos) << s;
  }
}

TEST(ValidateName, BoundsLength) {
  EXPECT_TRUE(ValidateDatasource(std::string(128, 'a')).ok());
  auto s = ValidateDatasource(std::string(129, 'a'));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at most 128"), std::string::npos) << s;
}

}  // namespace
}  // namespace sluice
