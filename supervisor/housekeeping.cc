// Housekeeping: the supervisor's periodic chores (housekeeping.h).
#include "supervisor/housekeeping.h"

#include <algorithm>

#include <glog/logging.h>

#include "common/status_macros.h"
#include "supervisor/compaction/replaced_segment_files.h"

namespace sluice::supervisor {
namespace {

HandoffVerifierOptions HandoffOptions(const HousekeepingOptions& options) {
  HandoffVerifierOptions handoff;
  handoff.store = options.store;
  handoff.deep_storage = options.deep_storage;
  handoff.clock = options.clock;
  handoff.scratch_dir = options.scratch_dir;
  handoff.metrics = options.metrics;
  return handoff;
}

UsedSegmentVerifierOptions ReverifyOptions(const HousekeepingOptions& options) {
  UsedSegmentVerifierOptions reverify;
  reverify.store = options.store;
  reverify.deep_storage = options.deep_storage;
  reverify.clock = options.clock;
  reverify.scratch_dir = options.scratch_dir;
  reverify.max_segments_per_pass = options.reverify_max_segments;
  reverify.max_bytes_per_pass = options.reverify_max_bytes;
  reverify.metrics = options.metrics;
  return reverify;
}

}  // namespace

Housekeeping::Housekeeping(HousekeepingOptions options)
    : options_(std::move(options)),
      handoff_(HandoffOptions(options_)),
      reverify_(ReverifyOptions(options_)) {}

Housekeeping::~Housekeeping() { Stop(); }

void Housekeeping::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void Housekeeping::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Housekeeping::Loop() {
  absl::Time next_liveness = options_.clock->Now() + options_.heartbeat_interval;
  absl::Time next_handoff = options_.clock->Now() + options_.handoff_period;
  absl::Time next_cleanup = options_.clock->Now() + absl::Minutes(10);
  const bool reverify = options_.reverify_period > absl::ZeroDuration();
  absl::Time next_reverify = options_.clock->Now() + options_.reverify_period;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
      if (options_.clock->AwaitWithDeadline(&mu_, absl::Condition(&stopped),
                                            std::min(next_liveness, next_handoff))) {
        return;
      }
    }
    const absl::Time now = options_.clock->Now();
    if (now >= next_liveness) {
      CheckWorkers();
      next_liveness = now + options_.heartbeat_interval;
    }
    if (now >= next_handoff) options_.reports->ForgetOld();
    if (now >= next_cleanup) {
      CleanUp(now);
      next_cleanup = now + absl::Minutes(10);
    }
    if (now >= next_handoff && options_.deep_storage != nullptr) {
      if (auto pass = handoff_.VerifyOnce(); !pass.ok()) {
        LOG(WARNING) << "[supervisor] handoff verification: " << pass.status();
      }
      next_handoff = now + options_.handoff_period;
    }
    if (reverify && now >= next_reverify && options_.deep_storage != nullptr) {
      if (auto pass = reverify_.VerifyOnce(); !pass.ok()) {
        LOG(WARNING) << "[supervisor] used-segment verification: " << pass.status();
      }
      next_reverify = now + options_.reverify_period;
    }
  }
}

void Housekeeping::CleanUp(absl::Time now) {
  if (auto deleted = CleanUpPendingSegments(); !deleted.ok()) {
    LOG(WARNING) << "[supervisor] pending segment clean-up: " << deleted.status();
  } else if (*deleted > 0) {
    LOG(INFO) << "[supervisor] deleted " << *deleted << " pending segment allocation(s) of "
              << "sequences committed, or of groups ended, more than "
              << absl::FormatDuration(options_.pending_segment_retention) << " ago";
  }
  options_.iceberg->SweepOrphans(now);
  RemoveReplacedSegmentFilesOnce(now);
}

void Housekeeping::CheckWorkers() {
  if (options_.registry->CheckLiveness().empty()) return;
  for (auto& supervisor : options_.supervisors->All()) supervisor->RequestRun();
}

absl::StatusOr<int64_t> Housekeeping::CleanUpPendingSegments() {
  const int64_t cutoff =
      options_.clock->NowMs() - absl::ToInt64Milliseconds(options_.pending_segment_retention);
  int64_t deleted = 0;
  SLUICE_RETURN_IF_ERROR(options_.store->InTransaction([&](StoreTxn& txn) -> absl::Status {
    SLUICE_ASSIGN_OR_RETURN(deleted, txn.DeletePendingSegmentsOfCommittedSequences(cutoff));
    SLUICE_ASSIGN_OR_RETURN(int64_t ended, txn.DeletePendingSegmentsOfEndedGroups(cutoff));
    deleted += ended;
    return absl::OkStatus();
  }));
  return deleted;
}

int64_t Housekeeping::RemoveReplacedSegmentFilesOnce(absl::Time now) {
  if (options_.deep_storage == nullptr ||
      options_.replaced_segment_retention <= absl::ZeroDuration()) {
    return 0;
  }
  absl::StatusOr<int64_t> removed = RemoveReplacedSegmentFiles(
      *options_.store, *options_.deep_storage, options_.replaced_segment_retention, now);
  if (!removed.ok()) {
    LOG(WARNING) << "[supervisor] removal of replaced segments' files: " << removed.status();
    return 0;
  }
  if (*removed > 0) {
    LOG(INFO) << "[supervisor] removed the files of " << *removed
              << " segment(s) a compaction replaced more than "
              << absl::FormatDuration(options_.replaced_segment_retention) << " ago";
  }
  return *removed;
}

}  // namespace sluice::supervisor
