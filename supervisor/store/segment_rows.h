// Published segments: insertion, the compaction's replacement of used
// segments and the removal of replaced files, listings, and the handoff
// state (verification, re-verification, loads) (tables segments,
// segment_replacements). Typed statements over one open transaction;
// StoreTxn (metadata_store.h) offers them.
#ifndef SLUICE_SUPERVISOR_STORE_SEGMENT_ROWS_H_
#define SLUICE_SUPERVISOR_STORE_SEGMENT_ROWS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sluice/v1/common.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/store/sql.h"

namespace sluice::supervisor {

// A used segment whose handoff is not complete.
struct HandoffCandidate {
  std::string id;
  std::string datasource;
  std::string path;
  int64_t size_bytes = 0;
  int64_t num_rows = 0;
  std::string checksum;
  // "sha256:<64 hex>" of the file the publisher checked before the commit;
  // empty when none was recorded (schema_version < 7, no deep storage).
  std::string sha256;
  v1::HandoffState state = v1::HANDOFF_STATE_PENDING;
  int64_t verified_at_ms = 0;
  int64_t loaded_at_ms = 0;
  int64_t created_at_ms = 0;  // when it was committed
};

class SegmentRows {
 public:
  explicit SegmentRows(SqlConnection* db) : db_(db) {}

  absl::StatusOr<bool> SegmentExists(const std::string& id);
  // `sha256`: the digest the supervisor computed of the file ("sha256:..."),
  // empty to record none (NULL).
  absl::Status InsertSegment(const v1::SegmentDescriptor& segment, const std::string& sha256,
                             int64_t commit_id, const std::string& task_id, int64_t now_ms);
  // Replaces used segments of `datasource` by `segments` (e.g. the
  // compaction of them), in this transaction: every replaced segment must
  // still be used, else ABORTED naming the first that is not (replaced or
  // dropped since it was read) and nothing changes; NOT_FOUND for an id
  // that is no segment of the datasource; INVALID_ARGUMENT unless the
  // replaced and new segments all cover one interval of the datasource (or
  // for empty or repeated ids); ALREADY_EXISTS for a new id already stored.
  // The replaced ones become unused (segment_replacements records which
  // replaced which); the new ones are inserted used, handoff pending, with
  // no sequence name (they hold several sequences' records) and filed under
  // the latest commit among the replaced ones' (a commit record still lists
  // the segments its sequence published). Segments of the interval not
  // named stay used.
  absl::Status ReplaceSegments(const std::string& datasource,
                               const std::vector<std::string>& replaced_ids,
                               const std::vector<v1::SegmentDescriptor>& segments,
                               const std::string& task_id, int64_t now_ms);
  // Segments a compaction replaced at or before `replaced_before_ms`, no
  // longer used, whose deep-storage file was not removed yet: (id, path),
  // the longest replaced first, at most `limit`.
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReplacedSegmentFilesToRemove(
      int64_t replaced_before_ms, int limit);
  // Records that the file of the replaced segment `id` is gone.
  absl::Status SetSegmentFileRemoved(const std::string& id, int64_t now_ms);
  // Ids of the segments that replaced `id` (empty: not replaced).
  absl::StatusOr<std::vector<std::string>> ReplacedBy(const std::string& id);
  // The subset of `ids` that are published and used.
  absl::StatusOr<std::vector<std::string>> UsedSegmentIds(const std::string& datasource,
                                                          const std::vector<std::string>& ids);
  absl::StatusOr<std::vector<v1::SegmentDescriptor>> ListSegments(const std::string& datasource,
                                                                  const v1::Interval* overlapping,
                                                                  bool include_unused, int limit);
  absl::StatusOr<int64_t> CountSegments(const std::string& datasource);

  // ---- handoff ----
  // Used segments not handed off yet (pending or failed), oldest first.
  absl::StatusOr<std::vector<HandoffCandidate>> HandoffCandidates(int limit);
  absl::Status SetHandoff(const std::string& id, v1::HandoffState state, int64_t verified_at_ms,
                          int64_t handed_off_at_ms);
  // Used, handed-off segments, the longest unverified first: what the
  // periodic re-verification of deep storage checks next.
  absl::StatusOr<std::vector<HandoffCandidate>> SegmentsToReverify(int limit);
  // Records a successful re-verification (the handoff state stays).
  absl::Status SetVerifiedAt(const std::string& id, int64_t verified_at_ms);
  // Used segments of `datasource` whose deep-storage copy failed verification.
  absl::StatusOr<int64_t> CountFailedSegments(const std::string& datasource);
  // Marks published segments as loaded; NOT_FOUND names the first unknown id.
  absl::StatusOr<int> MarkLoaded(const std::string& datasource, const std::vector<std::string>& ids,
                                 const std::string& loader, int64_t now_ms);
  // Handoff state of each of `ids` that is a published segment.
  absl::StatusOr<std::map<std::string, v1::HandoffState>> HandoffStates(
      const std::string& datasource, const std::vector<std::string>& ids);

 private:
  SqlConnection* db_;
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_SEGMENT_ROWS_H_
