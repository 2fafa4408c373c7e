#include "task/text_util.h"

#include <gtest/gtest.h>

namespace sluice::task {
namespace {

TEST(SanitizeUtf8Test, KeepsValidTextAndReplacesBadBytes) {
  EXPECT_EQ(SanitizeUtf8("plain", 100), "plain");
  EXPECT_EQ(SanitizeUtf8("caf\xc3\xa9", 100), "caf\xc3\xa9");
  EXPECT_EQ(SanitizeUtf8("a\xff"
                         "b",
                         100),
            "a?b");
  EXPECT_EQ(SanitizeUtf8("\xc0\xaf", 100), "??");       // overlong '/'
  EXPECT_EQ(SanitizeUtf8("\xed\xa0\x80", 100), "???");  // surrogate
  EXPECT_EQ(SanitizeUtf8(std::string("a\0b", 3), 100), std::string("a\0b", 3));
}

TEST(SanitizeUtf8Test, NeverCutsACharacter) {
  EXPECT_EQ(SanitizeUtf8("ab\xc3\xa9", 3), "ab");
  EXPECT_EQ(SanitizeUtf8("ab\xc3\xa9", 4), "ab\xc3\xa9");
  EXPECT_EQ(SanitizeUtf8("abc\xc3", 10), "abc?");  // truncated sequence at the end
}

}  // namespace
}  // namespace sluice::task
