// Plain helpers for the benchmark's Markdown output: number formatting, a
// table builder, and replacing one "## " section of a document while keeping
// the others (docs/benchmarks.md holds sections written by other harnesses).
#ifndef SLUICE_BENCH_E2E_MARKDOWN_REPORT_H_
#define SLUICE_BENCH_E2E_MARKDOWN_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice {
namespace bench {

// 1234567 -> "1.23M", 45600 -> "45.6k", 12 -> "12".
std::string FormatCount(double n);
// 0.00123 s -> "1.2 ms", 2.5 s -> "2.50 s"; NaN -> "n/a".
std::string FormatSeconds(double seconds);
// 157286400 -> "150 MiB".
std::string FormatMiB(int64_t bytes);
// 1.2345 -> "1.23x"; NaN or inf -> "n/a".
std::string FormatRatio(double ratio);

class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<std::string> header);
  void AddRow(std::vector<std::string> cells);
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// `doc` with the section that starts at the line `heading` (e.g.
// "## End to end") up to the next line starting with "## " replaced by
// `section` (which should start with that heading line). Appended at the end
// when `doc` has no such heading.
std::string ReplaceMarkdownSection(absl::string_view doc, absl::string_view heading,
                                   absl::string_view section);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_E2E_MARKDOWN_REPORT_H_
