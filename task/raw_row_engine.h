// An interim SegmentEngine until the segment library (common/segment/) lands:
// rows are kept as their JSON text with their time, no columns and no rollup.
// It is honest and complete for what the task needs (parse errors, time
// windows, durable spills, deterministic segment files with provenance and a
// checksum, a reader for tests and audits); the columnar engine replaces it
// behind the same interface.
//
// Spill file:   "SLRAWSP1", then per row [int64 time][uint32 len][bytes],
//               then [uint64 rows][uint64 xxh64 of everything before].
// Segment file: "SLUICE-RAW-SEGMENT 1\n", one line of JSON (a
//               sluice.v1.SegmentDescriptor without path and checksum), then
//               per row "<time> <len> <bytes>\n" sorted by (time, bytes), then
//               "xxh64:<16 hex>\n" over everything before. Replicas that read
//               the same records write the same bytes.
#ifndef SLUICE_TASK_RAW_ROW_ENGINE_H_
#define SLUICE_TASK_RAW_ROW_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/spec.pb.h"
#include "task/segment_sink.h"

namespace sluice::task {

// A schema whose timestamp spec is filled in (column, format). Metric input
// fields, when present in a row, must be numbers (BAD_NUMBER otherwise).
absl::StatusOr<std::unique_ptr<SegmentEngine>> NewRawRowEngine(const v1::DataSchema& schema);

// A raw segment file read back (tests, audits).
struct RawSegmentContents {
  v1::SegmentDescriptor header;
  // (time, JSON text), in file order.
  std::vector<std::pair<int64_t, std::string>> rows;
  std::string checksum;
};
// DATA_LOSS if the file is damaged (bad magic, truncated, checksum mismatch).
absl::StatusOr<RawSegmentContents> ReadRawSegment(const std::string& path);

}  // namespace sluice::task

#endif  // SLUICE_TASK_RAW_ROW_ENGINE_H_
