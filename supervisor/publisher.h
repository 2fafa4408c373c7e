// The exactly-once publish transaction (docs/protocol.md "Publishing"): one
// SQLite transaction that compares the sequence's start offsets with the
// stored offsets, inserts its segments and a commit-log row, and advances the
// stored offsets to the sequence's end.
#ifndef SLUICE_SUPERVISOR_PUBLISHER_H_
#define SLUICE_SUPERVISOR_PUBLISHER_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/deep_storage.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/clock.h"
#include "common/metrics/registry.h"
#include "supervisor/iceberg/iceberg_commit.h"
#include "supervisor/iceberg/iceberg_table_activity.h"
#include "supervisor/iceberg/iceberg_table_locks.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

// A replica's publish of a sequence already committed by another replica
// whose segment (same id) differs from the committed one: replicas read the
// same offsets with the same spec and are meant to build byte-identical
// files, so this is a bug or corruption somewhere (an alert). Both files
// stay: the committed one is used, the replica's is kept at its own path
// (the task does not delete a copy whose checksum differs).
struct ReplicaDivergence {
  std::string datasource;
  std::string sequence_name;
  std::string segment_id;
  std::string committed_task_id;
  std::string committed_path;
  std::string committed_checksum;
  int64_t committed_rows = 0;
  int64_t committed_bytes = 0;
  std::string replica_task_id;
  std::string replica_path;
  std::string replica_checksum;
  int64_t replica_rows = 0;
  int64_t replica_bytes = 0;

  // One line naming both files and what differs.
  std::string Describe() const;
};

struct PublisherOptions {
  MetadataStore* store = nullptr;
  // Segment files are verified before the transaction (segment_copy_check.h:
  // under the datasource's prefix, size, structure, CRC, checksum, rows, id,
  // interval, provenance), and the SHA-256 of the bytes checked is recorded
  // with each segment; null skips the file check (not the provenance check
  // against the sequence's offsets) and records no digest.
  DeepStorage* deep_storage = nullptr;
  Clock* clock = Clock::Real();
  // Where copies of remote segment files are downloaded to be verified.
  std::string scratch_dir = "/tmp";
  // Called (on the publishing RPC's thread) for each diverging segment of a
  // replica's late publish; null: logged only.
  std::function<void(const ReplicaDivergence&)> on_replica_divergence;
  // Tests: called after an Iceberg snapshot is staged, before the
  // transaction that swaps it in (another writer moving the table then).
  std::function<void()> after_iceberg_stage;
  // Where the outcome of each publish to an Iceberg table is recorded for
  // the status; null: nowhere.
  IcebergTableActivity* iceberg_activity = nullptr;
  // Held shared by each publish to an Iceberg table, from before it stages
  // until its commit ended, so the orphan sweeper of this process never
  // removes what a publish is staging (iceberg_table_locks.h); null: none.
  IcebergTableLocks* iceberg_table_locks = nullptr;
  // The publish transaction's and the Iceberg staging's latencies
  // (common/metrics/catalog.h); null: not recorded.
  metrics::Registry* metrics = nullptr;
};

class Publisher {
 public:
  explicit Publisher(PublisherOptions options) : options_(options) {}

  // Publishes one closed sequence. Errors, by what the task should do:
  // - INVALID_ARGUMENT: a malformed request (never retry);
  // - NOT_FOUND: unknown datasource;
  // - ABORTED: the start is behind the stored offsets, or the sequence is
  //   already committed (a replica or an earlier attempt won: check
  //   GetPublishedSegments); the request's segments are then compared with
  //   the committed ones of the same ids (checksum, rows, bytes) and each
  //   difference is reported as a ReplicaDivergence;
  // - UNAVAILABLE: the start is ahead (an earlier group has not published;
  //   retry), or the store is busy;
  // - FAILED_PRECONDITION: a segment file is missing or is not what its
  //   descriptor says, a segment's provenance is not this sequence's offsets
  //   or topic, a segment id was not allocated for this sequence, or a
  //   partition has no stored offset (the datasource was reset);
  // - PERMISSION_DENIED: with `base_sequence_name`, a range other than the
  //   one recorded for the sequence.
  // When the datasource's spec names an Iceberg table (iceberg_commit.h), the
  // same transaction also swaps the table's catalog pointer to the
  // sequence's snapshot, staged before it; when another writer moved the
  // table meanwhile the snapshot is staged again on top of it, up to
  // kIcebergCommitAttempts times, then UNAVAILABLE naming the table (retry;
  // nothing was committed). FAILED_PRECONDITION when the table cannot take
  // the rows (e.g. a column changed type).
  // With `base_sequence_name` (the publishing task's group), the
  // transaction also checks the sequence's range against the group's
  // recorded checkpoints (task_claims.h CheckSequenceRangeIn), atomically
  // with the commit.
  absl::StatusOr<v1::PublishSegmentsResponse> Publish(const v1::PublishSegmentsRequest& request,
                                                      const std::string& base_sequence_name = "");

  // Which of the ids are published, and whether the sequence is committed.
  absl::StatusOr<v1::GetPublishedSegmentsResponse> GetPublished(
      const v1::GetPublishedSegmentsRequest& request);

 private:
  // A datasource's Iceberg table and the snapshot staged for this publish.
  struct IcebergPlan {
    IcebergTarget target;
    StagedIcebergCommit staged;
    int64_t staging_ms = 0;  // converting and writing the files
    // The table held shared until the plan is dropped (after the commit).
    IcebergTableLocks::Shared publishing;
  };
  // The commit loop of Publish: `iceberg` ends holding the last plan staged
  // (nullopt: none), `names_table` whether the datasource's spec names a
  // table.
  absl::StatusOr<v1::PublishSegmentsResponse> CommitWithIceberg(
      const v1::PublishSegmentsRequest& request, const std::string& base_sequence_name,
      const std::map<std::string, std::string>& digests, std::optional<IcebergPlan>& iceberg, bool& names_table);
  // Stages the sequence's Iceberg snapshot when the datasource's spec names
  // a table (nullopt otherwise, or when the sequence is committed already).
  absl::StatusOr<std::optional<IcebergPlan>> StageIceberg(
      const v1::PublishSegmentsRequest& request);
  // The publish transaction. When the spec names an Iceberg table it also
  // swaps the table's catalog pointer to `iceberg`'s staged snapshot;
  // without one (or one of another table) it commits nothing and asks for
  // it (IcebergRetry::kStage), and when the table moved it commits nothing
  // either (kSwapMissed).
  absl::StatusOr<v1::PublishSegmentsResponse> Commit(
      const v1::PublishSegmentsRequest& request, const std::string& base_sequence_name,
      const std::map<std::string, std::string>& digests, const IcebergPlan* iceberg);
  // Why a Commit asks for the snapshot to be staged (again), if it does.
  enum class IcebergRetry { kNone, kStage, kSwapMissed };
  static IcebergRetry IcebergRetryOf(const absl::Status& status);

  // Checks the request's files; on OK, the SHA-256 of each file checked, by
  // segment id (none without deep storage), to record with the commit.
  absl::StatusOr<std::map<std::string, std::string>> CheckFiles(
      const v1::PublishSegmentsRequest& request);
  // The request's segments that differ from the committed segments of the
  // same id (inside the publish's transaction).
  absl::StatusOr<std::vector<ReplicaDivergence>> Diverging(
      StoreTxn& txn, const v1::PublishSegmentsRequest& request,
      const v1::CommittedSequence& committed);

  const PublisherOptions options_;
};

// INVALID_ARGUMENT unless the request is well formed (exposed for tests).
absl::Status ValidatePublishRequest(const v1::PublishSegmentsRequest& request);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_PUBLISHER_H_
