// Converts the wire contract's DataSchema into the segment library's Schema,
// filling the defaults the contract documents: timestamp column "timestamp",
// format "auto", query granularity NONE, rollup on, a metric's field_name
// defaulting to its name.
#ifndef SLUICE_COMMON_SEGMENT_SCHEMA_PROTO_H_
#define SLUICE_COMMON_SEGMENT_SCHEMA_PROTO_H_

#include "absl/status/statusor.h"
#include "common/segment/schema.h"
#include "sluice/v1/spec.pb.h"

namespace sluice {
namespace segment {

// INVALID_ARGUMENT naming the field for unknown formats, metric types or
// granularities, and for schemas ValidateSchema refuses.
absl::StatusOr<Schema> SchemaFromProto(const sluice::v1::DataSchema& proto);

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SCHEMA_PROTO_H_
