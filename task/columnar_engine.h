// The SegmentEngine of sluice: the segment library (common/segment/) behind
// the task's narrow interface. Rows are parsed with simdjson per the data
// schema, rolled up in an IncrementalIndex per (sequence, interval), spilled
// as self-describing checksummed spill files, and merged into columnar
// segment files whose bytes do not depend on how the rows were spilled, nor
// on whether they were: an index builds its segment directly (its rows and
// any earlier spills merged, no spill of them written and read back).
#ifndef SLUICE_TASK_COLUMNAR_ENGINE_H_
#define SLUICE_TASK_COLUMNAR_ENGINE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/segment/schema.h"
#include "sluice/v1/spec.pb.h"
#include "task/segment_sink.h"

namespace sluice::task {

// The engine of a data schema (converted by common/segment/schema_proto.h's
// SchemaFromProto, the one converter). INVALID_ARGUMENT naming the field by
// its path (`dataSchema.metricsSpec[1].type: ...`) for a schema the segment
// library, the transform or the row parser refuses.
absl::StatusOr<std::unique_ptr<SegmentEngine>> NewColumnarEngine(const v1::DataSchema& schema);

}  // namespace sluice::task

#endif  // SLUICE_TASK_COLUMNAR_ENGINE_H_
