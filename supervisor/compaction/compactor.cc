#include "supervisor/compaction/compactor.h"

#include <glog/logging.h>

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/metrics/catalog.h"
#include "common/file_util.h"
#include "common/spec.h"
#include "common/status_macros.h"
#include "supervisor/compaction/compaction_planner.h"
#include "supervisor/compaction/segment_compaction.h"
#include "supervisor/compaction/uncommitted_outputs.h"

namespace sluice::supervisor {

absl::Mutex* Compactor::DatasourceLock(const std::string& datasource) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<absl::Mutex>& m = datasource_locks_[datasource];
  if (m == nullptr) m = std::make_unique<absl::Mutex>();
  return m.get();
}

absl::StatusOr<std::vector<v1::SegmentDescriptor>> Compactor::UsedSegments(
    const std::string& datasource) {
  std::vector<v1::SegmentDescriptor> segments;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(segments, txn.ListSegments(datasource, nullptr,
                                                       /*include_unused=*/false,
                                                       kMaxCompactionListedSegments));
    return absl::OkStatus();
  }));
  return segments;
}

absl::StatusOr<CompactionPlan> Compactor::Plan(const v1::SupervisorSpec& spec,
                                               const CompactDatasourceOptions& options,
                                               absl::Time now) {
  SLUICE_ASSIGN_OR_RETURN(CompactionPolicy policy, ParseCompactionPolicy(spec));
  PlanOptions plan_options;
  plan_options.interval = options.interval;
  plan_options.ignore_skip_offset = options.ignore_skip_offset;
  SLUICE_ASSIGN_OR_RETURN(std::vector<v1::SegmentDescriptor> segments,
                          UsedSegments(spec.datasource()));
  return PlanCompactions(segments, policy, now, plan_options);
}

absl::StatusOr<CompactionPassResult> Compactor::CompactDatasource(
    const v1::SupervisorSpec& spec, const CompactDatasourceOptions& options, absl::Time now) {
  SLUICE_ASSIGN_OR_RETURN(CompactionPolicy policy, ParseCompactionPolicy(spec));
  const std::string& datasource = spec.datasource();
  absl::MutexLock pass(DatasourceLock(datasource));
  PlanOptions plan_options;
  plan_options.interval = options.interval;
  plan_options.ignore_skip_offset = options.ignore_skip_offset;

  CompactionPassResult result;
  SLUICE_ASSIGN_OR_RETURN(std::vector<v1::SegmentDescriptor> segments, UsedSegments(datasource));
  CompactionPlan plan = PlanCompactions(segments, policy, now, plan_options);
  result.jobs_planned = static_cast<int32_t>(plan.jobs.size());
  options_.activity->SetPending(datasource, plan.pending);
  result.pending = plan.pending;

  std::set<std::pair<int64_t, int64_t>> lost;
  int run = 0;
  for (const CompactionJob& planned : plan.jobs) {
    if (options.max_jobs > 0 && run >= options.max_jobs) break;
    ++run;
    if (RunJob(spec, planned, now, &result) == JobOutcome::kInputLost) {
      lost.insert({planned.interval.start_ms(), planned.interval.end_ms()});
    }
  }
  if (lost.empty()) return result;

  // Plan the intervals that lost a race once more, from what the winner left.
  SLUICE_ASSIGN_OR_RETURN(segments, UsedSegments(datasource));
  plan = PlanCompactions(segments, policy, now, plan_options);
  options_.activity->SetPending(datasource, plan.pending);
  result.pending = plan.pending;
  for (const CompactionJob& planned : plan.jobs) {
    if (lost.count({planned.interval.start_ms(), planned.interval.end_ms()}) == 0) continue;
    RunJob(spec, planned, now, &result);
  }
  return result;
}

Compactor::JobOutcome Compactor::RunJob(const v1::SupervisorSpec& spec, const CompactionJob& job,
                                        absl::Time now, CompactionPassResult* result) {
  const std::string& datasource = spec.datasource();
  const v1::Interval& interval = job.interval;
  const absl::Time started = absl::Now();
  options_.activity->Started(datasource, interval);
  const std::string scratch = absl::StrCat(options_.scratch_dir, "/compaction_", datasource, "_",
                                           interval.start_ms(), "_", interval.end_ms());
  // A directory left by a crashed run holds nothing worth keeping.
  RemoveAll(scratch).IgnoreError();

  JobOutcome outcome = JobOutcome::kFailed;
  // What an earlier compaction of the interval pushed and never committed
  // (the supervisor died in between) goes first; failing to remove it does
  // not stop this one.
  const absl::StatusOr<int64_t> swept = RemoveUncommittedCompactionOutputs(
      *options_.store, *options_.deep_storage, datasource, interval);
  if (!swept.ok()) {
    LOG(WARNING) << "compaction of " << datasource << " [" << interval.start_ms() << ", "
                 << interval.end_ms() << "): uncommitted outputs of an earlier one not removed: "
                 << swept.status();
  }
  const absl::Status status = [&]() -> absl::Status {
    IntervalCompactionRequest request;
    request.datasource = datasource;
    request.interval = interval;
    request.groups = job.groups;
    request.version = CompactionVersion(now, job.interval_segments);
    SLUICE_ASSIGN_OR_RETURN(IntervalCompaction compaction,
                            CompactInterval(options_.deep_storage, scratch, request));
    SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.compaction_after_push"));
    int64_t snapshot_id = 0;
    SLUICE_ASSIGN_OR_RETURN(CompactionCommitResult committed,
                            Commit(spec, compaction, now, &snapshot_id));
    switch (committed.outcome) {
      case CompactionCommitOutcome::kCommitted:
        break;
      case CompactionCommitOutcome::kInputLost:
        LOG(INFO) << "compaction of " << datasource << " [" << interval.start_ms() << ", "
                  << interval.end_ms() << ") lost a race: " << committed.detail;
        DeleteUncommittedOutputs(compaction);
        outcome = JobOutcome::kInputLost;
        return absl::OkStatus();
      case CompactionCommitOutcome::kTableMoved:
        DeleteUncommittedOutputs(compaction);
        return absl::AbortedError(absl::StrCat(
            "the Iceberg table moved at each of ", kMaxCompactionCommitAttempts,
            " commit attempts: ", committed.detail));
    }
    v1::CompactionRecord record;
    *record.mutable_interval() = interval;
    record.set_input_segments(static_cast<int32_t>(compaction.replaced.size()));
    record.set_output_segments(static_cast<int32_t>(compaction.outputs.size()));
    int64_t rows = 0;
    for (const v1::SegmentDescriptor& s : compaction.replaced) rows += s.num_rows();
    record.set_rows(rows);
    const absl::Time done = absl::Now();
    record.set_committed_at_ms(absl::ToUnixMillis(done));
    record.set_duration_ms(absl::ToInt64Milliseconds(done - started));
    record.set_snapshot_id(snapshot_id);
    options_.activity->Committed(datasource, record,
                                 static_cast<int64_t>(compaction.replaced.size()));
    if (options_.metrics != nullptr) {
      options_.metrics
          ->GetHistogram(metrics::kSupervisorCompactionSeconds, {{"datasource", datasource}})
          ->ObserveDuration(done - started);
      options_.metrics
          ->GetCounter(metrics::kSupervisorCompactedRows, {{"datasource", datasource}})
          ->Increment(static_cast<uint64_t>(rows));
    }
    result->committed.push_back(record);
    LOG(INFO) << "compacted " << compaction.replaced.size() << " segments of " << datasource
              << " [" << interval.start_ms() << ", " << interval.end_ms() << ") into "
              << compaction.outputs.size();
    outcome = JobOutcome::kCommitted;
    return absl::OkStatus();
  }();
  RemoveAll(scratch).IgnoreError();
  if (outcome == JobOutcome::kInputLost) {
    ++result->conflicts;
    options_.activity->Conflict(datasource);
  }
  if (!status.ok()) {
    const absl::Status annotated = Annotate(
        status, absl::StrCat("compacting ", datasource, " [", interval.start_ms(), ", ",
                             interval.end_ms(), ")"));
    LOG(WARNING) << annotated;
    options_.activity->Failed(datasource, annotated, absl::Now());
    result->errors.push_back(annotated.ToString());
    outcome = JobOutcome::kFailed;
  }
  options_.activity->Finished(datasource);
  if (options_.metrics != nullptr) {
    const char* name = outcome == JobOutcome::kCommitted  ? "committed"
                       : outcome == JobOutcome::kInputLost ? "conflict"
                                                           : "failed";
    options_.metrics
        ->GetCounter(metrics::kSupervisorCompactions,
                     {{"datasource", datasource}, {"outcome", name}})
        ->Increment();
  }
  return outcome;
}

absl::StatusOr<CompactionCommitResult> Compactor::Commit(const v1::SupervisorSpec& spec,
                                                         const IntervalCompaction& compaction,
                                                         absl::Time now, int64_t* snapshot_id) {
  if (!spec.has_iceberg_table()) {
    SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.compaction_before_commit"));
    if (options_.before_commit) options_.before_commit(compaction);
    return CommitCompaction(options_.store, compaction, std::nullopt, now);
  }
  if (!options_.iceberg_stager) {
    return absl::FailedPreconditionError(
        "the datasource has an Iceberg table and this supervisor cannot stage its replace");
  }
  const std::string& table_namespace = spec.iceberg_table().table_namespace();
  const std::string& table_name = spec.iceberg_table().table_name();
  CompactionCommitResult committed;
  IcebergReplaceReuse reuse;
  for (int attempt = 1; attempt <= kMaxCompactionCommitAttempts; ++attempt) {
    // The first attempt holds the table as a publish does; once a publish
    // won, the next attempts hold it alone, so that publishes wait for one
    // staging and commit instead of winning every attempt. Those stagings
    // reuse the first one's data files: the publishes wait for manifests.
    IcebergTableLocks::Shared shared;
    IcebergTableLocks::Exclusive exclusive;
    if (options_.table_locks != nullptr) {
      const std::string key = absl::StrCat("iceberg/", table_namespace, "/", table_name);
      if (attempt == 1) {
        shared = options_.table_locks->Publishing(key);
      } else {
        exclusive = options_.table_locks->Committing(key);
      }
    }
    // Read once held: the publishes that held the table before it have
    // committed, so a held attempt stages on the document it will swap.
    std::optional<std::string> base;
    SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
      SLUICE_ASSIGN_OR_RETURN(base, txn.IcebergMetadataLocation(table_namespace, table_name));
      return absl::OkStatus();
    }));
    SLUICE_ASSIGN_OR_RETURN(std::optional<IcebergSwap> swap,
                            options_.iceberg_stager(compaction, base, &reuse));
    SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("supervisor.compaction_before_commit"));
    if (options_.before_commit) options_.before_commit(compaction);
    SLUICE_ASSIGN_OR_RETURN(committed, CommitCompaction(options_.store, compaction, swap, now));
    if (committed.outcome != CompactionCommitOutcome::kTableMoved) {
      if (committed.outcome == CompactionCommitOutcome::kCommitted && swap.has_value()) {
        *snapshot_id = swap->snapshot_id;
      }
      return committed;
    }
    LOG(INFO) << "compaction of " << compaction.datasource << ": " << committed.detail
              << "; staging again on top of it (attempt " << attempt << "; data files written "
              << reuse.data_file_writes << " time(s), " << reuse.table_file_reads
              << " table files read)";
  }
  return committed;
}

void Compactor::DeleteUncommittedOutputs(const IntervalCompaction& compaction) {
  for (const CompactedSegment& out : compaction.outputs) {
    bool stored = true;
    const absl::Status checked =
        options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
          SLUICE_ASSIGN_OR_RETURN(stored, txn.SegmentExists(out.descriptor.id()));
          return absl::OkStatus();
        });
    if (!checked.ok() || stored) continue;
    const absl::Status deleted = options_.deep_storage->Delete(out.descriptor.path());
    if (!deleted.ok()) {
      LOG(WARNING) << "could not delete the uncommitted compacted copy " << out.descriptor.path()
                   << ": " << deleted;
    }
  }
}

}  // namespace sluice::supervisor
