// Where a record goes: the task's partitions as dense slots, and the route
// table of the unpublished sequences (a snapshot of the sequence list) with
// each sequence's range per slot. It also keeps, once, each sequence's
// accounting: record counts per partition (rows, unparseable, thrown away)
// and rows after rollup; a refresh carries them over for the sequences that
// are still in the list and drops those of published ones.
//
// Lookups are array accesses (the read loop calls them per record), with a
// per-slot hint: the records of a partition come in offset order, so the
// route of the next record is the same or a later one.
//
// Not thread-safe: owned and used by the read loop only.
#ifndef SLUICE_TASK_RECORD_ROUTER_H_
#define SLUICE_TASK_RECORD_ROUTER_H_

#include <cstdint>
#include <map>
#include <vector>

#include "common/spec.h"
#include "common/offsets.h"
#include "task/sequences.h"
#include "task/task_state.pb.h"

namespace sluice::task {

class RecordRouter {
 public:
  using Counts = std::map<int32_t, state::PartitionCounts>;

  // `partitions`: the task's partitions (each >= 0).
  explicit RecordRouter(std::vector<int32_t> partitions);
  RecordRouter(const RecordRouter&) = delete;
  RecordRouter& operator=(const RecordRouter&) = delete;

  // ---- slots ----
  size_t slots() const { return partition_of_slot_.size(); }
  // -1 if the task does not read `partition`.
  int SlotOf(int32_t partition) const {
    return partition >= 0 && partition < static_cast<int32_t>(slot_of_partition_.size())
               ? slot_of_partition_[partition]
               : -1;
  }
  int32_t PartitionOf(int slot) const { return partition_of_slot_[slot]; }
  // Partition -> per-slot value.
  OffsetMap ToOffsetMap(const std::vector<int64_t>& per_slot) const;

  // ---- routes ----
  // Rebuilds the table from `list` (its sequences, task end, final end) and
  // resets the hints. Accounting of sequences no longer in the list goes.
  void Refresh(const SequenceList& list);
  const std::vector<Sequence>& routes() const { return routes_; }
  int route_count() const { return static_cast<int>(routes_.size()); }
  int64_t route_start(int route, int slot) const { return routes_data_[route].start[slot]; }
  // The task's end per slot (END_OF_PARTITION until fixed).
  int64_t task_end(int slot) const { return task_end_[slot]; }
  bool final_end_fixed() const { return final_end_fixed_; }
  // The route (index in routes()) of `offset` on `slot`, or -1 if no
  // sequence takes it. Offsets of a slot must not go down between Refresh
  // calls (the hint moves forward only).
  int Route(int slot, int64_t offset);
  // The latest sequence, still open (checkpoint triggers concern it only).
  bool IsOpenLatest(int route) const {
    return route == route_count() - 1 && !routes_[route].checkpointed;
  }

  // ---- accounting ----
  state::PartitionCounts& counts(int route, int slot) { return routes_data_[route].counts[slot]; }
  int64_t& rows(int route) { return routes_data_[route].rows; }
  // By sequence id; a sequence not in the table has none (zero).
  Counts CountsOf(int32_t sequence_id) const;
  int64_t RowsOf(int32_t sequence_id) const;
  // Restore: sets the counts of a listed sequence's partitions, adds rows.
  void RestoreCounts(const state::SequenceStats& stats);
  void AddRows(int32_t sequence_id, int64_t rows);
  // Whether `sequence_id` is in the table.
  bool Has(int32_t sequence_id) const { return IndexOf(sequence_id) >= 0; }
  // The accounting of every sequence in the table, for the restore point.
  void AddTo(state::RestorePoint* point) const;

 private:
  struct RouteData {
    int32_t id = 0;
    std::vector<int64_t> start;
    std::vector<int64_t> end;
    std::vector<state::PartitionCounts> counts;
    int64_t rows = 0;
  };
  int IndexOf(int32_t sequence_id) const;

  std::vector<int> slot_of_partition_;
  std::vector<int32_t> partition_of_slot_;
  std::vector<Sequence> routes_;
  std::vector<RouteData> routes_data_;
  std::vector<int64_t> task_end_;
  bool final_end_fixed_ = false;
  // Per slot: the route of the last record.
  std::vector<int> hint_;
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_RECORD_ROUTER_H_
