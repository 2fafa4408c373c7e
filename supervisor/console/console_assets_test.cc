#include "supervisor/console/console_assets.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace sluice::supervisor::console {
namespace {

TEST(ConsoleAssetsTest, ThePageAndWhatItLoadsAreEmbedded) {
  const ConsoleAsset* page = FindConsoleAsset("index.html");
  ASSERT_NE(page, nullptr);
  EXPECT_EQ(page->content_type, "text/html; charset=utf-8");
  // The page loads exactly the two embedded files, and no inline script
  // (the Content-Security-Policy would refuse it).
  EXPECT_TRUE(absl::StrContains(page->body, "src=\"/console/assets/console.js\""));
  EXPECT_TRUE(absl::StrContains(page->body, "href=\"/console/assets/console.css\""));
  EXPECT_FALSE(absl::StrContains(page->body, "<script>"));
  EXPECT_FALSE(absl::StrContains(page->body, "onclick="));
  const ConsoleAsset* script = FindConsoleAsset("console.js");
  ASSERT_NE(script, nullptr);
  EXPECT_EQ(script->content_type, "text/javascript; charset=utf-8");
  // Data goes on the page as text only.
  EXPECT_FALSE(absl::StrContains(script->body, "innerHTML"));
  EXPECT_FALSE(absl::StrContains(script->body, "eval("));
  ASSERT_NE(FindConsoleAsset("console.css"), nullptr);
  EXPECT_EQ(FindConsoleAsset("../BUILD"), nullptr);
  EXPECT_EQ(FindConsoleAsset(""), nullptr);
}

}  // namespace
}  // namespace sluice::supervisor::console
