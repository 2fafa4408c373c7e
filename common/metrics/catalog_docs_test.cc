// docs/operations.md lists exactly the metrics of catalog.h, with the same
// type and labels, so what operators read is what the binaries export.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/metrics/catalog.h"

namespace sluice {
namespace metrics {
namespace {

struct DocRow {
  std::string type;
  std::set<std::string> labels;
};

// Rows "| `name` | type | `a`, `b` | meaning |" of the metrics table.
std::map<std::string, DocRow> ReadDocTable() {
  std::string path = std::string(std::getenv("TEST_SRCDIR")) + "/" + std::getenv("TEST_WORKSPACE") +
                     "/docs/operations.md";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::map<std::string, DocRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `sluice_", 0) != 0) continue;
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() < 5) {
      ADD_FAILURE() << "short row: " << line;
      continue;
    }
    std::string name(absl::StripAsciiWhitespace(cells[1]));
    name = std::string(absl::StripSuffix(absl::StripPrefix(name, "`"), "`"));
    DocRow row;
    row.type = std::string(absl::StripAsciiWhitespace(cells[2]));
    for (absl::string_view label : absl::StrSplit(cells[3], ',')) {
      label = absl::StripAsciiWhitespace(label);
      label = absl::StripSuffix(absl::StripPrefix(label, "`"), "`");
      if (!label.empty() && label != "—") row.labels.insert(std::string(label));
    }
    EXPECT_TRUE(rows.emplace(name, row).second) << "listed twice: " << name;
  }
  return rows;
}

TEST(CatalogDocs, OperationsGuideListsEveryMetric) {
  std::map<std::string, DocRow> rows = ReadDocTable();
  ASSERT_FALSE(rows.empty());
  std::set<std::string> catalog;
  for (const MetricDef* def : kCatalog) {
    catalog.insert(def->name);
    auto it = rows.find(def->name);
    if (it == rows.end()) {
      ADD_FAILURE() << def->name << " is missing from docs/operations.md";
      continue;
    }
    EXPECT_EQ(it->second.type, MetricTypeName(def->type)) << def->name;
    std::vector<std::string> labels = absl::StrSplit(def->label_names, ',', absl::SkipEmpty());
    EXPECT_EQ(it->second.labels, std::set<std::string>(labels.begin(), labels.end())) << def->name;
  }
  for (const auto& [name, row] : rows) {
    EXPECT_TRUE(catalog.count(name))
        << "docs/operations.md lists " << name << ", which catalog.h does not define";
  }
}

}  // namespace
}  // namespace metrics
}  // namespace sluice
