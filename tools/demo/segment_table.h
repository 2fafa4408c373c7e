// The demo's summary of the published segments: a short table (interval,
// shard = the segment's partition number within its interval, rows, size, the Kafka ranges each one holds, the sequence
// that built it, handoff state) and a total line.
#ifndef SLUICE_TOOLS_DEMO_SEGMENT_TABLE_H_
#define SLUICE_TOOLS_DEMO_SEGMENT_TABLE_H_

#include <string>
#include <vector>

#include "sluice/v1/common.pb.h"

namespace sluice {
namespace demo {

// At most `max_rows` segments are listed (the first and last halves, with a
// "... N more" line between); the total covers all of them.
std::string FormatSegmentTable(const std::vector<v1::SegmentDescriptor>& segments,
                               size_t max_rows = 20);

}  // namespace demo
}  // namespace sluice

#endif  // SLUICE_TOOLS_DEMO_SEGMENT_TABLE_H_
