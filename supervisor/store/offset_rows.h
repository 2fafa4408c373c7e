// The commit metadata of a datasource and its commit log: the topic, the
// committed and initial offsets, offset resets, and the committed sequences
// with the segments each published (tables datasources' commit_topic,
// committed_offsets, initial_offsets, offset_resets, committed_sequences,
// committed_sequence_partitions). Typed statements over one open
// transaction; StoreTxn (metadata_store.h) offers them.
#ifndef SLUICE_SUPERVISOR_STORE_OFFSET_ROWS_H_
#define SLUICE_SUPERVISOR_STORE_OFFSET_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "common/offsets.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

class OffsetRows {
 public:
  explicit OffsetRows(SqlConnection* db) : db_(db) {}

  // ---- commit metadata ----
  absl::StatusOr<std::optional<std::string>> CommitTopic(const std::string& datasource);
  absl::StatusOr<OffsetMap> CommittedOffsets(const std::string& datasource);
  // Upserts the given partitions (others keep theirs) and sets the topic.
  absl::Status SetCommittedOffsets(const std::string& datasource, const std::string& topic,
                                   const OffsetMap& offsets, int64_t now_ms);
  // Records `offsets` as committed (and initial) for every partition that has
  // no committed offset yet; returns the partitions recorded. The first
  // publish of a partition is then compared with them. FAILED_PRECONDITION if
  // the stored offsets belong to another topic.
  absl::StatusOr<OffsetMap> RecordInitialOffsets(const std::string& datasource,
                                                 const std::string& topic, const OffsetMap& offsets,
                                                 int64_t now_ms);
  absl::StatusOr<OffsetMap> InitialOffsets(const std::string& datasource);
  // Deletes the committed offsets of `partitions` (all when empty); the
  // topic is forgotten once no partition is left.
  absl::Status DeleteCommittedOffsets(const std::string& datasource,
                                      const std::vector<int32_t>& partitions);
  absl::Status RecordOffsetReset(const std::string& datasource, int32_t partition,
                                 std::optional<int64_t> old_offset,
                                 std::optional<int64_t> new_offset, const std::string& reason,
                                 int64_t now_ms);
  // Every offset reset of the datasource, oldest first.
  absl::StatusOr<std::vector<v1::OffsetReset>> OffsetResets(const std::string& datasource);
  // Partition -> number of offset resets recorded (partitions never reset
  // are absent).
  absl::StatusOr<OffsetMap> OffsetResetCounts(const std::string& datasource);

  // ---- commit log and segments ----
  absl::StatusOr<std::optional<v1::CommittedSequence>> CommittedSequence(
      const std::string& datasource, const std::string& sequence_name);
  // Returns the commit id.
  absl::StatusOr<int64_t> InsertCommittedSequence(const std::string& datasource,
                                                  const std::string& sequence_name,
                                                  const std::string& task_id,
                                                  const OffsetMap& start, const OffsetMap& end,
                                                  const std::vector<v1::PartitionRange>& stats,
                                                  int64_t now_ms);
  // Oldest first, with segment ids.
  absl::StatusOr<std::vector<v1::CommittedSequence>> CommitLog(const std::string& datasource);

 private:
  SqlConnection* db_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_OFFSET_ROWS_H_
