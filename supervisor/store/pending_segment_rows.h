// Segment allocation: the pending segments each sequence was given per
// interval, the one version of an interval, and the housekeeping that
// deletes allocations no replica asks for any more (tables pending_segments,
// interval_versions). Typed statements over one open transaction; StoreTxn
// (metadata_store.h) offers them.
#ifndef SLUICE_SUPERVISOR_STORE_PENDING_SEGMENT_ROWS_H_
#define SLUICE_SUPERVISOR_STORE_PENDING_SEGMENT_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

struct PendingSegment {
  std::string id;
  std::string datasource;
  std::string sequence_name;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::string version;
  int32_t partition_num = 0;
  std::string task_id;
};

class PendingSegmentRows {
 public:
  explicit PendingSegmentRows(SqlConnection* db) : db_(db) {}

  // ---- allocation ----
  absl::StatusOr<std::optional<PendingSegment>> FindPendingSegment(const std::string& datasource,
                                                                   const std::string& sequence_name,
                                                                   int64_t start_ms,
                                                                   int64_t end_ms);
  absl::StatusOr<std::optional<PendingSegment>> PendingSegmentById(const std::string& id);
  // How many allocations the sequence holds (one per interval).
  absl::StatusOr<int64_t> CountPendingSegments(const std::string& datasource,
                                               const std::string& sequence_name);
  absl::StatusOr<std::optional<std::string>> IntervalVersion(const std::string& datasource,
                                                             int64_t start_ms, int64_t end_ms);
  absl::Status InsertIntervalVersion(const std::string& datasource, int64_t start_ms,
                                     int64_t end_ms, const std::string& version, int64_t now_ms);
  // 1 + the largest partition number allocated or published in the interval
  // with that version (0 for the first).
  absl::StatusOr<int32_t> NextPartitionNum(const std::string& datasource, int64_t start_ms,
                                           int64_t end_ms, const std::string& version);
  absl::Status InsertPendingSegment(const PendingSegment& segment, int64_t now_ms);
  // Deletes the allocations of sequences committed before
  // `committed_before_ms` (their segments are in the segments table; no live
  // replica asks for them any more). Returns how many rows went.
  absl::StatusOr<int64_t> DeletePendingSegmentsOfCommittedSequences(int64_t committed_before_ms);
  // Deletes the allocations, committed or not, made by tasks of groups that
  // ended (DONE or ABANDONED) before `ended_before_ms`: no replica of the
  // group asks for them any more, and a sequence that never published must
  // not keep its allocations forever. A group started again under the same
  // base sequence name is live again and keeps them. Returns how many rows
  // went.
  absl::StatusOr<int64_t> DeletePendingSegmentsOfEndedGroups(int64_t ended_before_ms);

 private:
  SqlConnection* db_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_PENDING_SEGMENT_ROWS_H_
