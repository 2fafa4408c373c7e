// Plain-text tables with aligned columns, for sluicectl's readable output.
//
//   Table t({"PARTITION", "LAG"}, {Table::kRight, Table::kRight});
//   t.AddRow({"0", "12"});
//   std::cout << t.Render();
//   // PARTITION  LAG
//   //         0   12
#ifndef SLUICE_TOOLS_SLUICECTL_TABLE_H_
#define SLUICE_TOOLS_SLUICECTL_TABLE_H_

#include <string>
#include <vector>

namespace sluice {
namespace sluicectl {

class Table {
 public:
  enum Align { kLeft, kRight };

  // `aligns` may be shorter than `headers` (the rest are left-aligned).
  explicit Table(std::vector<std::string> headers, std::vector<Align> aligns = {});

  // Rows shorter than the header are padded with empty cells; extra cells are
  // dropped.
  void AddRow(std::vector<std::string> cells);

  bool empty() const { return rows_.empty(); }
  size_t size() const { return rows_.size(); }

  // Header and rows, columns two spaces apart, each line prefixed with
  // `indent` and ending in '\n', no trailing spaces.
  std::string Render(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace sluicectl
}  // namespace sluice

#endif  // SLUICE_TOOLS_SLUICECTL_TABLE_H_
