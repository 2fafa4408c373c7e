// The SegmentEngine of sluice: the segment library (common/segment/) behind
// the task's narrow interface. Rows are parsed with simdjson per the data
// schema, rolled up in an IncrementalIndex per (sequence, interval), spilled
// as self-describing checksummed spill files, and merged into columnar
// segment files whose bytes do not depend on how the rows were spilled.
#ifndef SLUICE_TASK_COLUMNAR_ENGINE_H_
#define SLUICE_TASK_COLUMNAR_ENGINE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/segment/schema.h"
#include "sluice/v1/spec.pb.h"
#include "task/segment_sink.h"

namespace sluice::task {

// The segment library's schema for a data schema (defaults filled in the
// same way as the supervisor's). INVALID_ARGUMENT naming the problem.
absl::StatusOr<segment::Schema> SegmentSchemaFromProto(const v1::DataSchema& schema);

absl::StatusOr<std::unique_ptr<SegmentEngine>> NewColumnarEngine(const v1::DataSchema& schema);

}  // namespace sluice::task

#endif  // SLUICE_TASK_COLUMNAR_ENGINE_H_
