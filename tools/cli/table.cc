#include "tools/cli/table.h"

#include <algorithm>
#include <utility>

namespace sluice {
namespace sluicectl {

Table::Table(std::vector<std::string> headers, std::vector<Align> aligns)
    : headers_(std::move(headers)), aligns_(std::move(aligns)) {
  aligns_.resize(headers_.size(), kLeft);
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render(const std::string& indent) const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) widths[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  auto render_line = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    for (size_t c = 0; c < cells.size(); ++c) {
      const size_t pad = widths[c] - cells[c].size();
      if (c > 0) line += "  ";
      if (aligns_[c] == kRight) line.append(pad, ' ');
      line += cells[c];
      if (aligns_[c] == kLeft) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  render_line(headers_);
  for (const auto& row : rows_) render_line(row);
  return out;
}

}  // namespace sluicectl
}  // namespace sluice
