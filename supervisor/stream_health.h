// What is wrong between a datasource and its Kafka topic, for the status:
// Kafka unreachable, stored offsets no longer available
// (below the earliest offset), or stored offsets past the end (above the
// latest). Pure functions of what the supervisor last saw.
#ifndef SLUICE_SUPERVISOR_STREAM_HEALTH_H_
#define SLUICE_SUPERVISOR_STREAM_HEALTH_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/offsets.h"
#include "supervisor/stream_metadata.h"

namespace sluice::supervisor {

enum class StreamProblem {
  kNone,
  kUnreachable,
  kStoredOffsetsUnavailable,
  kStoredOffsetsPastEnd,
};

struct StreamVerdict {
  StreamProblem problem = StreamProblem::kNone;
  // Names the partitions and offsets (empty for kNone).
  std::string message;
};

// Whether a metadata query's error means Kafka could not be reached
// (UNAVAILABLE, DEADLINE_EXCEEDED) or refused to let the datasource in (an
// authentication failure, common/kafka/auth_failure.h: a wrong password, a
// refused certificate; the state is then UNABLE_TO_CONNECT_TO_STREAM or
// LOST_CONTACT_WITH_STREAM, and the recent error names the mechanism), not
// an answer such as an unknown topic.
bool IsUnreachable(const absl::Status& status);

// Stored offsets against watermarks queried after the offsets were read (so
// a publish in between cannot put a stored offset past a stale latest).
// Past the end: any partition whose stored offset is above its latest.
// Unavailable: a partition in `idle` (no group reads it: the next group
// starts from the stored offset) whose stored offset is below its earliest,
// unless `reset_automatically` (the supervisor resets it). Partitions
// missing from `marks` are not judged. Past the end is reported first.
StreamVerdict CheckStoredOffsets(const OffsetMap& stored,
                                 const std::map<int32_t, PartitionWatermarks>& marks,
                                 const std::set<int32_t>& idle, bool reset_automatically);

// A task's OffsetOutOfRange report (partition -> the offset it wanted)
// judged against Kafka's own watermarks and the committed offsets, never
// against the task's word (issue "Hostile peers and producers", point 6).
// Per reported partition p, wanted N, committed c (N when none), Kafka
// holding [earliest, latest]:
//  - earliest <= N <= latest: Kafka holds N, the report is false: not reset,
//    the task is suspect.
//  - c within [earliest, latest]: Kafka holds the committed offset: not
//    reset (an N before it: the task reads where no group should, suspect;
//    an N past latest: the records may not exist yet).
//  - c and N below earliest: retention deleted [c, earliest) before it was
//    ingested: reset to earliest (always forward), earliest - c records lost.
//  - c past latest: Kafka holds nothing from c on (topic recreated or
//    truncated): no record was lost; never reset automatically (it would
//    move the offset back).
// Partitions missing from `marks` are not reset.
struct OutOfRangeJudgement {
  // Partition -> its new committed offset (Kafka's earliest, > committed).
  OffsetMap reset;
  // Records lost per reset partition (deleted before they were ingested).
  OffsetMap lost;
  // The report contradicts Kafka or the committed offsets.
  bool task_suspect = false;
  // One sentence per reported partition, naming task, offsets and verdict.
  std::vector<std::string> findings;
};

OutOfRangeJudgement JudgeOutOfRangeReport(const std::string& task_id, const OffsetMap& wanted,
                                          const OffsetMap& committed,
                                          const std::map<int32_t, PartitionWatermarks>& marks);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STREAM_HEALTH_H_
