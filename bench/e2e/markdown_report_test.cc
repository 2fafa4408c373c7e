#include "bench/e2e/markdown_report.h"

#include <gtest/gtest.h>

#include <limits>

namespace sluice {
namespace bench {
namespace {

TEST(MarkdownReportTest, FormatsNumbers) {
  EXPECT_EQ(FormatCount(1234567), "1.23M");
  EXPECT_EQ(FormatCount(45600), "45.6k");
  EXPECT_EQ(FormatCount(12), "12");
  EXPECT_EQ(FormatSeconds(0.00123), "1.2 ms");
  EXPECT_EQ(FormatSeconds(2.5), "2.50 s");
  EXPECT_EQ(FormatSeconds(std::numeric_limits<double>::quiet_NaN()), "n/a");
  EXPECT_EQ(FormatMiB(150 << 20), "150 MiB");
  EXPECT_EQ(FormatRatio(1.2345), "1.23x");
  EXPECT_EQ(FormatRatio(std::numeric_limits<double>::infinity()), "n/a");
}

TEST(MarkdownReportTest, RendersATable) {
  MarkdownTable table({"a", "b"});
  table.AddRow({"1", "2"});
  table.AddRow({"3"});
  EXPECT_EQ(table.Render(), "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 |  |\n");
}

TEST(MarkdownReportTest, ReplacesOnlyItsOwnSection) {
  const std::string doc =
      "# Benchmarks\n\nintro\n\n## End to end\n\nold "
      "figures\n\n## Segment kernels\n\nkeep\n";
  EXPECT_EQ(ReplaceMarkdownSection(doc, "## End to end", "## End to end\n\nnew figures\n"),
            "# Benchmarks\n\nintro\n\n## End to end\n\nnew figures\n\n## "
            "Segment kernels\n\n"
            "keep\n");
  // Last section: replaced to the end.
  const std::string last = "# B\n\n## Segment kernels\n\nkeep\n\n## End to end\n\nold\n";
  EXPECT_EQ(ReplaceMarkdownSection(last, "## End to end", "## End to end\n\nnew\n"),
            "# B\n\n## Segment kernels\n\nkeep\n\n## End to end\n\nnew\n");
}

TEST(MarkdownReportTest, AppendsAMissingSection) {
  EXPECT_EQ(ReplaceMarkdownSection("# B\n\n## Segment kernels\n\nkeep\n", "## End to end",
                                   "## End to end\n\nnew\n"),
            "# B\n\n## Segment kernels\n\nkeep\n\n## End to end\n\nnew\n");
  EXPECT_EQ(ReplaceMarkdownSection("", "## End to end", "## End to end\n"), "## End to end\n");
}

}  // namespace
}  // namespace bench
}  // namespace sluice
