// Where a new task group of a stream supervisor starts reading: pure
// functions of what the supervisor knows (stored offsets, the end of the
// previous group, Kafka's watermarks, the spec), no I/O, so every rule is
// unit-tested on its own (start_offset_policy_test.cc).
//
// Per partition, first rule that applies:
//   1. the previous group of the partition was finalized: its end offset
//      ("previous group");
//   2. the datasource has a stored (committed) offset:
//      - below Kafka's earliest: with resetOffsetAutomatically, the earliest
//        (an automatic reset, "auto-reset to earliest"); without, nothing
//        starts (STORED_OFFSETS_UNAVAILABLE);
//      - else the stored offset ("stored");
//   3. otherwise the earliest offset if useEarliestOffset or the partition
//      was added after the supervisor first listed the topic (its records
//      are all new), else the latest.
#ifndef SLUICE_SUPERVISOR_START_OFFSET_POLICY_H_
#define SLUICE_SUPERVISOR_START_OFFSET_POLICY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/spec.h"
#include "common/offsets.h"
#include "supervisor/stream_metadata.h"

namespace sluice::supervisor {

struct StartOffsetInputs {
  // The partitions of the new group.
  std::vector<int32_t> partitions;
  // Stored offsets of the datasource (the publish CAS anchor).
  OffsetMap committed;
  // End offsets of finalized groups, for the group after them.
  OffsetMap next_offsets;
  // Kafka's watermarks of (at least) PartitionsNeedingWatermarks(); a
  // partition missing here counts as earliest = latest = 0.
  std::map<int32_t, PartitionWatermarks> watermarks;
  // The partitions the topic had when the supervisor first listed it.
  std::set<int32_t> first_partitions;
  // ioConfig.useEarliestOffset, tuningConfig.resetOffsetAutomatically.
  bool use_earliest_offset = false;
  bool reset_offset_automatically = false;
};

struct StartOffsetDecision {
  // Start offset of every partition (incomplete when `unavailable` is set).
  OffsetMap start;
  // Where each came from, "<partition>:<source>" in partition order, for the
  // log line (previous group, stored, auto-reset to earliest, earliest,
  // latest).
  std::vector<std::string> sources;
  // Partitions whose stored offset Kafka no longer has, reset to its
  // earliest offset (resetOffsetAutomatically): the stored offsets must be
  // moved there before the group starts.
  OffsetMap auto_reset;
  // Set when a stored offset is below Kafka's earliest and automatic reset
  // is off: the group must not start (the message says what to do).
  std::optional<std::string> unavailable;
};

// The partitions of `partitions` whose start needs Kafka's watermarks (no
// previous group's end to continue from), in their order.
std::vector<int32_t> PartitionsNeedingWatermarks(const std::vector<int32_t>& partitions,
                                                 const OffsetMap& next_offsets);

// Applies the rules above to every partition, in order; stops at the first
// unavailable stored offset.
StartOffsetDecision DecideStartOffsets(const StartOffsetInputs& inputs);

// The message-time window of a new group (TaskSpec minimum/maximum message
// time, 0 = unbounded), created at `now_ms`: lateMessageRejectionStartDateTime
// or now - lateMessageRejectionPeriod; now + taskDuration +
// earlyMessageRejectionPeriod.
struct MessageTimeBounds {
  int64_t min_ms = 0;
  int64_t max_ms = 0;
};
MessageTimeBounds GroupMessageTimeBounds(const SpecTimings& timings, int64_t now_ms);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_START_OFFSET_POLICY_H_
