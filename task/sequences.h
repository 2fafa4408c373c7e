// The sequence list of a task (Druid's SequenceMetadata list): which Kafka
// records belong to which sequence, and the rules that change it.
//
// A task splits what it reads into sequences named <base>_<id>. Sequence i
// covers records [start[p], end[p]) of each partition p; sequence i+1 starts
// where i ends; the latest one is open (end END_OF_PARTITION) until
// SetEndOffsets closes it. A closed ("checkpointed") sequence whose every
// partition was read to its end is published and removed from the list.
//
// Plain value type, not thread-safe: the owner (SequenceStore) guards it. Every
// mutation is meant to be persisted (Save) before it is acted on.
#ifndef SLUICE_TASK_SEQUENCES_H_
#define SLUICE_TASK_SEQUENCES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/offsets.h"
#include "task/task_state.pb.h"

namespace sluice::task {

struct Sequence {
  int32_t id = 0;
  std::string name;
  OffsetMap start;
  OffsetMap end;
  bool checkpointed = false;
};

// "<base>_<id>".
std::string SequenceName(absl::string_view base_name, int32_t id);

class SequenceList {
 public:
  // An empty list (no partitions); use the factories for a real one.
  SequenceList() = default;

  // Sequences from a task's checkpoints (sequence id -> start offsets, ids
  // ascending): sequence i runs from checkpoint i to checkpoint i+1 and is
  // closed; the last one is open. Every checkpoint must name exactly
  // `partitions`, with offsets that never go down. INVALID_ARGUMENT naming
  // the problem otherwise.
  static absl::StatusOr<SequenceList> FromCheckpoints(
      absl::string_view base_name, const std::vector<std::pair<int32_t, OffsetMap>>& checkpoints,
      const std::vector<int32_t>& partitions);

  // From the persisted form, checked the same way (a corrupt or foreign file
  // is DATA_LOSS, with the reason).
  static absl::StatusOr<SequenceList> FromRecord(absl::string_view base_name,
                                                 const state::SequenceFile& record,
                                                 const std::vector<int32_t>& partitions);
  state::SequenceFile ToRecord() const;

  // JSON file (WriteFileAtomically). Load: NOT_FOUND if absent.
  absl::Status Save(const std::string& path) const;
  static absl::StatusOr<SequenceList> Load(const std::string& path, absl::string_view base_name,
                                           const std::vector<int32_t>& partitions);

  const std::vector<Sequence>& sequences() const { return sequences_; }
  bool empty() const { return sequences_.empty(); }
  // The latest sequence; the list must not be empty.
  const Sequence& latest() const { return sequences_.back(); }
  // Task-wide end offsets: END_OF_PARTITION until SetEndOffsets(finish=true).
  const OffsetMap& task_end() const { return task_end_; }
  // Whether SetEndOffsets(finish=true) fixed the task's final end.
  bool final_end_fixed() const;
  int32_t last_published_id() const { return last_published_id_; }

  // Index of the first sequence with start[p] <= offset < end[p], or -1.
  int Route(int32_t partition, int64_t offset) const;

  // Whether every partition of `sequence` was read to its end: it is closed
  // and current[p] >= end[p] for every p.
  static bool IsFullyRead(const Sequence& sequence, const OffsetMap& current);

  struct SetEndOutcome {
    // The call repeated the previous one: nothing changed.
    bool duplicate = false;
    // The latest sequence's end offsets after the call.
    OffsetMap end_offsets;
    int32_t latest_id = 0;
  };
  // SetEndOffsets with the rules of task_service.proto, in order:
  // - the offsets must name exactly the task's partitions, each a real offset
  //   (INVALID_ARGUMENT);
  // - an exact repeat (finish=false and offsets == latest start, finish=true
  //   and offsets == latest end) is a duplicate: nothing changes;
  // - the latest sequence must not be closed already (FAILED_PRECONDITION);
  // - the task's reads must be fenced (FAILED_PRECONDITION): it is paused, or
  //   `current` counts every record the read loop has routed or is routing
  //   (TaskControl's claimed offsets), so no record at or past the new end
  //   can land in the closing sequence;
  // - each offset must be >= `current` (ABORTED, "already read past": the
  //   supervisor falls back to pause-and-max) and >= the latest sequence's
  //   start (INVALID_ARGUMENT).
  // finish=false closes the latest sequence and opens the next one at these
  // offsets; finish=true closes it for good and fixes the task's end.
  // Moving a checkpoint back: offsets before the latest sequence's start on
  // some partition (and not past the task's reads) lower that start, and the
  // end of the sequence before it, to them there. If the offsets are at or
  // before the start everywhere and finish=false, that is all (the latest
  // stays open); otherwise the latest sequence then closes at the offsets as
  // above (it is empty on the moved partitions). ABORTED if the task read
  // past the new boundary, INVALID_ARGUMENT if it is before the previous
  // sequence's start or that sequence is published. On an error the list is
  // unchanged.
  absl::StatusOr<SetEndOutcome> SetEndOffsets(const OffsetMap& offsets, bool finish,
                                              const OffsetMap& current, bool fenced);

  // Removes the oldest sequence once it is published. FAILED_PRECONDITION if
  // `id` is not the oldest sequence or it is not closed.
  absl::Status RemovePublished(int32_t id);

 private:
  SequenceList(std::string base_name, std::vector<int32_t> partitions)
      : base_name_(std::move(base_name)), partitions_(std::move(partitions)) {}

  // Closes the latest sequence at `offsets`: for good (finish), or opening
  // the next one there.
  SetEndOutcome CloseLatest(const OffsetMap& offsets, bool finish);
  // SetEndOffsets with offsets before the latest sequence's start.
  absl::StatusOr<SetEndOutcome> MoveCheckpointBack(const OffsetMap& offsets, bool finish,
                                                   const OffsetMap& current);
  // Checks the invariants; `context` prefixes the message.
  absl::Status Validate(absl::StatusCode code) const;

  std::string base_name_;
  std::vector<int32_t> partitions_;
  std::vector<Sequence> sequences_;
  OffsetMap task_end_;
  int32_t last_published_id_ = -1;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_SEQUENCES_H_
