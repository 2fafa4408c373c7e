// The end offsets a pauseless checkpoint round proposes (docs/protocol.md
// "Checkpoint round"): the per-partition maximum of the replicas' current
// offsets plus a margin, so that no replica reads past them before
// SetEndOffsets reaches it. The margin is the partition's read rate times
// the time the round takes from reading the offsets to the last
// SetEndOffsets (measured on the previous round and this one's offset
// reads), times a safety factor, clamped to [min_margin, max_margin].
//
// Plain functions, no I/O.
#ifndef SLUICE_SUPERVISOR_PAUSELESS_MARGIN_H_
#define SLUICE_SUPERVISOR_PAUSELESS_MARGIN_H_

#include <cstdint>
#include <map>

#include "absl/time/time.h"
#include "common/offsets.h"
#include "common/spec.h"

namespace sluice::supervisor {

struct PauselessMarginOptions {
  // Records per partition, at least: covers the records a task claims ahead
  // of those it routed (the worker's --claim_chunk_records) and a read rate
  // that was not measurable yet.
  int64_t min_margin = 300;
  int64_t max_margin = 1000000;
  // Multiplies the expected window (jitter, a replica faster than the
  // maximum's).
  double safety_factor = 4.0;
  // The expected window is at least this long.
  absl::Duration min_window = absl::Milliseconds(5);
  // A checkpoint past the latest offsets known this long after it was
  // recorded is moved back to what the replicas read (the records it waits
  // for did not come; docs/protocol.md "Moving a checkpoint back").
  absl::Duration stalled_checkpoint_after = absl::Seconds(5);
};

// Offsets read at a time (the maximum over the replicas).
struct OffsetObservation {
  OffsetMap offsets;
  absl::Time at = absl::InfinitePast();
};

// Offsets per second of each partition of `now` between the two
// observations; 0 for a partition `before` lacks, or when no time passed.
std::map<int32_t, double> ReadRates(const OffsetObservation& before,
                                    const OffsetObservation& now);

// The margin of each partition for `window`.
std::map<int32_t, int64_t> PauselessMargins(const std::map<int32_t, double>& rates,
                                            absl::Duration window,
                                            const PauselessMarginOptions& options);

// Records a partition is expected to get during `window` at `rate` (with
// the safety factor, without the minimum margin; at most max_margin): how
// far an end may lie past the records known to exist. 0 for a partition
// that gets less than one record in that time.
int64_t ExpectedArrivals(double rate, absl::Duration window,
                         const PauselessMarginOptions& options);

// max + margin per partition of `max` (END_OF_PARTITION stays).
OffsetMap PauselessEndOffsets(const OffsetMap& max, const std::map<int32_t, int64_t>& margins);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_PAUSELESS_MARGIN_H_
