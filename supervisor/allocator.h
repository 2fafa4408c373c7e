// Segment id allocation (AllocateSegment): idempotent on (datasource,
// sequence name, interval), so replicas and replacement tasks of a group get
// the same ids; the version of an interval is fixed at its first allocation.
// What a caller can make the store keep is bounded: at most
// max_intervals_per_sequence allocations per sequence (the supervisor's
// manager also allows only sequences it checkpointed), and housekeeping
// deletes the allocations of ended groups (metadata_store.h).
#ifndef SLUICE_SUPERVISOR_ALLOCATOR_H_
#define SLUICE_SUPERVISOR_ALLOCATOR_H_

#include "absl/status/statusor.h"
#include "common/granularity.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

struct AllocatorOptions {
  MetadataStore* store = nullptr;
  Clock* clock = Clock::Real();
  // The most intervals one sequence may hold allocations in. A sequence
  // needs one per segment-granularity bucket its rows fall in (late data
  // spreads it); past this the allocation is FAILED_PRECONDITION, not kept.
  int64_t max_intervals_per_sequence = 10000;
};

class Allocator {
 public:
  explicit Allocator(AllocatorOptions options) : options_(options) {}

  // The interval must be exactly one bucket of `segment_granularity`, within
  // years 0001 to 9999 (INVALID_ARGUMENT otherwise); NOT_FOUND for an unknown datasource;
  // FAILED_PRECONDITION for a new interval of a sequence that holds
  // max_intervals_per_sequence allocations already.
  absl::StatusOr<v1::AllocateSegmentResponse> Allocate(const v1::AllocateSegmentRequest& request,
                                                       Granularity segment_granularity);

 private:
  const AllocatorOptions options_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_ALLOCATOR_H_
