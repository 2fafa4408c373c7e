// k-way merge of sorted runs into one segment or spill file.
//
// The output depends only on the rows of the runs, never on how rows were
// split between runs or in which order the runs are given: dictionaries are
// merged and sorted, rows are ordered by (time, dimension values) and, with
// rollup off, (partition, offset); with rollup on rows with equal keys from
// different runs are combined exactly (see IncrementalIndex).
#ifndef SLUICE_COMMON_SEGMENT_MERGER_H_
#define SLUICE_COMMON_SEGMENT_MERGER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/segment/format.h"
#include "common/segment/segment_writer.h"
#include "common/segment/sorted_run.h"

namespace sluice {
namespace segment {

struct MergeOptions {
  std::string path;
  // kind, compression, rows_per_block, metadata (interval; for segments also
  // datasource, version, partition number, id, provenance topic and ranges),
  // schema and caller_metadata. The rest (dimensions, partition statistics,
  // input records, row count, time range, provenance rows) is computed.
  FileHeader header;
  int zstd_level = 3;
};

// FAILED_PRECONDITION when there is nothing to merge, when a run was built
// with another schema or interval, when two runs hold records of the same
// partition in overlapping offset ranges (the same records twice), or, for
// segments, when a run holds records outside the provenance ranges or the
// rows claimed by a partition's several ranges (a compaction) do not add up
// to the runs' records of it; INVALID_ARGUMENT for reversed or overlapping
// provenance ranges.
absl::StatusOr<WrittenFile> MergeRuns(const std::vector<SortedRun*>& runs, MergeOptions options);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_MERGER_H_
