// Test fixture: a small segment (and a spill) built through the real
// library from parsed JSON records.
#ifndef SLUICE_TOOLS_SEGMENT_SEGMENT_FIXTURE_H_
#define SLUICE_TOOLS_SEGMENT_SEGMENT_FIXTURE_H_

#include <string>
#include <vector>

namespace sluice {
namespace tools {

struct Fixture {
  std::string segment;  // path of a segment built from `records`
  std::string spill;    // path of a spill of the same records (rollup off)
  std::vector<std::string> records;
};

// Builds both files in `dir` from these records (partition 0, offsets 0..):
//   5 records, rollup on with MINUTE granularity -> 4 segment rows.
Fixture MakeFixture(const std::string& dir);

}  // namespace tools
}  // namespace sluice

#endif  // SLUICE_TOOLS_SEGMENT_SEGMENT_FIXTURE_H_
