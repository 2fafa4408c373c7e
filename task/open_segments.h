// The segments a task is building: one per (sequence, time interval) that
// got rows, each with its allocation (segment id, version, partition
// number), its in-memory index, its spill files and its record counts.
//
// Allocation goes through a SegmentAllocator. It happens when the first row
// of a (sequence, interval) arrives, as before this class existed: the
// interval is only known once the row is parsed, and allocating intervals
// ahead of need would create pending segments (and partition numbers, which
// replicas and replacements must agree on) for intervals that get no rows,
// which the supervisor's metadata would show. The allocator may block (and
// retry); the read loop pays that once per (sequence, interval).
//
// Not thread-safe: owned and used by the read loop only. The indexes leave
// through TakeBuilds and TakeSpills (to the persister).
#ifndef SLUICE_TASK_OPEN_SEGMENTS_H_
#define SLUICE_TASK_OPEN_SEGMENTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/granularity.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "task/segment_sink.h"
#include "task/sequences.h"
#include "task/supervisor_client.h"
#include "task/task_state.pb.h"

namespace sluice::task {

// Allocates the segment of one (sequence, interval); the same arguments give
// the same answer (the supervisor keys pending segments by them).
class SegmentAllocator {
 public:
  virtual ~SegmentAllocator() = default;
  // CANCELLED when the task stops while waiting.
  virtual absl::StatusOr<v1::AllocateSegmentResponse> Allocate(const std::string& sequence_name,
                                                               int64_t start_ms,
                                                               int64_t end_ms) = 0;
};

struct SupervisorSegmentAllocatorOptions {
  std::string datasource;
  std::string task_id;
  // Not owned.
  SupervisorClient* supervisor = nullptr;
  absl::Duration min_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // Sleeps up to the duration (less when a pause or stop comes); false when
  // the task stops.
  std::function<bool(absl::Duration)> sleep;
  std::string log_prefix;
};

// AllocateSegment at the supervisor, retried with backoff (common/retry)
// while the answer IsRetryable: UNAVAILABLE, DEADLINE_EXCEEDED or
// RESOURCE_EXHAUSTED.
class SupervisorSegmentAllocator final : public SegmentAllocator {
 public:
  explicit SupervisorSegmentAllocator(SupervisorSegmentAllocatorOptions options)
      : options_(std::move(options)) {}
  absl::StatusOr<v1::AllocateSegmentResponse> Allocate(const std::string& sequence_name,
                                                       int64_t start_ms, int64_t end_ms) override;

 private:
  const SupervisorSegmentAllocatorOptions options_;
};

// One segment being built: the rows of one sequence in one interval.
struct SegmentBuild {
  state::SegmentState record;
  // Null until a row arrives (after a restore or a persist).
  std::unique_ptr<SegmentIndex> index;
  // After a persist: the next index, continuing the spilled one's
  // segment-wide state (SegmentIndex::Successor), until a row arrives.
  std::unique_ptr<SegmentIndex> next_index;
  // Records of each partition slot in this segment (written into the
  // record by OpenSegments::Record).
  std::vector<int64_t> records_per_slot;
  // Spilled + in-memory rows (for maxRowsPerSegment).
  int64_t rows_total = 0;
};

class OpenSegments {
 public:
  // Not owned: engine, allocator. `partitions`: the task's, by slot.
  OpenSegments(SegmentEngine* engine, SegmentAllocator* allocator, Granularity granularity,
               std::vector<int32_t> partitions);
  OpenSegments(const OpenSegments&) = delete;
  OpenSegments& operator=(const OpenSegments&) = delete;

  // The build of `sequence` for the interval holding `timestamp_ms`, with an
  // index: allocated (and checked to be for that interval) on first use.
  absl::StatusOr<SegmentBuild*> For(const Sequence& sequence, int64_t timestamp_ms);

  // A segment of the restore point (its spills exist, at `spill_paths`): its
  // next rows go to the engine's RestoreIndex over those spills, so what the
  // segment's indexes share (its discovered dimension names) survives the
  // restart. Errors of reading the spills.
  absl::Status Restore(const state::SegmentState& record,
                       const std::vector<std::string>& spill_paths);
  // Drops the segments of sequences up to `published_id`.
  void Prune(int32_t published_id);
  // A segment of a closed sequence leaving for its direct build.
  struct DirectBuild {
    // The name of the built file to make (in the spill directory).
    std::string name;
    std::unique_ptr<SegmentIndex> index;
    // The segment's record: its spill files (the rows before the index),
    // records per partition.
    state::SegmentState record;
  };
  // Moves the non-empty index of every segment of sequence `sequence_id`
  // that has no spill (all its rows are in that index) out for its direct
  // build, with the name of its built file (named in the record, numbered
  // from *next_spill_number). Call before TakeSpills.
  std::vector<DirectBuild> TakeBuilds(int32_t sequence_id, int64_t* next_spill_number);
  // Moves every non-empty index out, each with the name of its new spill
  // file (named in the record, numbered from *next_spill_number).
  std::vector<std::pair<std::string, std::unique_ptr<SegmentIndex>>> TakeSpills(
      int64_t* next_spill_number);
  // Every segment's record, for the restore point.
  void AddTo(state::RestorePoint* point);
  // The records of one sequence's segments, interval order.
  std::vector<state::SegmentState> RecordsOf(int32_t sequence_id);
  // Spill and built file names the segments refer to.
  std::set<std::string> SpillFiles() const;
  size_t size() const { return segments_.size(); }

 private:
  // The record with the per-slot record counts written in.
  const state::SegmentState& Record(SegmentBuild& build) const;

  SegmentEngine* const engine_;
  SegmentAllocator* const allocator_;
  const Granularity granularity_;
  const std::vector<int32_t> partition_of_slot_;
  std::vector<int> slot_of_partition_;

  std::map<std::pair<int32_t, int64_t>, SegmentBuild> segments_;
  // The build of the last row (most rows go to the same one).
  SegmentBuild* last_ = nullptr;
  int32_t last_sequence_ = -1;
  int64_t last_start_ = 0;
  int64_t last_end_ = 0;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_OPEN_SEGMENTS_H_
