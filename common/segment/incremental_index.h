// The in-memory index of one (sequence, interval): parsed rows, rolled up as
// they arrive.
//
//   SLUICE_ASSIGN_OR_RETURN(auto index, IncrementalIndex::Create({schema, interval}));
//   SLUICE_RETURN_IF_ERROR(index->Add(row, partition, offset));
//   if (index->rows() >= max_rows_in_memory ||
//       index->estimated_bytes() >= max_bytes_in_memory) {
//     SLUICE_ASSIGN_OR_RETURN(SpillDescriptor spill, PersistIndex(index.get(), spill_options));
//   }
//
// Rows are keyed by (time truncated to the query granularity, dimension
// values). With rollup on, a row whose key is already present is merged into
// it (count adds 1, longSum wraps around, doubleSum adds exactly, min/max
// compare; doubleMin/Max in IEEE totalOrder); with rollup off every row is
// kept with its (partition, offset), which orders rows with equal keys.
// Dimension values are dictionary-encoded on the way in.
//
// Nothing here depends on the order rows arrive in: the snapshot (used by
// persist and merge) sorts dictionaries and rows.
//
// Not thread-safe: one writer thread; neither copyable nor movable.
#ifndef SLUICE_COMMON_SEGMENT_INCREMENTAL_INDEX_H_
#define SLUICE_COMMON_SEGMENT_INCREMENTAL_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/exact_sum.h"
#include "common/segment/format.h"
#include "common/segment/format_limits.h"
#include "common/segment/input_row.h"
#include "common/segment/schema.h"
#include "common/segment/sorted_run.h"
#include "common/segment/value_dictionary.h"

namespace sluice {
namespace segment {

// The discovered dimension names of one segment (at most
// kMaxDiscoveredDimensions, format_limits.h), shared by the indexes that
// fill it one after another (each persist starts a new index), so that the
// bound holds for the segment file their spills merge into. Used by the one
// thread that adds rows.
class SegmentDimensions {
 public:
  explicit SegmentDimensions(size_t max = kMaxDiscoveredDimensions) : max_(max) {}
  bool Contains(absl::string_view name) const { return names_.contains(name); }
  // Names already in the segment (its spills' after a restart): taken even
  // past the bound, which then admits no new name.
  void Add(absl::string_view name) { names_.emplace(name); }
  size_t size() const { return names_.size(); }
  size_t max() const { return max_; }

 private:
  size_t max_;
  absl::flat_hash_set<std::string> names_;
};

struct IndexOptions {
  Schema schema;
  // Every row's timestamp must fall in [start_ms, end_ms) (the segment
  // granularity bucket the caller chose for it).
  Interval interval;
  // With discovery: the segment's names, shared with the segment's other
  // indexes. Null: the index has its own, bounded by kMaxDiscoveredDimensions.
  std::shared_ptr<SegmentDimensions> segment_dimensions;
};

class IncrementalIndex {
 public:
  // INVALID_ARGUMENT for an invalid schema or an empty interval.
  static absl::StatusOr<std::unique_ptr<IncrementalIndex>> Create(const IndexOptions& options);
  ~IncrementalIndex();
  IncrementalIndex(const IncrementalIndex&) = delete;
  IncrementalIndex& operator=(const IncrementalIndex&) = delete;

  // Adds one parsed record. INVALID_ARGUMENT (and nothing added) if its time
  // is outside the interval, its shape does not match the schema, or the
  // partition or offset is negative; RESOURCE_EXHAUSTED past 2^32 - 1 rows.
  // OUT_OF_RANGE (and nothing added) if it would bring the segment's
  // discovered dimensions past their bound (SegmentDimensions): the record
  // is at fault, not the index, which takes the next row as usual.
  absl::Status Add(const InputRow& row, int32_t partition, int64_t offset) {
    return Add(row, partition, offset, nullptr);
  }
  // The same with the hashes PrefetchRow gave for this row (null: Add
  // computes them).
  absl::Status Add(const InputRow& row, int32_t partition, int64_t offset,
                   const uint64_t* hashes);

  // The first step of a later Add of `row`, taken a record ahead so that its
  // cache misses overlap the work in between: the hash of each listed
  // dimension value (ValueDictionary::Hash; nothing for an absent value)
  // into hashes[0, row.dims.size()), and a prefetch of the dictionary slot
  // its lookup reads first. False (nothing done) for a row Add would not
  // take with hashes: discovered dimensions, or a shape other than the
  // schema's. Changes nothing; the hashes do not depend on the index, so
  // another index of the same schema may take them.
  bool PrefetchRow(const InputRow& row, uint64_t* hashes) const;

  // Rows held (after rollup).
  int64_t rows() const { return rows_; }
  // Records added since creation or the last Clear().
  int64_t input_records() const { return input_records_; }
  bool empty() const { return input_records_ == 0; }
  // Bytes allocated for rows, dictionaries, the rollup table and exact sums.
  // Kept up to date by every change (the task asks twice a record).
  int64_t estimated_bytes() const { return estimated_bytes_; }

  const Schema& schema() const { return schema_; }
  const Interval& interval() const { return interval_; }
  // Records per Kafka partition, sorted by partition.
  std::vector<PartitionStats> partition_stats() const;

  // Drops every row and frees the memory.
  void Clear();

  // A sorted view of the rows for persist and merge. The index must not be
  // changed while the run is in use.
  std::unique_ptr<SortedRun> Snapshot() const;

 private:
  class Arena;
  class Run;
  struct RowHash {
    const IncrementalIndex* index;
    size_t operator()(uint32_t row) const;
  };
  struct RowEq {
    const IncrementalIndex* index;
    bool operator()(uint32_t a, uint32_t b) const;
  };
  static constexpr uint32_t kRowsPerChunk = 4096;

  explicit IncrementalIndex(const IndexOptions& options);
  void Layout(size_t dim_capacity);
  uint32_t* RowAt(uint32_t row) const {
    return chunks_[row / kRowsPerChunk].get() + size_t{row % kRowsPerChunk} * stride_;
  }
  // `hash` is ValueDictionary::Hash(value).
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Intern(size_t dim, absl::string_view value,
                                               uint64_t hash) {
    const uint32_t id = dicts_[dim].Find(value, hash);
    return id != 0 ? id : InternNew(dim, value, hash);
  }
  // Intern of a value the dictionary does not hold (out of line: the read
  // loop's common case is a value seen before).
  uint32_t InternNew(size_t dim, absl::string_view value, uint64_t hash);
  absl::StatusOr<size_t> DiscoveredDimension(absl::string_view name);
  void Aggregate(uint32_t* into, const uint32_t* from);
  uint64_t KeyHash(uint32_t row) const;

  Schema schema_;
  Interval interval_;
  bool discover_;
  bool rollup_;

  // Dimensions in the order first seen (listed: schema order).
  std::vector<std::string> dims_;
  absl::flat_hash_map<std::string, size_t> dim_by_name_;
  absl::flat_hash_set<std::string> metric_names_;
  std::vector<ValueDictionary> dicts_;
  std::vector<uint64_t> value_hashes_;  // Add's scratch: each listed dimension's value hash
  std::unique_ptr<Arena> arena_;
  std::vector<uint64_t> dim_stamp_;  // discovery: last Add that set the dimension
  std::shared_ptr<SegmentDimensions> segment_dimensions_;  // discovery
  absl::flat_hash_set<absl::string_view> new_names_;     // Add's scratch
  uint64_t stamp_ = 0;

  // Row layout in 32-bit units: time (2), ids (dim_capacity_), metrics
  // (2 each), then partition (1) + offset (2) with rollup off, or one flag
  // word per 32 doubleSum metrics with rollup on (bit set: the slot holds an
  // index into sums_ instead of a double).
  size_t dim_capacity_ = 0;
  size_t stride_ = 0;
  size_t key_units_ = 0;
  size_t metrics_at_ = 0;
  size_t extra_at_ = 0;
  std::vector<int> sum_slot_;  // metric -> its doubleSum number, or -1
  // What Add stores for each metric, decided once: the input (a long, or a
  // double's bits) when the row has one, else the metric's identity (count:
  // 1, reading no input).
  struct MetricInputUse {
    uint64_t absent = 0;
    bool reads_input = false;
    bool reads_double = false;
  };
  static MetricInputUse MetricInputOf(MetricType type);
  std::vector<MetricInputUse> metric_inputs_;
  size_t num_sums_ = 0;
  std::vector<std::unique_ptr<uint32_t[]>> chunks_;

  uint32_t rows_ = 0;
  int64_t input_records_ = 0;
  absl::flat_hash_set<uint32_t, RowHash, RowEq> rollup_set_;
  std::vector<uint64_t> hashes_;  // rollup: the key hash of each row
  std::vector<ExactSum> sums_;
  int64_t sums_heap_bytes_ = 0;
  // Records per partition, sorted by partition; a task's rows come in runs
  // of one partition (a fetch batch), so Add looks at the last one first.
  std::vector<PartitionStats> partitions_;
  size_t last_partition_ = 0;  // index into partitions_ of the last Add's
  PartitionStats& StatsOf(int32_t partition) {
    if (last_partition_ < partitions_.size() &&
        partitions_[last_partition_].partition == partition) {
      return partitions_[last_partition_];
    }
    return StatsOfNew(partition);
  }
  // StatsOf a partition other than the last Add's.
  PartitionStats& StatsOfNew(int32_t partition);
  // estimated_bytes() runs twice per record (the task's memory accounting):
  // the dictionaries' and dimension names' share is kept up to date here
  // (Intern adds what an insert grew) instead of summed over every
  // dictionary on each count.
  int64_t dictionary_bytes_ = 0;
  void RecountDictionaryBytes();
  // estimated_bytes(): a new value adds what it grew (InternNew); Add
  // recounts it all (RecountBytes) when its row may have grown something
  // else: always with rollup (the rollup table, exact sums), without only
  // when it set bytes_stale_ (a new rows chunk or partition); every other
  // change recounts at once.
  int64_t estimated_bytes_ = 0;
  bool bytes_stale_ = false;
  void RecountBytes();
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_INCREMENTAL_INDEX_H_
