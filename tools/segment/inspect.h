// What the sluice-segment tool prints, as a library: rows as JSON lines, a
// human-readable summary, and a full verification.
#ifndef SLUICE_TOOLS_SEGMENT_INSPECT_H_
#define SLUICE_TOOLS_SEGMENT_INSPECT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/segment/segment_reader.h"

namespace sluice {
namespace tools {

// `s` as a JSON string literal (quotes included); bytes that are not valid
// UTF-8 are written as \u00XX.
std::string JsonString(absl::string_view s);
// The shortest decimal that reads back as `v`; "NaN", "Infinity" and
// "-Infinity" as strings (JSON has no such numbers).
std::string JsonDouble(double v);

struct DumpOptions {
  // Rows to print at most (0: all).
  uint64_t limit = 0;
};

// One JSON object per row: {"__time":"<ISO-8601>", <dimension>: "<value>" or
// null, ..., <metric>: <number>}; spills add "__partition" and "__offset"
// when they keep them.
absl::Status DumpJsonLines(segment::SegmentReader* reader, const DumpOptions& options,
                           std::ostream& out);

// Kind, size, checksum, segment metadata, interval, rows, schema, every
// column with its type, cardinality and bytes, and the Kafka provenance.
void PrintStats(const std::string& path, segment::SegmentReader* reader, std::ostream& out);

// Opens `path` (checksum verified) and runs SegmentReader::Verify.
absl::Status VerifyFile(const std::string& path, std::ostream& out);

}  // namespace tools
}  // namespace sluice

#endif  // SLUICE_TOOLS_SEGMENT_INSPECT_H_
