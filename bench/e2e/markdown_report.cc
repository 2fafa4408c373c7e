#include "bench/e2e/markdown_report.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace sluice {
namespace bench {

std::string FormatCount(double n) {
  if (std::isnan(n)) return "n/a";
  if (n >= 1e6) return absl::StrFormat("%.2fM", n / 1e6);
  if (n >= 1e4) return absl::StrFormat("%.1fk", n / 1e3);
  return absl::StrFormat("%.0f", n);
}

std::string FormatSeconds(double seconds) {
  if (std::isnan(seconds)) return "n/a";
  if (seconds < 1) return absl::StrFormat("%.1f ms", seconds * 1e3);
  return absl::StrFormat("%.2f s", seconds);
}

std::string FormatMiB(int64_t bytes) {
  return absl::StrFormat("%.0f MiB", static_cast<double>(bytes) / (1 << 20));
}

std::string FormatRatio(double ratio) {
  if (!std::isfinite(ratio)) return "n/a";
  return absl::StrFormat("%.2fx", ratio);
}

MarkdownTable::MarkdownTable(std::vector<std::string> header) : header_(std::move(header)) {}

void MarkdownTable::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

std::string MarkdownTable::Render() const {
  std::string out = absl::StrCat("| ", absl::StrJoin(header_, " | "), " |\n|");
  for (size_t i = 0; i < header_.size(); ++i) absl::StrAppend(&out, " --- |");
  absl::StrAppend(&out, "\n");
  for (const auto& row : rows_) absl::StrAppend(&out, "| ", absl::StrJoin(row, " | "), " |\n");
  return out;
}

std::string ReplaceMarkdownSection(absl::string_view doc, absl::string_view heading,
                                   absl::string_view section) {
  std::vector<absl::string_view> lines = absl::StrSplit(doc, '\n');
  std::string before, after;
  enum { kBefore, kInside, kAfter } where = kBefore;
  bool found = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    const bool last = i + 1 == lines.size();
    if (where == kBefore && line == heading) {
      where = kInside;
      found = true;
      continue;
    }
    if (where == kInside && absl::StartsWith(line, "## ")) where = kAfter;
    if (where == kInside) continue;
    std::string& out = where == kBefore ? before : after;
    absl::StrAppend(&out, line, last ? "" : "\n");
  }
  std::string body(section);
  if (!absl::EndsWith(body, "\n")) body.push_back('\n');
  if (!found) {
    if (!before.empty() && !absl::EndsWith(before, "\n\n")) {
      absl::StrAppend(&before, absl::EndsWith(before, "\n") ? "\n" : "\n\n");
    }
    return absl::StrCat(before, body);
  }
  if (!after.empty()) body.push_back('\n');
  return absl::StrCat(before, body, after);
}

}  // namespace bench
}  // namespace sluice
