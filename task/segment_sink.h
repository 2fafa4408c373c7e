// The narrow interface between a task's read loop and the segment library:
// parse a record value into a row, add rows to an in-memory index per
// (sequence, time interval), spill an index to a durable file, and build a
// segment file from the spills of one (sequence, interval) and, for a
// sequence whose rows are still in memory when it ends, from its index
// directly (no spill written and read back).
//
// The task never looks inside rows, spills or segment files; it only needs a
// row's time (to pick its interval and apply the message time window), the
// index's size estimates (persist and checkpoint triggers), and the built
// file's row count, size and checksum (the segment descriptor it publishes).
//
// Threading: a RowParser is used by one thread (the read loop); a SegmentIndex
// by one thread at a time (the read loop adds rows, then hands the full index
// to the persister thread, which spills it while the loop adds to a new one).
// BuildSegment may run on another thread (the publisher) concurrently with
// parsing, adding and spilling, on spills no index writes any more; an
// index's own Build runs where its Spill would (the persister thread).
#ifndef SLUICE_TASK_SEGMENT_SINK_H_
#define SLUICE_TASK_SEGMENT_SINK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/segment/record_envelope.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/spec.pb.h"

namespace sluice::task {

// A parsed record value. The engine owns its contents; the task reads only
// its time and whether the spec's transformSpec filter threw it away.
class ParsedRow {
 public:
  virtual ~ParsedRow() = default;
  int64_t timestamp_ms() const { return timestamp_ms_; }
  // The transformSpec filter rejected the row: count it as thrown away and
  // do not add it to an index (its other contents mean nothing).
  bool thrown_away() const { return thrown_away_; }

 protected:
  int64_t timestamp_ms_ = 0;
  bool thrown_away_ = false;
};

// Why a record value is not a row.
struct RowParseError {
  // NOT_JSON, NO_TIMESTAMP, BAD_TIMESTAMP, BAD_NUMBER, VALUE_TOO_LARGE, ...
  std::string kind;
  std::string message;
};

class RowParser {
 public:
  virtual ~RowParser() = default;
  // Parses one record value. Returns the row (valid until the next call), or
  // nullptr with *error filled in when the value cannot be ingested.
  virtual const ParsedRow* Parse(absl::string_view value, RowParseError* error) = 0;
  // The same with the record's envelope columns beside the value's fields
  // (the kafka input format; the value's fields win on a name clash).
  virtual const ParsedRow* Parse(absl::string_view value, const segment::RecordEnvelope& envelope,
                                 RowParseError* error) = 0;
  // Whether a parse may read the text of envelope column `name` (false: at
  // most its number, RecordEnvelope::timestamp_ms, as the row time).
  virtual bool ReadsEnvelopeColumnText(absl::string_view name) const {
    (void)name;
    return true;
  }
};

// What goes into a segment file's header besides the rows.
struct SegmentBuildInfo {
  std::string segment_id;
  std::string datasource;
  v1::Interval interval;
  std::string version;
  int32_t partition_num = 0;
  std::string sequence_name;
  v1::Provenance provenance;
  // The read-back check of the built file before it goes anywhere: every
  // dictionary, block and bitmap decoded, or (false) the checksum over
  // every byte, the header and the directory only, when the supervisor
  // decodes every pushed segment before committing it
  // (TaskSpec.supervisor_decodes_segments).
  bool read_back_decodes_blocks = true;
};

struct BuiltSegment {
  int64_t rows = 0;
  int64_t size_bytes = 0;
  // "<algorithm>:<hex>", as written in the file's trailer.
  std::string checksum;
};

// The rows of one (sequence, interval) held in memory.
class SegmentIndex {
 public:
  virtual ~SegmentIndex() = default;
  // Adds a row produced by this engine's parser (its time is in the index's
  // interval), read from Kafka record (partition, offset). OUT_OF_RANGE (and
  // nothing added) when the record cannot go into this segment (it would
  // bring a segment limit past its bound, e.g. the discovered dimensions):
  // the record is at fault, counted as a VALUE_TOO_LARGE parse error with
  // the status's message; the index takes the next row as usual.
  virtual absl::Status Add(const ParsedRow& row, int32_t partition, int64_t offset) = 0;
  // A hint a record ahead of Add(row): starts loading what that Add reads
  // first (and may keep in the row what it computed for it, which its
  // parser's next Parse drops). Add does the same with or without it; any
  // index of the engine may take the row after it. Default: nothing.
  virtual void Prefetch(const ParsedRow& row) { (void)row; }
  // A new empty index for the same segment, continuing what the segment's
  // indexes share (its discovered dimension names, so their bound holds for
  // the file the spills merge into). Null: the engine's NewIndex will do.
  virtual std::unique_ptr<SegmentIndex> Successor() const { return nullptr; }
  // Rows held (after rollup) and their estimated memory.
  virtual int64_t rows() const = 0;
  virtual int64_t estimated_bytes() const = 0;
  // Writes the rows held to a new file `name` (ending in ".spill") in
  // `directory`, durably (fsynced) when this returns, and empties the index.
  // Returns the number of rows the spill holds, as the spill itself says
  // (the task's one count of them). The index must not be empty.
  virtual absl::StatusOr<int64_t> Spill(const std::string& directory, const std::string& name) = 0;
  // The direct build: writes the segment file at `out_path` from `spills`
  // (the segment's earlier rows; may be empty) and the rows held, durably,
  // with the same read-back check as SegmentEngine::BuildSegment. The file
  // is byte for byte the one BuildSegment makes of the same rows spilled;
  // no spill of the rows held is written. The index is read, not changed.
  // The index must not be empty. Default: UNIMPLEMENTED (the task then
  // spills and builds from the spills).
  virtual absl::StatusOr<BuiltSegment> Build(const std::vector<std::string>& spills,
                                             const SegmentBuildInfo& info,
                                             const std::string& out_path) const {
    (void)spills;
    (void)info;
    (void)out_path;
    return absl::UnimplementedError("this engine has no direct build");
  }
};

class SegmentEngine {
 public:
  virtual ~SegmentEngine() = default;
  virtual std::unique_ptr<RowParser> NewParser() = 0;
  virtual std::unique_ptr<SegmentIndex> NewIndex(const v1::Interval& interval) = 0;
  // The index for the next rows of a segment restored from `spill_paths` (a
  // task restarted): it continues what the segment's indexes share, as
  // read back from the spills (the discovered dimension names, so that their
  // bound holds across restarts too). Errors of reading the spills (DATA_LOSS
  // for a damaged one). The default: NewIndex, for engines with nothing
  // shared.
  virtual absl::StatusOr<std::unique_ptr<SegmentIndex>> RestoreIndex(
      const v1::Interval& interval, const std::vector<std::string>& spill_paths) {
    (void)spill_paths;
    return NewIndex(interval);
  }
  // Merges `spills` (in any order; the result does not depend on it, nor on
  // how rows were split between spills) into a segment file at `out_path`,
  // durably. DATA_LOSS if a spill is damaged; INTERNAL if the file's
  // records of a partition (its provenance rows) are not info.provenance's
  // (both come from the same records: a bug, not bad data).
  virtual absl::StatusOr<BuiltSegment> BuildSegment(const std::vector<std::string>& spills,
                                                    const SegmentBuildInfo& info,
                                                    const std::string& out_path) = 0;
  // What a segment file made by SegmentIndex::Build holds (rows, size,
  // checksum), from its header and trailer, its records per partition
  // checked against info.provenance as BuildSegment does. With
  // `check`, first the read-back check again (checksum and structure; every
  // block too unless info.read_back_decodes_blocks is false), for a file
  // that outlived a restart; DATA_LOSS for a damaged file.
  virtual absl::StatusOr<BuiltSegment> DescribeBuilt(const std::string& path,
                                                     const SegmentBuildInfo& info, bool check) {
    (void)path;
    (void)info;
    (void)check;
    return absl::UnimplementedError("this engine has no direct build");
  }
};

}  // namespace sluice::task

#endif  // SLUICE_TASK_SEGMENT_SINK_H_
