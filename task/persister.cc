#include "task/persister.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "common/fault_injection.h"
#include "common/offsets.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "task/task_files.h"

namespace sluice::task {

Persister::Persister(PersisterOptions options) : options_(std::move(options)) {}

Persister::~Persister() { Stop(); }

absl::StatusOr<std::optional<state::RestorePoint>> Persister::LoadRestorePoint(
    const std::string& path) {
  state::RestorePoint point;
  const absl::Status loaded = LoadProtoJson(path, &point);
  if (loaded.code() == absl::StatusCode::kNotFound) return std::nullopt;
  SLUICE_RETURN_IF_ERROR(loaded);
  return point;
}

void Persister::Start() {
  {
    absl::MutexLock lock(&mu_);
    exit_ = false;
  }
  thread_ = std::thread([this] { Run(); });
}

void Persister::Submit(PersistJob job) {
  absl::MutexLock lock(&mu_);
  job_ = std::move(job);
  running_ = true;
}

absl::Status Persister::WaitPersisted() {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !running_; };
  mu_.Await(absl::Condition(&idle));
  return error_;
}

absl::Status Persister::AwaitPersisted(int64_t persists, const std::function<bool()>& stopping) {
  auto done = [this, persists]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return persists_written_.load() >= persists || !error_.ok();
  };
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&done), absl::Milliseconds(50))) return error_;
    }
    // Outside the lock: `stopping` takes the caller's own.
    if (stopping()) return absl::CancelledError("stopped while waiting for a persist");
  }
}

absl::Status Persister::failure() const {
  absl::MutexLock lock(&mu_);
  return error_;
}

void Persister::Stop() {
  {
    absl::MutexLock lock(&mu_);
    exit_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Persister::Run() {
  while (true) {
    PersistJob job;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return job_.has_value() || exit_;
      };
      mu_.Await(absl::Condition(&ready));
      if (!job_.has_value()) return;
      job = std::move(*job_);
      job_.reset();
    }
    const absl::Status written = Write(job);
    job.spills.clear();  // the indexes' memory goes before the next persist starts
    absl::MutexLock lock(&mu_);
    if (!written.ok() && error_.ok()) error_ = written;
    running_ = false;
  }
}

bool Persister::exiting() const {
  absl::MutexLock lock(&mu_);
  return exit_;
}

absl::Status Persister::Write(PersistJob& job) {
  for (PersistBuild& build : job.builds) {
    BuildSlot slot(options_.build_slots, [this] { return exiting(); });
    if (!slot.held()) {
      return absl::CancelledError(absl::StrCat("stopping before building ", build.info.segment_id));
    }
    SLUICE_RETURN_IF_ERROR(build.index->Build(build.spills, build.info, build.path).status());
    build.index.reset();
  }
  for (auto& [path, index] : job.spills) {
    SLUICE_RETURN_IF_ERROR(index->Spill(path).status());
    index.reset();
  }
  // Spills and built files written, restore point not yet: a crash here
  // leaves files no restore point names (the restart deletes them and
  // re-reads).
  SLUICE_RETURN_IF_ERROR(SLUICE_FAULT_POINT("task.persist.after_spills"));
  SLUICE_RETURN_IF_ERROR(SaveProtoJson(options_.restore_point_path, job.point));
  persists_written_.store(job.point.counters().persists());
  options_.metrics.persists->Increment();
  options_.metrics.persist_seconds->ObserveDuration(absl::Now() - job.started);
  VLOG(1) << options_.log_prefix << " persisted at "
          << FormatOffsets(FromProto(job.point.current_offsets()));
  return SLUICE_FAULT_POINT("task.after_persist");
}

}  // namespace sluice::task
