// One compaction pass over a datasource, in the supervisor: list its used
// segments, plan (compaction_planner.h), and for each job compact the
// interval (segment_compaction.h), stage the Iceberg replace when the spec
// has a table (an injected stager, staged on the table's current metadata),
// and commit both in one transaction (compaction_commit.h). A commit that
// finds the table moved stages again on top of the appends that won and
// retries (up to kMaxCompactionCommitAttempts in all): the data files are
// written once (IcebergReplaceReuse), so a new attempt only rewrites the
// manifests that hold the replaced files. It holds the table alone from the
// second attempt on (IcebergTableLocks::Committing: this process's publishes
// wait for that short staging rather than win again); one that lost an input (a
// concurrent replacement) counts a conflict and the pass plans those
// intervals once more. Everything is recorded in a CompactionActivity.
//
// Passes of one datasource run one at a time (a per-datasource lock);
// a job's scratch directory is removed when the job ends, whatever its
// outcome. Fault points: "supervisor.compaction_after_push" (outputs
// pushed, nothing committed) and "supervisor.compaction_before_commit".
#ifndef SLUICE_SUPERVISOR_COMPACTION_COMPACTOR_H_
#define SLUICE_SUPERVISOR_COMPACTION_COMPACTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/deep_storage.h"
#include "sluice/v1/spec.pb.h"
#include "sluice/v1/supervisor_service.pb.h"
#include "supervisor/compaction/compacted_segment.h"
#include "supervisor/compaction/compaction_activity.h"
#include "supervisor/compaction/compaction_commit.h"
#include "supervisor/compaction/compaction_planner.h"
#include "supervisor/compaction/iceberg_replace.h"
#include "common/metrics/registry.h"
#include "supervisor/iceberg/iceberg_table_locks.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

// Commit attempts of one job while the Iceberg table keeps moving.
inline constexpr int kMaxCompactionCommitAttempts = 5;
// Used segments a pass lists at most per datasource (the oldest intervals
// are planned from what was listed).
inline constexpr int kMaxCompactionListedSegments = 100000;

// Stages the Iceberg replace of a compaction on the table's metadata at
// `base` (nullopt: the catalog has no table): the swap to commit with it;
// nullopt when the table has nothing to replace (no table yet, or the
// replaced segments have no files in it): the native side commits alone.
// `reuse` is the same for every attempt of one compaction: what an attempt
// wrote and read that the next can use (iceberg_replace.h).
using IcebergReplaceStager = std::function<absl::StatusOr<std::optional<IcebergSwap>>(
    const IntervalCompaction& compaction, const std::optional<std::string>& base,
    IcebergReplaceReuse* reuse)>;

struct CompactorOptions {
  MetadataStore* store = nullptr;
  DeepStorage* deep_storage = nullptr;
  // Jobs work in subdirectories of it (created when missing).
  std::string scratch_dir;
  CompactionActivity* activity = nullptr;
  // Required for a spec with an Iceberg table (FAILED_PRECONDITION without).
  IcebergReplaceStager iceberg_stager;
  // Shared with the publisher and the orphan sweeper of the process: the
  // table is held from staging to the end of the commit, so the sweeper
  // never removes a staged file under it. Null: not held.
  IcebergTableLocks* table_locks = nullptr;
  // Where the compaction metrics go (common/metrics/catalog.h); null: none.
  metrics::Registry* metrics = nullptr;
  // Tests: runs before each commit attempt, after the outputs are pushed
  // (and the Iceberg replace staged).
  std::function<void(const IntervalCompaction&)> before_commit;
};

struct CompactDatasourceOptions {
  // Only segment intervals overlapping this one; nullopt: all.
  std::optional<v1::Interval> interval;
  // Compact intervals within skipOffsetFromLatest too (CompactDataSource).
  bool ignore_skip_offset = false;
  // Jobs run at most in this pass (the oldest first); 0: all.
  int max_jobs = 0;
};

struct CompactionPassResult {
  int32_t jobs_planned = 0;
  std::vector<v1::CompactionRecord> committed;
  int64_t conflicts = 0;
  // The jobs that failed, each with its error (also the activity's last error).
  std::vector<std::string> errors;
  // The latest plan's pending entries (the jobs as "queued").
  std::vector<v1::PendingCompaction> pending;
};

class Compactor {
 public:
  explicit Compactor(CompactorOptions options) : options_(std::move(options)) {}

  // The plan a pass would follow now, without running it (CompactDataSource
  // answers with it).
  absl::StatusOr<CompactionPlan> Plan(const v1::SupervisorSpec& spec,
                                      const CompactDatasourceOptions& options, absl::Time now);

  // One pass. Errors: the policy (INVALID_ARGUMENT) and the listing of
  // segments; a job's failure is in the result, not the status.
  absl::StatusOr<CompactionPassResult> CompactDatasource(const v1::SupervisorSpec& spec,
                                                         const CompactDatasourceOptions& options,
                                                         absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class JobOutcome { kCommitted, kInputLost, kFailed };

  absl::Mutex* DatasourceLock(const std::string& datasource) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<v1::SegmentDescriptor>> UsedSegments(const std::string& datasource);
  JobOutcome RunJob(const v1::SupervisorSpec& spec, const CompactionJob& job, absl::Time now,
                    CompactionPassResult* result);
  absl::StatusOr<CompactionCommitResult> Commit(const v1::SupervisorSpec& spec,
                                                const IntervalCompaction& compaction,
                                                absl::Time now, int64_t* snapshot_id);
  // Deletes the pushed outputs of a compaction that was not committed,
  // unless a segment of that id is in the store (a copy a committed
  // compaction shares).
  void DeleteUncommittedOutputs(const IntervalCompaction& compaction);

  const CompactorOptions options_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<absl::Mutex>> datasource_locks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_COMPACTION_COMPACTOR_H_
