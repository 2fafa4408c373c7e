// What a compaction of one interval produced, before it is committed: the
// compacted segments as pushed to deep storage (descriptor: id, interval,
// version, partition number, rows, size, checksum, deep-storage path,
// provenance = the union of the inputs' ranges) with a local copy of each
// file, and the used segments they replace. The native commit
// (compaction_commit.h) and the Iceberg replace (iceberg_replace.h) both
// take it.
#ifndef SLUICE_SUPERVISOR_COMPACTION_COMPACTED_SEGMENT_H_
#define SLUICE_SUPERVISOR_COMPACTION_COMPACTED_SEGMENT_H_

#include <string>
#include <vector>

#include "sluice/v1/common.pb.h"

namespace sluice::supervisor {

struct CompactedSegment {
  v1::SegmentDescriptor descriptor;  // pushed: path is its deep-storage URI
  std::string local_path;            // a local copy of the same bytes
  std::string sha256;                // "sha256:<hex>" of those bytes
};

struct IntervalCompaction {
  std::string datasource;
  v1::Interval interval;
  // The used segments read (all of the interval's that were compacted).
  std::vector<v1::SegmentDescriptor> replaced;
  std::vector<CompactedSegment> outputs;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_COMPACTED_SEGMENT_H_
