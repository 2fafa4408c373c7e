// A sorted run of rows, the unit the merge works on: a snapshot of an
// in-memory index, or a spill (or segment) file. Internal to the segment
// library (merger.h); the task uses PersistIndex / BuildSegment.
#ifndef SLUICE_COMMON_SEGMENT_SORTED_RUN_H_
#define SLUICE_COMMON_SEGMENT_SORTED_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/format.h"
#include "common/segment/schema.h"
#include "common/segment/segment_writer.h"

namespace sluice {
namespace segment {

// The row a run is positioned on.
struct RunRow {
  int64_t time = 0;            // truncated to the query granularity
  const uint32_t* ids = nullptr;  // per dimension of the run (0 = null; i = dictionary[i - 1])
  const MetricCell* cells = nullptr;  // per schema metric
  int32_t partition = 0;       // rollup off only
  int64_t offset = 0;          // rollup off only
};

// Rows come in (time, ids) order, then (partition, offset) with rollup off;
// with rollup on no two rows of a run have the same (time, ids).
// Not thread-safe.
class SortedRun {
 public:
  virtual ~SortedRun() = default;

  // "spill /path/x.spill", "in-memory index": for error messages.
  virtual std::string Describe() const = 0;
  virtual const Schema& schema() const = 0;
  virtual Interval interval() const = 0;
  // The run's dimension columns; sorted by name when discovered.
  virtual const std::vector<std::string>& dimensions() const = 0;
  // Sorted distinct non-null values of dimension d, each used by some row.
  // A run that keeps its dictionaries in a file has dimension d's only
  // between LoadDictionary(d) and ReleaseDictionary(d); in-memory runs always.
  virtual const std::vector<absl::string_view>& dictionary(size_t d) const = 0;
  virtual absl::Status LoadDictionary(size_t /*d*/) { return absl::OkStatus(); }
  virtual void ReleaseDictionary(size_t /*d*/) {}
  // The dictionaries stay as they are while the run lives (an in-memory
  // run's): a merge of this run alone writes them without copying them.
  virtual bool keeps_dictionaries() const { return false; }
  virtual const std::vector<PartitionStats>& partitions() const = 0;
  virtual uint64_t input_records() const = 0;
  virtual uint64_t rows() const = 0;
  virtual int64_t min_time() const = 0;
  virtual int64_t max_time() const = 0;

  // Moves to the next row (the first on the first call); false at the end.
  virtual absl::StatusOr<bool> Next() = 0;
  // The current row; valid until the next call to Next().
  virtual const RunRow& row() const = 0;
};

}  // namespace segment
}  // namespace sluice

#endif  // SLUICE_COMMON_SEGMENT_SORTED_RUN_H_
